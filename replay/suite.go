// The replay of one triple of a suite (flakegate replay --suite): the
// order decided its result, so the replay runs the whole batch the check
// ran it in (the test's Go package, or the pytest, vitest or jest suite,
// with the order seed), made from the base's own listing, in the sandbox, on the graded
// candidate, and judges the named test from the framework's report.

package replay

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/flakegate/flakegate/grade"
	"github.com/flakegate/flakegate/site"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/batch"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/git"
	"github.com/flakegate/flakegate/suites"
)

// Suite makes a replay the replay of one triple of a suite: its
// command is the batch the check ran the triple in, listed in BaseDir
// (New), and its result the named test's in that batch's report.
type Suite struct {
	// Suite is the config's suites: entry.
	Suite *config.Suite
	// Properties are the config's own properties: a test they name is
	// gated as the property, not in the suite's batches.
	Properties []config.Property
	// BaseDir is a clean checkout of the base: the suite is listed there,
	// as the check lists it.
	BaseDir string
	// Path and Name are the test's file and name, as the triple's record
	// has them; Seed is the order seed.
	Path, Name string
	Seed       flakegate.Seed
}

// suiteReplay is what planSuite made of a Suite.
type suiteReplay struct {
	framework, label string
	shape            *batch.Shape   // the named test's, in the batch
	shapes           []*batch.Shape // the batch's, in order
	seed             flakegate.Seed
	goList           func(pkg string) []string // as the check's batchRun.goList
	members          int
	own              time.Duration // the test's wall budget
	judged           string        // after Run: what the batch said of the test
	// baseLayer is the top-level prepare's layer of the base, which the
	// listing runs over (planSuite), "" for none.
	baseLayer string
}

// findSuite is the suite of cfg at path that can hold the test file
// file (a go and a pytest suite may both be at ".").
func findSuite(cfg *config.Config, path, file string) *config.Suite {
	var found *config.Suite
	for i := range cfg.Suites {
		s := &cfg.Suites[i]
		if s.Path != path {
			continue
		}
		if found == nil || suites.InScope(s, file) {
			found = s
		}
	}
	return found
}

// checkoutSuiteReplay is Checkout for a suite's triple: two
// checkouts of their own, the graded candidate (the base's tests and
// their world over Rev, as the check grades it: grade/graded.go) where the
// batch runs and the base (ConfigRev) where the suite is listed.
func checkoutSuiteReplay(ctx context.Context, o AtOptions, g *git.Client, sha, cfgSHA, cfgPath string, cfg *config.Config) (*At, error) {
	s := findSuite(cfg, o.Suite, o.Property)
	if s == nil {
		var paths []string
		for _, s := range cfg.Suites {
			paths = append(paths, s.Framework+" "+s.Path)
		}
		hint := "the config has no suites"
		if len(paths) > 0 {
			hint = "the config's suites: " + strings.Join(paths, ", ")
		}
		return nil, &flakegate.Error{Code: flakegate.EINVALID, Op: "replay", Path: cfgPath,
			Message: fmt.Sprintf("no suite %s at %s", o.Suite, flakegate.ShortSHA(cfgSHA)), Hint: hint}
	}
	if o.Name == "" {
		return nil, &flakegate.Error{Code: flakegate.EINVALID, Op: "replay", Message: "--suite needs --name: the test's name, as its record has it"}
	}
	gt, err := grade.MakeGraded(ctx, g, cfg, cfgSHA, sha, []string{cfgPath})
	if err != nil {
		return nil, err
	}
	graded := gt.SHA
	tmp, err := os.MkdirTemp("", "flakegate-replay-")
	if err != nil {
		return nil, &flakegate.Error{Code: flakegate.EINTERNAL, Op: "replay", Message: "cannot create a temporary folder", Err: err}
	}
	base := filepath.Join(tmp, "base")
	p := &config.Property{Path: o.Property, Name: o.Name, Suite: s, Framework: s.Framework, FrameworkSet: true, WallBudget: s.WallBudget}
	r := &At{SHA: sha, ConfigSHA: cfgSHA, ConfigPath: cfgPath, Property: p, git: g, tmp: tmp, base: base,
		Options: Options{Dir: filepath.Join(tmp, "checkout"), WallBudget: s.WallBudget,
			Sandbox: cfg.Sandbox, ConfigPath: cfgPath, Repo: o.Repo, Framework: batch.EvidenceFramework(p), Name: o.Name,
			GoBase: cfgSHA, Prepare: cfg.Prepare, PrepareTree: graded,
			Suite: &Suite{Suite: s, Properties: cfg.Properties, BaseDir: base, Path: o.Property, Name: o.Name, Seed: o.Seed}}}
	if err := g.PrepareWorktree(ctx, r.Options.Dir, graded); err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	if err := g.PrepareWorktree(ctx, base, cfgSHA); err != nil {
		r.Remove(ctx) //nolint:errcheck // the error is the checkout's
		return nil, err
	}
	// The check digests a suite's fixture where the base has it.
	if s.FixtureRoot != "" {
		if _, err := os.Lstat(filepath.Join(base, filepath.FromSlash(s.FixtureRoot))); err == nil {
			r.Options.Fixture = s.FixtureRoot
		}
	}
	return r, nil
}

// listRun runs a listing command of the suite in dir, in the replay's
// sandbox, and returns its whole output.
// With flag (vitest, jest) the listing writes its report file flag+F
// (batch.ReportFile): its content and the folder the framework ran in, as it
// saw it, are returned too.
func (r *Replay) listRunReport(ctx context.Context, dir string, budget time.Duration, argv []string, flag string) (attempt.Outcome, []byte, []byte, string, error) {
	out := &attempt.Bounded{Max: suites.MaxListOutput}
	cmd := attempt.Command{Argv: argv, Dir: dir, Env: r.iso.Env, WallBudget: budget, NoTestMarkers: []string{}, Output: out}
	if r.iso.Mode == site.IsolationBwrap {
		sb := r.iso.Sandbox
		sb.Tree = dir
		sb.Prepared = r.suite.baseLayer // the top-level prepare's, as in the check's listing
		cmd.Sandbox = &sb
	}
	file := ""
	if flag != "" {
		f, err := batch.ReportFile(&cmd, "list.json", flag) // batch/report.go
		if err != nil {
			return attempt.Outcome{}, nil, nil, "", err
		}
		file = f
		defer os.RemoveAll(filepath.Dir(file))
	}
	o := attempt.Run(ctx, cmd)
	if ctx.Err() != nil {
		return o, nil, nil, "", &Incomplete{"interrupted while listing the suite on the base"}
	}
	if out.Over {
		return o, nil, nil, "", &Incomplete{fmt.Sprintf("%s printed more than %d MiB", strings.Join(argv, " "), suites.MaxListOutput>>20)}
	}
	var report []byte
	if file != "" {
		report, _ = attempt.ReadBounded(file, suites.MaxListOutput)
	}
	return o, out.Bytes(), report, batch.JSRoot(cmd), nil
}

// planSuite lists the suite on the base, as the check does, and makes
// the replay's command the batch of the named test for the seed: the
// suite's tests of the test's Go package (go) or of the whole suite
// (pytest), less the excluded ones and those a property names, in the
// check's order, with the framework's flags. A batch of one is the
// triple alone, as in a check.
func (r *Replay) planSuite(ctx context.Context) error {
	rs := r.opts.Suite
	s := rs.Suite
	where := fmt.Sprintf("suites[%d] (%s %s)", s.Index, s.Framework, s.Path)
	r.suite = &suiteReplay{}
	if r.opts.Prepare != nil && r.iso.Mode == site.IsolationBwrap {
		// The check lists the suite over the top-level prepare's layer
		// of the base: so does the replay.
		sb := r.iso.Sandbox
		sb.Tree = rs.BaseDir
		done, why := r.prepareIn(ctx, &sb, rs.BaseDir, r.opts.GoBase)
		defer done()
		if why != "" {
			return &Incomplete{"cannot list " + where + " on the base: its commands run over the top-level prepare, which failed: " + why}
		}
		r.suite.baseLayer = sb.Prepared
	}
	l := &suites.Lister{Dir: rs.BaseDir, Marks: true,
		Prepared: func(context.Context) (string, error) { return r.suite.baseLayer, nil },
		Run: func(ctx context.Context, argv []string) (attempt.Outcome, []byte, error) {
			o, out, _, _, err := r.listRunReport(ctx, rs.BaseDir, s.WallBudget, argv, "")
			return o, out, err
		},
		RunReport: func(ctx context.Context, argv []string, flag string) (attempt.Outcome, []byte, []byte, string, error) {
			return r.listRunReport(ctx, rs.BaseDir, s.WallBudget, argv, flag)
		},
		Fail: func(format string, args ...any) error {
			return &Incomplete{"cannot list " + where + " on the base: " + fmt.Sprintf(format, args...)}
		}}
	list, err := l.List(ctx, s)
	if err != nil {
		return err
	}
	if r.goc != nil {
		suites.MarkGoSkips(r.goc, r.goc.BaseKey(), s, list, rs.BaseDir) // as the check left them out
	}
	named := map[string]bool{}
	for _, p := range rs.Properties {
		named[p.Path+"\x00"+p.Name] = true
	}
	target := -1
	for i, t := range list.Tests {
		if t.File == rs.Path && t.Name == rs.Name {
			target = i
		}
	}
	label := rs.Path + "::" + rs.Name
	switch {
	case target < 0:
		return &flakegate.Error{Code: flakegate.EINVALID, Op: "replay", Message: fmt.Sprintf("%s: the base lists no test %s (it lists %d tests)", where, label, len(list.Tests)),
			Hint: "name the test as its record does: --property is its file, --name its name (pytest: the node id after ::)"}
	case s.Excluded(rs.Name):
		return &flakegate.Error{Code: flakegate.EINVALID, Op: "replay", Message: fmt.Sprintf("%s excludes %s: it is not gated", where, label)}
	case !list.Gated(s, list.Tests[target]):
		return &flakegate.Error{Code: flakegate.EINVALID, Op: "replay", Message: fmt.Sprintf("%s: the base skips %s or expects it to fail: it is not gated", where, label)}
	case named[rs.Path+"\x00"+rs.Name]:
		return &flakegate.Error{Code: flakegate.EINVALID, Op: "replay", Message: fmt.Sprintf("%s: a property names %s, so the check gates it as the property", where, label),
			Hint: "replay it without --suite"}
	}
	cfg := &config.Config{Prepare: r.opts.Prepare}
	var members []*config.Property
	for _, t := range list.Tests {
		if !list.Gated(s, t) || named[t.File+"\x00"+t.Name] || s.Framework == config.FrameworkGo && t.Pkg != list.Tests[target].Pkg {
			continue
		}
		p := suites.Property(cfg, s, t, list, "")
		members = append(members, &p)
	}
	sort.SliceStable(members, func(a, b int) bool {
		return suites.Less(s, suites.SlotOf(members[a], rs.Seed), suites.SlotOf(members[b], rs.Seed))
	}) // the check's order (check/suite.go, orderSuites)
	return r.useBatch(members, list, label)
}

// useBatch makes the batch of the suite's tests members (in order) the
// replay's command.
func (r *Replay) useBatch(members []*config.Property, list *suites.List, label string) error {
	rs := r.opts.Suite
	s := rs.Suite
	var shapes []*batch.Shape
	var target *batch.Shape
	for _, p := range members {
		prepare := ""
		if p.Prepare != nil {
			prepare = site.PrepareSHA256(p.Prepare, r.iso.Env)
		}
		sh := batch.ShapeOf(p, batch.EvidenceFramework(p), prepare, rs.Seed)
		if sh == nil {
			return &flakegate.Error{Code: flakegate.EINTERNAL, Op: "replay", Message: batch.Label(p.Path, p.Name) + ": a suite's test that does not batch"}
		}
		if batch.Label(p.Path, p.Name) == label {
			target = sh
		}
		shapes = append(shapes, sh)
	}
	r.notes = append(r.notes, suiteOrderNote(s, list, members, rs.Seed, rs.Path))
	// A suite's test alone is a batch of one too, as in a check
	// (suiteMember): with its known answers, which runSuite plants.
	r.opts.Argv = batch.Argv(shapes[0], shapes)
	r.opts.WallBudget = time.Duration(len(members)) * s.WallBudget // a batch's budget is its members'
	r.suite = &suiteReplay{framework: shapes[0].Framework, label: label, shape: target, shapes: shapes, seed: rs.Seed,
		goList: func(pkg string) []string { return list.PkgTests[pkg] }, members: len(members), own: s.WallBudget, baseLayer: r.suite.baseLayer}
	return nil
}

// suiteOrderNote says which order the batch runs, in the terms of the
// record's order key (tests and tests_sha256), so that the two compare
// (file is the replayed test's: a vitest or jest order is its file's).
func suiteOrderNote(s *config.Suite, list *suites.List, members []*config.Property, seed flakegate.Seed, file string) string {
	var names []string
	what := "the node ids in their order"
	if s.Framework == config.FrameworkGo {
		pkg := members[0].Run[5]
		names = list.PkgTests[pkg]
		what = "package " + pkg + "'s list, which -shuffle=" + seed.String() + " permutes"
	} else if batch.IsJS(s.Framework) {
		for _, t := range list.Tests {
			if t.File == file {
				names = append(names, t.Name)
			}
		}
		what = file + "'s list, which " + strings.Join(suites.JSOrderFlags(s.Framework, seed), " ") + " permutes"
	} else {
		for _, p := range members {
			names = append(names, batch.Label(p.Path, p.Name))
		}
	}
	h := sha256.Sum256([]byte(strings.Join(names, "\n")))
	return fmt.Sprintf("suite %s %s, order seed %s: %s in the batch; order: %d tests, tests_sha256 %s (%s, listed on the base)",
		s.Framework, s.Path, seed, tests(len(members)), len(names), hex.EncodeToString(h[:]), what)
}

// runSuite runs cmd, the batch, and judges the named test from the
// framework's report as a check judges a batch's member.
func (r *Replay) runSuite(ctx context.Context, cmd attempt.Command, output io.Writer) attempt.Outcome {
	rs := r.suite
	rep := batch.NewReport(rs.framework, r.opts.Dir)
	cmd.NoTestMarkers = []string{}
	failed := func(err error) attempt.Outcome {
		return attempt.Outcome{Result: attempt.Errored, ExitCode: -1, Started: time.Now(), Reason: err.Error()}
	}
	known, undo, err := batch.ArmKnown(&cmd, batch.KnownPlan{Framework: rs.framework, Dir: r.opts.Dir, Members: rs.shapes, Seed: rs.seed, GoList: rs.goList}, rs.shapes[0])
	if err != nil {
		return failed(err)
	}
	defer undo()
	file, err := batch.AddReportFile(&cmd, rs.framework) // batch/report.go
	if err != nil {
		return failed(err)
	}
	if file != "" {
		defer os.RemoveAll(filepath.Dir(file))
	}
	cmd.Output = rep
	if output != nil {
		cmd.Output = io.MultiWriter(output, rep)
	}
	out := attempt.Run(ctx, cmd)
	batch.ReadReportFile(rep, file, cmd)
	tr := rep.Of(rs.shape)
	o, rerun := batch.Judge(rs.framework, rs.label, rs.own, rep, tr, out, rs.members, cmd.WallBudget)
	if why := known.Judge(rep, out).Wrong[batch.KnownScope(rs.shape)]; why != "" && !rerun && (o.Result == attempt.Pass || o.Result == attempt.Fail) {
		o.Result, o.Reason = attempt.Errored, batch.KnownReason(why)
	}
	if rerun {
		o.Result, o.Reason = attempt.Errored, rs.label+" did not start: the batch was killed before it"
	}
	if o.Result == attempt.Errored && o.Tail == "" {
		o.Tail = out.Tail
	}
	o.OutputBytes = out.OutputBytes
	how := "exited " + fmt.Sprint(out.ExitCode)
	if out.ExitCode < 0 {
		how = "ended: " + out.Reason
	}
	switch o.Result {
	case attempt.Pass:
		rs.judged = fmt.Sprintf("%s passed in the batch of %d tests (%s %s)", rs.label, rs.members, rs.framework, how)
	case attempt.Fail:
		rs.judged = fmt.Sprintf("%s failed in the batch of %d tests (%s %s)", rs.label, rs.members, rs.framework, how)
	}
	return o
}

// Judged says, after Run, what a suite's batch said of the replayed
// test ("" for a command judged alone, or no result).
func (r *Replay) Judged() string {
	if r.suite == nil {
		return ""
	}
	return r.suite.judged
}

// Argv is the command the replay runs: for a suite's triple, the batch
// New made.
func (r *Replay) Argv() []string { return r.opts.Argv }

// tests says n tests ("1 test").
func tests(n int) string {
	if n == 1 {
		return "1 test"
	}
	return fmt.Sprintf("%d tests", n)
}
