package git

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// CommitWorkTree writes a commit of the work tree as `git add -A` would
// stage it (tracked changes and untracked files that are not ignored),
// with the top-level file name set to content, on top of HEAD (no parent
// in a repository without a commit), and returns its sha. The
// repository's index, branches and work tree do not change: a temporary
// index is used, and the commit is reachable from nothing (git's gc
// removes it). `flakegate init` runs a check of the config it is about
// to write this way: on the tree the user is about to commit it with.
func (c *Client) CommitWorkTree(ctx context.Context, name string, content []byte, message string) (string, error) {
	if strings.ContainsAny(name, "/\t\n\x00") || name == "" || strings.HasPrefix(name, "-") {
		return "", fmt.Errorf("git: %q is not a top-level file name", name)
	}
	tmp, err := os.MkdirTemp("", "flakegate-index-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	ic := &Client{Dir: c.Dir, Git: c.Git, Command: c.Command, indexFile: filepath.Join(tmp, "index")}
	top, err := c.TopLevel(ctx)
	if err != nil {
		return "", err
	}
	parent, err := c.RevParse(ctx, "HEAD")
	if err == nil {
		if _, err := ic.run(ctx, top, "read-tree", parent); err != nil {
			return "", err
		}
	} else {
		parent = ""
	}
	if _, err := ic.run(ctx, top, "add", "-A", "--", "."); err != nil {
		return "", err
	}
	blob, err := ic.runInput(ctx, top, content, "hash-object", "-w", "--stdin")
	if err != nil {
		return "", err
	}
	if _, err := ic.run(ctx, top, "update-index", "--add", "--cacheinfo", "100644,"+strings.TrimSpace(string(blob))+","+name); err != nil {
		return "", err
	}
	tree, err := ic.run(ctx, top, "write-tree")
	if err != nil {
		return "", err
	}
	args := []string{"-c", "user.name=flakegate init", "-c", "user.email=flakegate-init@localhost", "commit-tree", strings.TrimSpace(string(tree))}
	if parent != "" {
		args = append(args, "-p", parent)
	}
	sha, err := ic.runInput(ctx, top, []byte(message+"\n"), args...)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(sha)), nil
}
