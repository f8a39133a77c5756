package sandbox

// helperSpec is what the helper does.
type helperSpec struct {
	Layer   string `json:"layer,omitempty"` // the attempt's layer folder; "" mounts nothing
	Tree    string `json:"tree,omitempty"`
	Overlay bool   `json:"overlay,omitempty"`
	// Userns: flakegate is not root; the helper runs in a user and mount
	// namespace of its own (helperCommand), mounts the layer's tmpfs and
	// the tree's overlay there (overlayfs with userxattr, Linux 5.11+),
	// or binds the tree (a fresh copy), and builds the root around it as
	// root's helper does.
	Userns bool  `json:"userns,omitempty"`
	UID    int   `json:"uid"` // the identity bwrap runs as; -1 keeps flakegate's
	GID    int   `json:"gid"`
	Disk   int64 `json:"disk,omitempty"`
	Tmp    int64 `json:"tmp,omitempty"`
	// Root is the attempt's root, built under Layer/root (rootOps) and
	// put at RootAt (fixedRoot) for bwrap to bind at /.
	Root    []rootOp `json:"root,omitempty"`
	RootAt  string   `json:"root_at,omitempty"`
	Cgroups []string `json:"cgroups,omitempty"` // folders to join before bwrap
	Leave   []string `json:"leave,omitempty"`   // folders to go back to after
	Rlimits []rlimit `json:"rlimits,omitempty"`
	Argv    []string `json:"argv,omitempty"` // bwrap and its arguments; none: mount, then exit (the probe)
	// GoCache are the lower layers of the attempt's Go build cache, top
	// first, mounted as an overlay at layer/gocache; none mounts nothing.
	GoCache []cacheLayer `json:"gocache,omitempty"`
	// FillGoCache is a Go build cache mounted read-write at layer/gocache
	// (the fill of the repository's cache from the base), instead of an
	// overlay.
	FillGoCache string `json:"fill_gocache,omitempty"`
	// Prepared is a prepared layer (a folder holding tree/ and gocache/)
	// laid read-only over the tree and under the Go cache.
	Prepared string `json:"prepared,omitempty"`
	// Persist makes the attempt a prepare: the tree's and the Go cache's
	// upper layers, on the attempt's tmpfs, are copied into Persist/tree
	// and Persist/gocache when it exits 0 within its bounds.
	Persist string `json:"persist,omitempty"`
	// Standby: build the whole sandbox, join the cgroup and start bwrap
	// now: its command is the waiting command (exec.go), which gets the
	// attempt's command line from flakegate on the attempt descriptor
	// (fdAttempt, passed on to it as execFD). A standby is started while the attempt before it
	// runs, so that none of this (the cgroup join alone waits about 11 ms
	// on cgroup v1, for an RCU grace period) is in the attempt's time.
	Standby bool `json:"standby,omitempty"`
	// TreeFiles are written into the mounted tree (its upper layer)
	// before bwrap starts (Sandbox.TreeFiles).
	TreeFiles []TreeFile `json:"tree_files,omitempty"`
	// CoverDir is where a binary built with coverage writes the helper's
	// counters (cover.go); "" for none.
	CoverDir string `json:"cover_dir,omitempty"`
	// AttemptCover is the attempt's own GOCOVERDIR (a config passes it
	// by name), which the helper's environment held before CoverDir
	// replaced it there: the helper gives it back to bwrap (uncover).
	AttemptCover *string `json:"attempt_cover,omitempty"`

	fds helperFDs // the helper's descriptors, by name (handoff.go)
}

// cacheLayer is one lower layer of the Go build cache. Idmap shows its
// owner's files as the identity's (through the user namespace given as
// fdCacheUserns); the repository's cache and a prepared layer are the
// identity's already, written by it.
type cacheLayer struct {
	Src   string `json:"src"`
	Idmap bool   `json:"idmap,omitempty"`
}

type rlimit struct {
	Resource int    `json:"r"`
	Value    uint64 `json:"v"`
}

// helperReport is what the helper says on its report descriptor
// (fdReport) after bwrap.
type helperReport struct {
	Full []string `json:"full,omitempty"` // "tmp", "disk"
	// KeepErr says why a prepare's layers could not be kept; NoSpace
	// that the disk holding them is full.
	KeepErr string `json:"keep_err,omitempty"`
	NoSpace bool   `json:"no_space,omitempty"`
}
