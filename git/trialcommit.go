package git

import (
	"context"
	"fmt"
	"strings"
)

// CommitWithFile writes a commit whose tree is parent's with the
// top-level file name set to content (added or replaced), and returns its
// sha. No branch, index or work tree changes: the commit is reachable
// from nothing and git's gc removes it. `flakegate init` runs a check of
// the config it is about to write this way, as a check of the committed
// file would run.
func (c *Client) CommitWithFile(ctx context.Context, parent, name string, content []byte, message string) (string, error) {
	if strings.ContainsAny(name, "/\t\n\x00") || name == "" {
		return "", fmt.Errorf("git: %q is not a top-level file name", name)
	}
	if err := checkRev(parent); err != nil {
		return "", err
	}
	blob, err := c.runInput(ctx, "", content, "hash-object", "-w", "--stdin")
	if err != nil {
		return "", err
	}
	ls, err := c.run(ctx, "", "ls-tree", "-z", parent+"^{tree}")
	if err != nil {
		return "", err
	}
	var entries []string
	for _, e := range strings.Split(string(ls), "\x00") {
		if e == "" {
			continue
		}
		if _, path, ok := strings.Cut(e, "\t"); ok && path == name {
			continue
		}
		entries = append(entries, e)
	}
	entries = append(entries, "100644 blob "+strings.TrimSpace(string(blob))+"\t"+name)
	tree, err := c.runInput(ctx, "", []byte(strings.Join(entries, "\x00")+"\x00"), "mktree", "-z")
	if err != nil {
		return "", err
	}
	sha, err := c.runInput(ctx, "", []byte(message+"\n"),
		"-c", "user.name=flakegate init", "-c", "user.email=flakegate-init@localhost",
		"commit-tree", strings.TrimSpace(string(tree)), "-p", parent)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(sha)), nil
}
