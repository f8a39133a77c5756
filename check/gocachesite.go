// The check's use of the repository's Go caches (package gocache): set
// up beside the sandbox, the modules downloaded and the build cache
// filled from the base tree before any prepare or attempt (site's
// Isolation.MirrorGoCaches mirrors them onto the worktrees' tmpfs).

package check

import (
	"context"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/gocache"
)

// fillGoCache fills the repository's Go build cache from the base tree
// (proven pristine), once per base commit, before any prepare or attempt.
func (c *site) fillGoCache(ctx context.Context) error {
	if c.goc == nil || c.iso.Sandbox.GoCache == "" {
		return nil
	}
	if err := c.fetchGoModules(ctx, ""); err != nil {
		return err
	}
	c.goc.UseSuites(c.cfg.Suites, c.cfg.Impact)
	if c.goc.Filled(c.goc.FillKey()) {
		return nil
	}
	t := c.trees.Workers[0].Base
	if err := t.Acquire(); err != nil {
		return &flakegate.Error{Code: flakegate.EINTERNAL, Op: "check", Path: t.Dir, Message: "cannot fill the Go build cache", Err: err}
	}
	defer t.Release(c.resetClean)
	// Only the base's own code fills it: the tree is proven to be the base
	// commit first, as before a base replay.
	if err := c.trees.Prove(ctx, t); err != nil {
		return err
	}
	line, err := c.goc.Fill(ctx, *c.sandboxFor(t.Dir), c.iso.Env, t.Dir, "check")
	if ctx.Err() != nil {
		return flakegate.Interrupted(ctx)
	}
	if err != nil {
		return err
	}
	if line != "" {
		c.say(c.redact(line))
	}
	return nil
}

// fetchGoModules makes the attempts' module view hold every module the
// base's go.sum names and, when cand is a commit other than the base,
// every module the candidate's go.sum adds (gocache's Fetch), and says
// what it did.
func (c *site) fetchGoModules(ctx context.Context, cand string) error {
	line, err := c.goc.Fetch(ctx, c.git, &c.iso.Sandbox, c.iso.Env, cand, "check")
	if line != "" {
		c.say(c.redact(line))
	}
	return err
}

// GoMissingModule is the module a failed go command in the sandbox could
// not find in its module cache (gocache.MissingModule), for the CLI's
// trial of a new config.
func GoMissingModule(out string) string { return gocache.MissingModule(out) }
