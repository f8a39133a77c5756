// The check's use of the repository's Go caches (package gocache): set
// up beside the sandbox, the modules downloaded and the build cache
// filled from the base tree before any prepare or attempt, mirrored onto
// the worktrees' tmpfs.

package check

import (
	sitepkg "github.com/flakegate/flakegate/site"

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

// mirrorGoCaches points the sandbox's Go caches at mirrors under shm
// (gocache.Mirror) when they fit in a quarter of the tmpfs's free space;
// it returns what it did for the progress, "" when nothing.
func (c *site) mirrorGoCaches(shm string) string {
	sb := &c.iso.Sandbox
	if shm == "" || c.goc == nil || sb.GoCache == "" {
		return ""
	}
	tooBig := "the Go caches stay on disk, swept before every attempt: they do not fit in a quarter of " + sitepkg.ShmRoot
	free, err := sitepkg.FreeBytes(shm)
	if err != nil {
		return tooBig
	}
	switch fits, err := gocache.Mirror(sb, shm, free/4); {
	case !fits:
		return tooBig
	case err != nil:
		return "the Go caches stay on disk, swept before every attempt: cannot mirror them: " + err.Error()
	}
	return "the Go caches are mirrored there too, and need no sweep either"
}

// GoMissingModule is the module a failed go command in the sandbox could
// not find in its module cache (gocache.MissingModule), for the CLI's
// trial of a new config.
func GoMissingModule(out string) string { return gocache.MissingModule(out) }
