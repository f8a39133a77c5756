// A suite's commands in a check's sandbox on a tree: Env, what the
// suites need of a check's site (check builds one over its site at each
// use), the runs a Lister is given (run, runReport) over the worktree
// acquired and the top-level prepare's layer, and a suite's error.

package suites

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/attempt/sandbox"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/git"
	"github.com/flakegate/flakegate/gocache"
	"github.com/flakegate/flakegate/site"
)

// Env is what a check's suites (their listings, the base's kept lists,
// impact's decisions) need of the check's site: its state as it stands
// when check makes one, and the site's own steps as functions. Package
// batch imports suites, so check gives batch's report file too.
type Env struct {
	Cfg     *config.Config
	CfgPath string // the config's path, which a suite's errors name
	Common  string // the repository's git common directory (the kept lists)
	BaseSHA string
	Git     *git.Client
	Iso     *site.Isolation // nil before it is set up: no list is kept
	Trees   *site.Worktrees // impact decides over the first worker's trees
	Goc     *gocache.Caches // the attempts' Go caches, nil for none
	Say     func(line string)
	// Layer is the prepared layer of the config's top-level prepare on
	// t, which a suite's commands in t run over ("" for none); why says
	// why that prepare failed ("" when it did not).
	Layer func(ctx context.Context, t *site.Tree) (dir, why string, err error)
	// Reset resets and cleans t after a command.
	Reset func(ctx context.Context, t *site.Tree) error
	// ReportFile adds the report file flag+F to cmd and returns F
	// (batch.ReportFile); ReportRoot is the folder the framework ran in
	// as it saw it (batch.JSRoot).
	ReportFile func(cmd *attempt.Command, name, flag string) (string, error)
	ReportRoot func(cmd attempt.Command) string
	// CheckFile requires rel to exist in the base tree root and to stay
	// inside it (key names it in the config, what says what it is).
	CheckFile func(root, key, rel, what string) error
	// Seconds is how long p's process took in the last check that ran
	// it (the timings check keeps).
	Seconds func(p *config.Property) (float64, bool)
	// Graded is the graded candidate's commit ("" in a plan or doctor,
	// which have no candidate: no impact); NoImpact says why this check
	// decides no impact ("" when it may).
	Graded, NoImpact string
}

// run runs argv in the sandbox on t and returns its whole output (a
// listing is no test: its exit code is judged by the caller).
func (e *Env) run(ctx context.Context, t *site.Tree, s *config.Suite, argv []string) (attempt.Outcome, []byte, error) {
	sb, err := e.Sandbox(ctx, t, s)
	if err != nil {
		return attempt.Outcome{}, nil, err
	}
	if err := t.Acquire(); err != nil {
		return attempt.Outcome{}, nil, &flakegate.Error{Code: flakegate.EINTERNAL, Op: "check", Path: t.Dir, Message: "cannot reset the worktree to list a suite", Err: err}
	}
	defer t.Release(e.Reset)
	out := &attempt.Bounded{Max: MaxListOutput}
	o := attempt.Run(ctx, attempt.Command{Argv: argv, Dir: t.Dir, Env: e.Iso.Env, WallBudget: s.WallBudget, Sandbox: sb,
		NoTestMarkers: []string{}, Output: out})
	if ctx.Err() != nil {
		return o, nil, flakegate.Interrupted(ctx)
	}
	if out.Over {
		return o, nil, e.Fail(s, "%s printed more than %d MiB", strings.Join(argv, " "), MaxListOutput>>20)
	}
	return o, out.Bytes(), nil
}

// Sandbox is the sandbox of suite s's commands in t (its listing, its
// new tests): over the top-level prepare's layer of t, as its triples
// run (Layer); nil without a sandbox. A prepare that failed is an error
// of the suite: nothing of it can be listed or run.
func (e *Env) Sandbox(ctx context.Context, t *site.Tree, s *config.Suite) (*sandbox.Sandbox, error) {
	sb := e.Iso.SandboxFor(t.Dir)
	if sb == nil {
		return nil, nil
	}
	layer, why, err := e.Layer(ctx, t)
	if err != nil {
		return nil, err
	}
	if why != "" {
		return nil, e.Fail(s, "its commands run over the top-level prepare, which failed on the %s tree: %s", t.Side, why)
	}
	sb.Prepared = layer
	return sb, nil
}

// Fail is a configuration error of suite s: its tests cannot be listed,
// so none can be judged.
func (e *Env) Fail(s *config.Suite, format string, args ...any) error {
	return &flakegate.Error{Code: flakegate.EINVALID, Op: "config", Path: e.CfgPath,
		Message: fmt.Sprintf("suites[%d] (%s %s): ", s.Index, s.Framework, s.Path) + fmt.Sprintf(format, args...),
		Hint:    "run the listing yourself in the base tree (flakegate doctor shows each suite's count), or fix the suite in " + e.CfgPath}
}

// List lists suite s in tree t; marks as Lister's.
func (e *Env) List(ctx context.Context, s *config.Suite, t *site.Tree, marks bool) (*List, error) {
	return e.lister(s, t, marks).List(ctx, s)
}

// lister is the Lister of suite s in tree t.
func (e *Env) lister(s *config.Suite, t *site.Tree, marks bool) *Lister {
	return &Lister{Dir: t.Dir, Marks: marks,
		Run: func(ctx context.Context, argv []string) (attempt.Outcome, []byte, error) {
			return e.run(ctx, t, s, argv)
		},
		RunReport: func(ctx context.Context, argv []string, flag string) (attempt.Outcome, []byte, []byte, string, error) {
			return e.runReport(ctx, t, s, argv, flag) // js.go
		},
		Fail: func(format string, args ...any) error { return e.Fail(s, format, args...) },
		Prepared: func(ctx context.Context) (string, error) {
			sb, err := e.Sandbox(ctx, t, s)
			if err != nil || sb == nil {
				return "", err
			}
			return sb.Prepared, nil
		}}
}

// runReport runs a listing argv in the sandbox on t with the report
// file flag+F added (ReportFile) and returns its outcome, its output,
// the report file's content and the folder the framework ran in as it
// saw it (the report names files by absolute paths there).
func (e *Env) runReport(ctx context.Context, t *site.Tree, s *config.Suite, argv []string, flag string) (attempt.Outcome, []byte, []byte, string, error) {
	sb, err := e.Sandbox(ctx, t, s)
	if err != nil {
		return attempt.Outcome{}, nil, nil, "", err
	}
	if err := t.Acquire(); err != nil {
		return attempt.Outcome{}, nil, nil, "", &flakegate.Error{Code: flakegate.EINTERNAL, Op: "check", Path: t.Dir, Message: "cannot reset the worktree to list a suite", Err: err}
	}
	defer t.Release(e.Reset)
	out := &attempt.Bounded{Max: MaxListOutput}
	cmd := attempt.Command{Argv: argv, Dir: t.Dir, Env: e.Iso.Env, WallBudget: s.WallBudget, Sandbox: sb,
		NoTestMarkers: []string{}, Output: out}
	file, err := e.ReportFile(&cmd, "list.json", flag)
	if err != nil {
		return attempt.Outcome{}, nil, nil, "", err
	}
	defer os.RemoveAll(filepath.Dir(file))
	o := attempt.Run(ctx, cmd)
	if ctx.Err() != nil {
		return o, nil, nil, "", flakegate.Interrupted(ctx)
	}
	report, rerr := attempt.ReadBounded(file, MaxListOutput)
	if rerr != nil {
		report = nil
	}
	return o, out.Bytes(), report, e.ReportRoot(cmd), nil
}
