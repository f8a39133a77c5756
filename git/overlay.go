package git

import (
	"bytes"
	"context"
	"os"
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

// OverlayCommit returns a commit whose tree is cand's with every file
// that pick selects taken from base instead: a picked file of cand that
// base does not have is left out, a picked file of base is base's
// version. When nothing differs it returns cand itself. The commit (its
// parent cand) is reachable from nothing; the repository's index,
// branches and work tree do not change (a temporary index is used).
// The check grades a suite's base tests on it: the base's test files
// over the candidate's code.
func (c *Client) OverlayCommit(ctx context.Context, base, cand string, pick func(path string) bool) (string, error) {
	bt, err := c.lsTree(ctx, base)
	if err != nil {
		return "", err
	}
	ct, err := c.lsTree(ctx, cand)
	if err != nil {
		return "", err
	}
	var index bytes.Buffer // update-index --index-info lines
	for p := range ct {
		if _, inBase := bt[p]; pick(p) && !inBase {
			index.WriteString("0 0000000000000000000000000000000000000000\t" + p + "\x00")
		}
	}
	for p, e := range bt {
		if pick(p) && ct[p] != e {
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
	sha, err := ic.runInput(ctx, "", []byte("flakegate: the base's test files over the candidate's code\n"),
		"-c", "user.name=flakegate check", "-c", "user.email=flakegate-check@localhost", "commit-tree", strings.TrimSpace(string(tree)), "-p", cand)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(sha)), nil
}
