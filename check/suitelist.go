// A suite's listing in the check's sandbox on a tree: the runs a
// suites.Lister is given (listRun, listRunReport), over the worktree
// acquired and the top-level prepare's layer (suites/list.go says what
// each framework's listing runs).

package check

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/attempt/sandbox"
	"github.com/flakegate/flakegate/batch"
	"github.com/flakegate/flakegate/config"
	sitepkg "github.com/flakegate/flakegate/site"
	"github.com/flakegate/flakegate/suites"
)

// listRun runs argv in the sandbox on t and returns its whole output (a
// listing is no test: its exit code is judged by the caller).
func (c *site) listRun(ctx context.Context, t *sitepkg.Tree, s *config.Suite, argv []string) (attempt.Outcome, []byte, error) {
	sb, err := c.suiteSandbox(ctx, t, s)
	if err != nil {
		return attempt.Outcome{}, nil, err
	}
	if err := t.Acquire(); err != nil {
		return attempt.Outcome{}, nil, &flakegate.Error{Code: flakegate.EINTERNAL, Op: "check", Path: t.Dir, Message: "cannot reset the worktree to list a suite", Err: err}
	}
	defer t.Release(c.resetClean)
	out := &attempt.Bounded{Max: suites.MaxListOutput}
	o := attempt.Run(ctx, attempt.Command{Argv: argv, Dir: t.Dir, Env: c.iso.Env, WallBudget: s.WallBudget, Sandbox: sb,
		NoTestMarkers: []string{}, Output: out})
	if ctx.Err() != nil {
		return o, nil, flakegate.Interrupted(ctx)
	}
	if out.Over {
		return o, nil, c.suiteError(s, "%s printed more than %d MiB", strings.Join(argv, " "), suites.MaxListOutput>>20)
	}
	return o, out.Bytes(), nil
}

// suiteSandbox is the sandbox of suite s's commands in t (its listing,
// its new tests): over the top-level prepare's layer of t, as its
// triples run (suiteLayer); nil without a sandbox. A prepare that failed
// is an error of the suite: nothing of it can be listed or run.
func (c *site) suiteSandbox(ctx context.Context, t *sitepkg.Tree, s *config.Suite) (*sandbox.Sandbox, error) {
	sb := c.sandboxFor(t.Dir)
	if sb == nil {
		return nil, nil
	}
	layer, why, err := c.suiteLayer(ctx, t)
	if err != nil {
		return nil, err
	}
	if why != "" {
		return nil, c.suiteError(s, "its commands run over the top-level prepare, which failed on the %s tree: %s", t.Side, why)
	}
	sb.Prepared = layer
	return sb, nil
}

// suiteError is a configuration error of suite s: its tests cannot be
// listed, so none can be judged.
func (c *site) suiteError(s *config.Suite, format string, args ...any) error {
	return &flakegate.Error{Code: flakegate.EINVALID, Op: "config", Path: c.cfgPath,
		Message: fmt.Sprintf("suites[%d] (%s %s): ", s.Index, s.Framework, s.Path) + fmt.Sprintf(format, args...),
		Hint:    "run the listing yourself in the base tree (flakegate doctor shows each suite's count), or fix the suite in " + c.cfgPath}
}

// listSuite lists suite s in tree t; marks as suites.Lister's.
func (c *site) listSuite(ctx context.Context, s *config.Suite, t *sitepkg.Tree, marks bool) (*suites.List, error) {
	return c.lister(s, t, marks).List(ctx, s)
}

// lister is the suites.Lister of suite s in tree t.
func (c *site) lister(s *config.Suite, t *sitepkg.Tree, marks bool) *suites.Lister {
	return &suites.Lister{Dir: t.Dir, Marks: marks,
		Run: func(ctx context.Context, argv []string) (attempt.Outcome, []byte, error) {
			return c.listRun(ctx, t, s, argv)
		},
		RunReport: func(ctx context.Context, argv []string, flag string) (attempt.Outcome, []byte, []byte, string, error) {
			return c.listRunReport(ctx, t, s, argv, flag) // js.go
		},
		Fail: func(format string, args ...any) error { return c.suiteError(s, format, args...) },
		Prepared: func(ctx context.Context) (string, error) {
			sb, err := c.suiteSandbox(ctx, t, s)
			if err != nil || sb == nil {
				return "", err
			}
			return sb.Prepared, nil
		}}
}

// listRunReport runs a listing argv in the sandbox on t with the report
// file flag+F added (batch.ReportFile) and returns its outcome, its output,
// the report file's content and the folder the framework ran in as it
// saw it (the report names files by absolute paths there).
func (c *site) listRunReport(ctx context.Context, t *sitepkg.Tree, s *config.Suite, argv []string, flag string) (attempt.Outcome, []byte, []byte, string, error) {
	sb, err := c.suiteSandbox(ctx, t, s)
	if err != nil {
		return attempt.Outcome{}, nil, nil, "", err
	}
	if err := t.Acquire(); err != nil {
		return attempt.Outcome{}, nil, nil, "", &flakegate.Error{Code: flakegate.EINTERNAL, Op: "check", Path: t.Dir, Message: "cannot reset the worktree to list a suite", Err: err}
	}
	defer t.Release(c.resetClean)
	out := &attempt.Bounded{Max: suites.MaxListOutput}
	cmd := attempt.Command{Argv: argv, Dir: t.Dir, Env: c.iso.Env, WallBudget: s.WallBudget, Sandbox: sb,
		NoTestMarkers: []string{}, Output: out}
	file, err := batch.ReportFile(&cmd, "list.json", flag)
	if err != nil {
		return attempt.Outcome{}, nil, nil, "", err
	}
	defer os.RemoveAll(filepath.Dir(file))
	o := attempt.Run(ctx, cmd)
	if ctx.Err() != nil {
		return o, nil, nil, "", flakegate.Interrupted(ctx)
	}
	report, rerr := attempt.ReadBounded(file, suites.MaxListOutput)
	if rerr != nil {
		report = nil
	}
	return o, out.Bytes(), report, batch.JSRoot(cmd), nil
}

// suiteMember reports whether j is a triple of a suite that batches:
// alone, it still runs as a batch (of one), which carries known answers
// (known.go: a test of a suite is never judged from output it could
// have printed itself) and, for vitest and jest, quotes its name in its
// -t pattern (jsBatchArgv).
func suiteMember(j *job) bool {
	return j.shape != nil && j.ps.prop.Suite != nil
}
