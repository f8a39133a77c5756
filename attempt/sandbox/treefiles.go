package sandbox

// TreeFile is a file flakegate adds to one attempt's own tree (the
// known answers of a batch, batch/known.go): the attempt sees it as a
// file of its tree like the others, and it never reaches the worktree,
// the repository or another attempt. Where the helper mounts the tree
// (an overlay as root or in the helper's user namespace, or a fresh
// copy) it writes the file into the attempt's upper layer or copy after
// mounting it; where bwrap binds the worktree itself, flakegate writes
// the file there before the attempt and removes it after.
type TreeFile struct {
	// Rel is the file's slash path inside the tree. Its folder must be
	// a folder of the tree, reached without a symbolic link; the file
	// must not exist.
	Rel string `json:"rel"`
	// Data is its content.
	Data []byte `json:"data"`
	// Like names a file of the tree whose owner, mode and times the new
	// file takes ("" keeps the writer's, mode 0644), so that it reads
	// like its neighbours.
	Like string `json:"like,omitempty"`
}
