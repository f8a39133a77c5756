package git

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// treeEntry is one file of a commit's tree: its mode and blob.
type treeEntry struct{ mode, blob string }

// lsTree lists the files of rev (recursively): path -> mode and blob.
func (c *Client) lsTree(ctx context.Context, rev string) (map[string]treeEntry, error) {
	if err := checkRev(rev); err != nil {
		return nil, err
	}
	out, err := c.run(ctx, "", "ls-tree", "-r", "-z", "--full-tree", rev)
	if err != nil {
		return nil, err
	}
	files := map[string]treeEntry{}
	for _, rec := range bytes.Split(out, []byte{0}) {
		meta, name, ok := strings.Cut(string(rec), "\t")
		if !ok {
			continue
		}
		f := strings.Fields(meta) // mode type blob
		if len(f) != 3 || f[1] != "blob" {
			continue
		}
		files[name] = treeEntry{mode: f[0], blob: f[2]}
	}
	return files, nil
}

// OverlayFile is a file an overlay writes with bytes of its own (a
// synthesized go.mod): Data at Path, with the candidate's mode where the
// candidate has the file (a regular file's, 100644, else).
type OverlayFile struct {
	Path string
	Data []byte
}

// OverlayCommit returns a commit whose tree is cand's with every file
// that pick selects taken from base instead: a picked file of cand that
// base does not have is left out, a picked file of base is base's
// version. When nothing differs it returns cand itself. The commit (its
// parent cand) is reachable from nothing; the repository's index,
// branches and work tree do not change (a temporary index is used).
// The check grades a suite's base tests on it: the base's test files
// over the candidate's code.
func (c *Client) OverlayCommit(ctx context.Context, base, cand string, pick func(path string) bool) (string, error) {
	return c.Overlay(ctx, base, cand, pick, nil)
}

// Overlay is OverlayCommit that also writes each file of write (not
// picked: its bytes are written as a blob of the repository, git
// hash-object -w, and put at its path). A written file whose bytes are
// the candidate's changes nothing.
func (c *Client) Overlay(ctx context.Context, base, cand string, pick func(path string) bool, write []OverlayFile) (string, error) {
	bt, err := c.lsTree(ctx, base)
	if err != nil {
		return "", err
	}
	ct, err := c.lsTree(ctx, cand)
	if err != nil {
		return "", err
	}
	written := map[string]bool{}
	var index bytes.Buffer // update-index --index-info lines
	for _, f := range write {
		if err := checkPath(f.Path); err != nil {
			return "", err
		}
		blob, err := c.runInput(ctx, "", f.Data, "hash-object", "-w", "--no-filters", "--stdin")
		if err != nil {
			return "", err
		}
		e := treeEntry{mode: "100644", blob: strings.TrimSpace(string(blob))}
		if old, ok := ct[f.Path]; ok {
			e.mode = old.mode
		}
		written[f.Path] = true
		if ct[f.Path] != e {
			index.WriteString(e.mode + " " + e.blob + "\t" + f.Path + "\x00")
		}
	}
	for p := range ct {
		if _, inBase := bt[p]; !written[p] && pick(p) && !inBase {
			index.WriteString("0 0000000000000000000000000000000000000000\t" + p + "\x00")
		}
	}
	for p, e := range bt {
		if !written[p] && pick(p) && ct[p] != e {
			index.WriteString(e.mode + " " + e.blob + "\t" + p + "\x00")
		}
	}
	if index.Len() == 0 {
		return cand, nil
	}
	tmp, err := os.MkdirTemp("", "flakegate-index-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	ic := &Client{Dir: c.Dir, Git: c.Git, Command: c.Command, indexFile: filepath.Join(tmp, "index")}
	if _, err := ic.run(ctx, "", "read-tree", cand); err != nil {
		return "", err
	}
	if _, err := ic.runInput(ctx, "", index.Bytes(), "update-index", "-z", "--index-info"); err != nil {
		return "", err
	}
	tree, err := ic.run(ctx, "", "write-tree")
	if err != nil {
		return "", err
	}
	sha, err := ic.runInput(ctx, "", []byte("flakegate: the base's tests over the candidate's code\n"),
		"-c", "user.name=flakegate check", "-c", "user.email=flakegate-check@localhost", "commit-tree", strings.TrimSpace(string(tree)), "-p", cand)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(sha)), nil
}

// checkPath refuses a written path that is not a clean relative path
// inside the tree.
func checkPath(p string) error {
	if p == "" || p != path.Clean(p) || path.IsAbs(p) || p == ".." || strings.HasPrefix(p, "../") || strings.ContainsAny(p, "\x00\n") || p == ".git" || strings.HasPrefix(p, ".git/") {
		return fmt.Errorf("overlay: %q is not a clean path inside the tree", p)
	}
	return nil
}
