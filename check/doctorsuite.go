package check

import (
	"context"
	"fmt"
	"strings"
	"time"

	sitepkg "github.com/flakegate/flakegate/site"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/internal/flock"
	"github.com/flakegate/flakegate/suites"
)

// siteLockWait is how long ListSuites waits for the worktree lock a
// running check of the repository holds.
const siteLockWait = time.Minute

// ListSuites lists each suite of the config on the base tree (after
// Setup and Probe), in the base worktree, which it opens under the
// worktree lock. busy is why it could not (a check holds the worktrees,
// or the sandbox is not set up); err a worktree that cannot be made.
func (s *Site) ListSuites(ctx context.Context) (counts []suites.Count, busy string, err error) {
	c := s.c
	if len(c.cfg.Suites) == 0 {
		return nil, "", nil
	}
	busy, err = s.withBase(ctx, "doctor", func() error {
		counts = c.suitesEnv().Counts(ctx) // what the base lists of each suite
		return nil
	})
	return counts, busy, err
}

// ExpandSuites lists every suite of the config on the base tree (after
// Setup and Probe), in the sandbox, as a check does before its first
// triple, and adds one property per listed test to the config's
// properties, as the check gates them: check --plan counts their
// triples. busy and err are as for ListSuites; a suite whose listing
// fails is err, as in a check.
func (s *Site) ExpandSuites(ctx context.Context) (busy string, err error) {
	if len(s.c.cfg.Suites) == 0 {
		return "", nil
	}
	return s.withBase(ctx, "check --plan", func() error { return s.c.expandSuites(ctx) })
}

// RunOnBase runs each argv once, within budget, in the check's base
// worktree and its sandbox (after Setup and Probe), as a check's base
// side would run it: the tree opened under the worktree lock and proven
// to be the base, the Go build cache filled from it first. outs are the
// outcomes in argv order; busy and err are as for ListSuites. `flakegate
// init --measure` times the suites' bare runs this way: a suite is the
// tree's code, which no command runs outside the sandbox.
func (s *Site) RunOnBase(ctx context.Context, op string, argvs [][]string, budget time.Duration) (outs []attempt.Outcome, busy string, err error) {
	c := s.c
	busy, err = s.withBase(ctx, op, func() error {
		if err := c.fillGoCache(ctx); err != nil {
			return err
		}
		t := c.trees.Workers[0].Base
		for _, argv := range argvs {
			if err := t.Acquire(); err != nil {
				return &flakegate.Error{Code: flakegate.EINTERNAL, Op: op, Path: t.Dir, Message: "cannot reset the base worktree", Err: err}
			}
			o := attempt.Run(ctx, attempt.Command{Argv: argv, Dir: t.Dir, Env: c.iso.Env, WallBudget: budget, Sandbox: c.sandboxFor(t.Dir), NoTestMarkers: []string{}})
			t.Release(c.resetClean)
			if ctx.Err() != nil {
				return flakegate.Interrupted(ctx)
			}
			outs = append(outs, o)
		}
		return nil
	})
	return outs, strings.Replace(busy, "not listed", "not run", 1), err
}

// withBase runs f with the check's base worktree (c.trees) at hand,
// opening it under the worktree lock when nothing has; busy says why it
// could not (a check holds the worktrees, or the sandbox is not set up).
func (s *Site) withBase(ctx context.Context, op string, f func() error) (busy string, err error) {
	c := s.c
	if c.iso == nil {
		return "not listed: the sandbox is not set up here", nil
	}
	if c.iso.Mode != sitepkg.IsolationBwrap {
		// A listing runs the project's code (pytest imports conftest.py,
		// go test compiles it); outside a check it runs only in the
		// sandbox, whatever the config of the checkout says.
		return "not listed: the config says sandbox: {mode: none}, and a listing runs the project's code, which " + op + " runs only in the sandbox", nil
	}
	if c.trees == nil {
		root, err := c.treeRoot(ctx, c.cfg.Workers)
		if err != nil {
			return "", err
		}
		lock, err := flock.Lock(ctx, root.Lock, flock.Options{What: "the worktree lock", Op: op, Timeout: siteLockWait})
		if err != nil {
			return "not listed (a check of this repository may hold its worktrees): " + err.Error(), nil
		}
		overlay := c.iso.Sandbox.Overlay || c.iso.Sandbox.Level.Copy
		c.trees = sitepkg.BaseOnly(c.git, root, c.baseSHA, overlay, lock)
		t := c.trees.Workers[0].Base
		defer func() { c.trees.Unlock(); c.trees = nil }()
		if err := c.trees.Prepare(ctx, t); err != nil {
			return "", fmt.Errorf("the base worktree: %w", err)
		}
	}
	// A go suite's listing builds its test binaries: from the modules
	// the base's go.sum names (downloaded when the module cache lacks
	// them) and, as in a check, over the build cache filled from the base
	// first, so that the listing compiles nothing the fill did not (a
	// cold cache made cobra's listing run past its budget on a fresh
	// runner).
	if err := c.fillGoCache(ctx); err != nil {
		return "", err
	}
	return "", f()
}
