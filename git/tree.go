package git

import (
	"context"
	"strings"
)

// Tree returns the hash of the tree of commit rev (a full commit hash):
// what decides the files a checkout of it holds.
func (c *Client) Tree(ctx context.Context, rev string) (string, error) {
	if err := checkRev(rev); err != nil {
		return "", err
	}
	out, err := c.run(ctx, "", "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{tree}")
	if err != nil {
		return "", wrapRepoErr("git rev-parse", c.Dir, err)
	}
	return strings.TrimSpace(string(out)), nil
}
