// Package suites gates config suites: every test a suite's framework
// lists in the base tree becomes a property of its own. It lists a
// suite per framework (go.go, pytest.go, js.go) through a Lister whose
// processes are run by functions its caller gives it (check over its
// site: Env, site.go; replay over its own sandbox), keeps the base's
// listing between checks (cache.go, baselist.go), expands a check's
// suites into properties and counts them for doctor (expand.go), builds
// each test's property and run (property.go), orders a suite's triples
// (order.go), decides impact over a check's trees (decide.go,
// decidepy.go, decidejs.go) and plans the runs it leaves (impact.go).
// It never imports check, nor batch (which imports it): the process
// runs and the site's own steps come to it as functions (Env).
//
// Suites (config suites:): every test the framework lists in the base
// tree is a property of its own, one triple per order seed, batched per
// Go package and seed (per pytest, vitest or jest suite and seed). How the patch's own
// test files are kept from grading it:
//
//   - The candidate's trees are a graded candidate: the candidate's
//     commit with every test file of a suite's scope (*_test.go under a
//     go suite's packages; test_*.py and *_test.py under a pytest suite's
//     path; *.test.* and *.spec.* files, and files under __tests__, under
//     a vitest or jest suite's path) taken from the base, and the test files the patch adds left
//     out (check's gradedCandidate, git.OverlayCommit). The base's tests run on
//     the candidate's code with the base's test files, so a new or edited
//     test file in the same package (its init, its TestMain, its extra
//     tests in the shuffle) cannot change how they run.
//   - A test file the patch edits or deletes is in the diff, and the
//     triples of its tests are CONTAMINATED (the property's file is
//     watched). The other test files of a Go package are not watched for
//     a suite's test (unlike a property): the graded tree does not run
//     them, so a fix with a new test in a new file keeps the package's
//     gate.
//   - The tests the candidate adds (in its own list, not the base's) run
//     new_test_runs times on the candidate's own tree (package
//     newtests).
//
// A patch that only adds a test file: the graded candidate is the base's
// tree plus nothing, so every base triple runs (and passes where the
// base passes), and the new tests are tried new_test_runs times.
//
// A suite's test list comes from the framework itself, run in the
// sandbox on a tree: `go list` and `go test -json -list .` for go,
// `pytest --collect-only -q` for pytest, vitest's list and a jest run
// that selects no test for vitest and jest (js.go).
package suites

import (
	"context"
	"strconv"
	"strings"

	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/config"
)

// Test is one test a suite's framework lists.
type Test struct {
	Pkg  string // go: the package's folder argument ("./p"); pytest: ""
	File string // the test's file, repo-relative
	Name string // go: the test's name; pytest: the node id after "file::"
}

// List is what a suite's framework listed in one tree.
type List struct {
	Tests []Test
	// PkgTests are a go package's names as go test -list printed them
	// (the list -shuffle permutes); Rapid marks the packages that use
	// rapid.
	PkgTests map[string][]string
	Rapid    map[string]bool
	// Python is the interpreter that runs pytest in the sandbox, and
	// Hypothesis says it has Hypothesis (pytest).
	Python     string
	Hypothesis bool
	// Unnamed counts the node ids pytest's listing printed that no triple
	// can name (over config.MaxNameLength bytes, or with a control
	// character), and UnnamedSome shows the first few: they are not
	// gated, and the check says so.
	Unnamed     int
	UnnamedSome []string
	// Skips are the tests ("file::name") the base skips or expects to
	// fail, each with "skipped" or "xfail": pytest's marks that hold
	// (pytestSkips), a go test its fill's run skipped (MarkGoSkips).
	// SkipPlan says why pytest's could not be told ("" when they could). Such a test
	// never passes on the base either, so it is not gated, and the check
	// says so (Gated).
	Skips    map[string]string
	SkipPlan string
	// NotRun are the listed or declared functions of a go suite that go
	// test does not run as a test (benchmarks, examples without
	// output), by kind: not gated, and said.
	NotRun NotRunSet
	// Key names a kept pytest listing of the base (cache.go): what
	// decides it decides the base's session too (decidepy.go); "" when
	// it is not kept.
	Key string
}

// NotRunSet counts what a suite does not gate, by kind, and keeps the
// first few of each.
type NotRunSet map[string]*NotRunKind

// NotRunKind is one kind of a NotRunSet: how many, and the first few.
type NotRunKind struct {
	N    int
	Some []string
}

func (s *NotRunSet) add(kind, id string) {
	if *s == nil {
		*s = NotRunSet{}
	}
	k := (*s)[kind]
	if k == nil {
		k = &NotRunKind{}
		(*s)[kind] = k
	}
	k.N++
	if len(k.Some) < 3 {
		k.Some = append(k.Some, ShortID(id))
	}
}

// Gated reports whether test t of suite s becomes triples: not excluded
// by the suite, and not one the base skips.
func (l *List) Gated(s *config.Suite, t Test) bool {
	return !s.Excluded(t.Name) && l.Skips[t.File+"::"+t.Name] == ""
}

// leaveOut counts a listed test no triple can name.
func (l *List) leaveOut(id string) {
	l.Unnamed++
	if len(l.UnnamedSome) < 3 {
		l.UnnamedSome = append(l.UnnamedSome, id)
	}
}

// ShortID is a test's id as a "not gated" line shows it: quoted, and cut
// at 80 bytes.
func ShortID(id string) string {
	if len(id) > 80 {
		id = id[:77] + "..."
	}
	return strconv.QuoteToGraphic(id)
}

// MaxListOutput bounds what a listing command may print.
const MaxListOutput = 64 << 20

// Lister runs the listing commands of a suite in one tree: a
// check's base worktree (Env.List, site.go), or a replay's checkout of
// the base (replay/suite.go). Its processes are run by the
// functions it is given: it starts none itself.
type Lister struct {
	Dir string
	Run func(ctx context.Context, argv []string) (attempt.Outcome, []byte, error)
	// RunReport runs argv with the report file flag+F added (vitest and
	// jest write their list there) and returns the outcome, the output,
	// the file's content and the folder the framework ran in as it saw it
	// (nil: the lister cannot list a vitest or jest suite).
	RunReport func(ctx context.Context, argv []string, flag string) (attempt.Outcome, []byte, []byte, string, error)
	Fail      func(format string, args ...any) error
	// Prepared is the folder of the prepared layer the commands run over
	// ("" for none): what a prepare installed (node_modules) is there.
	Prepared func(ctx context.Context) (string, error)
	// Marks asks which tests the base skips or expects to fail
	// (pytestSkips): set for a listing of the base, whose list gates;
	// a candidate's listing names its new tests only.
	Marks bool
}

// List lists suite s.
func (l *Lister) List(ctx context.Context, s *config.Suite) (*List, error) {
	switch s.Framework {
	case config.FrameworkGo:
		return l.listGo(ctx, s)
	case config.FrameworkVitest, config.FrameworkJest:
		return l.listJS(ctx, s) // js.go
	}
	return l.listPytest(ctx, s)
}

// Fresh are the tests of suite s the candidate's own list cand holds
// that its triples do not grade: those the base's list base lacks (a go
// test is known by its package and name, wherever its file), and those
// changed says the patch changes (their base version runs as triples on
// the graded tree; these run on the candidate's own). An excluded test
// is neither.
func Fresh(s *config.Suite, base, cand *List, changed func(t Test) bool) []Test {
	known := map[string]bool{}
	for _, bt := range base.Tests {
		known[bt.Pkg+"\x00"+bt.File+"\x00"+bt.Name] = true
		known[bt.Pkg+"\x00"+bt.Name] = s.Framework == config.FrameworkGo
	}
	var fresh []Test
	for _, ct := range cand.Tests {
		listed := known[ct.Pkg+"\x00"+ct.File+"\x00"+ct.Name] || known[ct.Pkg+"\x00"+ct.Name]
		if s.Excluded(ct.Name) || listed && !changed(ct) {
			continue // a test the base lists, unchanged: graded by its triples
		}
		fresh = append(fresh, ct)
	}
	return fresh
}

// LastLines is the end of a command's output for a message.
func LastLines(out []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
