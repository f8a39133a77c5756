// Package grade decides the graded tree of a check: the candidate's code
// under test and its dependencies, with the base's version of everything
// that decides what a test checks or how it runs. It reads file lists and
// files of the two revisions, never runs anything, and says for every
// file it takes from the base why (a Kind), so that the check can tell,
// for one test, which of the patch's edits the graded tree took back
// (Plan.EditsFor).
//
// Which side each kind of file is on, by framework (docs/suites.md has
// the table and the reasons):
//
//   - go: the *_test.go files of the scope's packages, everything under
//     a testdata/ folder of those packages, the other files of a package
//     folder that no product code embeds (tests read them by relative
//     path), go.work and go.work.sum, and the go, toolchain and godebug
//     lines of go.mod are the base's; the rest of go.mod (require,
//     replace: the candidate's dependencies) and an embedded file are
//     the candidate's.
//   - pytest: test files, every conftest.py from the root down to and
//     under the scope, pytest.ini and .pytest.ini, and every file of a
//     test folder (__init__.py, helpers, data) are the base's.
//   - vitest, jest: test files, __snapshots__, __mocks__, the files of a
//     test folder, the framework's config files and the setup files the
//     base's config names are the base's.
//
// A declared fixture, a generator, the gate's config and a ledger inside
// the repository stay the candidate's: the table's own rows judge them.
//
// Where the code is:
//
//	grade.go        Build: the Plan of the graded tree (which file is the
//	                base's, and why), by framework: gofiles.go and gomod.go
//	                (go), pytestconf.go and plugins.go (pytest), pyjs.go and
//	                npmlock.go (pytest, vitest, jest test files; the locked
//	                test tooling)
//	graded.go       MakeGraded: the graded tree of a check or a replay built
//	                from a git repository, Build's Plan made a commit
//	edits.go        the patch's edits the graded tree takes back, and which
//	                of them grade a test
//	changed*.go     which of the base's tests the patch changes (go, py, js)
//	watch.go        what a property is graded against: its watched globs
//	                (with grade/infra's finds), the digests binding a freeze
//	                to its command and config entry, explain-watch's list
//	preflight.go    the Grader: a check's properties checked against the
//	                base worktree and digested on both sides, the diff paths
//	                that make their triples CONTAMINATED
//	preparewatch.go what a prepare wrote to watched paths (CONTAMINATED,
//	                FIXTURE)
//	gradertests.go  a test's run against the graded tree: the edits that
//	                make a failure of its base version CONTAMINATED, and the
//	                tests the patch changes
package grade

import (
	"context"
	"path"
	"sort"
	"strings"

	"github.com/flakegate/flakegate/config"
)

// Kind says why a file is the base's in the graded tree.
type Kind string

// The kinds of file the graded tree takes from the base.
const (
	TestFile     Kind = "a test file"
	GoTestdata   Kind = "testdata of the Go package"
	GoData       Kind = "a file of the Go package that product code does not embed"
	GoWork       Kind = "the Go workspace file"
	GoMod        Kind = "go.mod's go, toolchain and godebug lines"
	Conftest     Kind = "a conftest.py"
	PytestIni    Kind = "pytest's ini file"
	TestFolder   Kind = "a file of a test folder"
	Snapshot     Kind = "a snapshot"
	Mock         Kind = "a manual mock"
	JSConfig     Kind = "the test framework's config"
	JSSetup      Kind = "a setup file the base's config names"
	JSFramework  Kind = "the test framework as the tree holds it (node_modules, Plug'n'Play)"
	PropertyFile Kind = "the property file"
)

// Entry is one file the graded tree takes from the base: why, and the
// folder that says which tests it grades (the Go package, the conftest's
// folder, the top test folder, the test files' folder of a snapshot).
type Entry struct {
	Kind Kind
	Dir  string
	// Family is the tests it grades: "go", "py" or "js" ("" for a test
	// file or a property file, which grade their own tests).
	Family string
}

// Scope is what one suite or property asks of the graded tree.
type Scope struct {
	// Framework is the config's framework (go, pytest, vitest, jest,
	// none).
	Framework string
	// Path is a suite's path (go: a package pattern; others: a folder or
	// a file) or, with Property, the property's file.
	Path     string
	Property bool
}

// Tree is one revision: its files, and a reader of their contents (one
// call for many files; a file it cannot read is absent from the map).
type Tree struct {
	Files map[string]bool
	Read  func(ctx context.Context, paths []string) (map[string][]byte, error)
}

// Input is what a plan is made from.
type Input struct {
	Base, Cand Tree
	Scopes     []Scope
	// Keep are paths, or folders ending in "/", that stay the
	// candidate's whatever the scopes say: fixtures, generators, the
	// config, an in-repository ledger.
	Keep []string
	// Setup are files the base's vitest or jest config names as setup
	// files (grade/infra reads them); they are the base's.
	Setup []string
	// Diff are the paths the patch changes (git diff --name-only from
	// the base to the candidate).
	Diff []string
}

// File is a file the graded tree holds with bytes of its own.
type File struct {
	Path string
	Data []byte
}

// Plan is the graded tree: what it takes from the base, what it writes.
type Plan struct {
	base map[string]Entry
	// Write are the files the graded tree holds with bytes of their own:
	// a go.mod with the base's go, toolchain and godebug lines.
	Write []File
	// goModEdits are the go.mod files whose directives the candidate
	// changes (and the graded tree takes back).
	goModEdits map[string]string // path -> module root
	// Watched are files the graded tree cannot take from the base (a
	// go.mod it cannot read with certainty, a pytest plugin outside the
	// test folders), each with why: the check watches them for the tests
	// of their framework (WatchedFor).
	Watched map[string]string
}

// Pick reports whether the graded tree takes p from the base (a file the
// base lacks is left out).
func (p *Plan) Pick(f string) bool {
	_, ok := p.base[f]
	return ok
}

// WatchedFor lists the files of Watched a test of framework is graded
// against, with why: go.mod for go, a plugin for pytest.
func (p *Plan) WatchedFor(framework string) map[string]string {
	out := map[string]string{}
	for f, why := range p.Watched {
		if (path.Base(f) == "go.mod") == (framework == config.FrameworkGo) && (framework == config.FrameworkGo || framework == config.FrameworkPytest) {
			out[f] = why
		}
	}
	return out
}

// Entry is why f is the base's, and whether it is.
func (p *Plan) Entry(f string) (Entry, bool) {
	e, ok := p.base[f]
	return e, ok
}

// Build makes the plan of in.
func Build(ctx context.Context, in Input) (*Plan, error) {
	b := &builder{in: in, plan: &Plan{base: map[string]Entry{}, goModEdits: map[string]string{}, Watched: map[string]string{}}}
	b.all = map[string]bool{}
	for f := range in.Base.Files {
		b.all[f] = true
	}
	for f := range in.Cand.Files {
		b.all[f] = true
	}
	for _, s := range in.Scopes {
		switch s.Framework {
		case config.FrameworkGo:
			b.goScopes = append(b.goScopes, s)
		case config.FrameworkPytest:
			b.pyScopes = append(b.pyScopes, s)
		case config.FrameworkVitest, config.FrameworkJest:
			b.jsScopes = append(b.jsScopes, s)
		default:
			if s.Property {
				b.add(s.Path, Entry{Kind: PropertyFile, Dir: path.Dir(s.Path)})
			}
		}
	}
	if err := b.goFiles(ctx); err != nil {
		return nil, err
	}
	b.pyFiles()
	b.jsFiles()
	for _, f := range in.Setup {
		b.add(f, Entry{Kind: JSSetup, Dir: path.Dir(f), Family: "js"})
	}
	for f := range b.plan.base {
		if b.kept(f) {
			delete(b.plan.base, f)
		}
	}
	if len(b.pyScopes) > 0 {
		if err := b.pyPlugins(ctx); err != nil {
			return nil, err
		}
	}
	return b.plan, nil
}

// builder is one Build.
type builder struct {
	in                           Input
	plan                         *Plan
	all                          map[string]bool // the files of both trees
	goScopes, pyScopes, jsScopes []Scope
	diffSet                      map[string]bool
	byDir                        map[string][]string // the files of both trees by folder
}

// diff is Input.Diff as a set.
func (b *builder) diff() map[string]bool {
	if b.diffSet == nil {
		b.diffSet = map[string]bool{}
		for _, d := range b.in.Diff {
			b.diffSet[d] = true
		}
	}
	return b.diffSet
}

// inDir lists the files of both trees directly in dir.
func (b *builder) inDir(dir string) []string {
	if b.byDir == nil {
		b.byDir = map[string][]string{}
		for _, f := range sorted(b.all) {
			b.byDir[path.Dir(f)] = append(b.byDir[path.Dir(f)], f)
		}
	}
	return b.byDir[dir]
}

// add takes f from the base for e, unless a kind that says more already
// took it (the first kind wins: test files, then conftest and config,
// then folders).
func (b *builder) add(f string, e Entry) {
	if _, ok := b.plan.base[f]; !ok {
		b.plan.base[f] = e
	}
}

// kept reports whether f stays the candidate's (Input.Keep).
func (b *builder) kept(f string) bool {
	for _, k := range b.in.Keep {
		if f == k || strings.HasSuffix(k, "/") && strings.HasPrefix(f, k) || k != "" && strings.HasPrefix(f, k+"/") {
			return true
		}
	}
	return false
}

// sorted is the keys of m, sorted.
func sorted(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// under reports whether f is dir or inside it ("." holds everything).
func under(f, dir string) bool {
	return dir == "." || f == dir || strings.HasPrefix(f, dir+"/")
}

// ancestors lists dir and every folder above it, up to ".".
func ancestors(dir string) []string {
	var out []string
	for d := dir; ; d = path.Dir(d) {
		out = append(out, d)
		if d == "." || d == "/" {
			return out
		}
	}
}

// hiddenSegment reports whether a segment of f (not its base name) is a
// folder no test folder rule looks into: a dependency's (node_modules,
// site-packages), a virtual environment's or a tool's (a name starting
// with a dot).
func hiddenSegment(f string) bool {
	segs := strings.Split(path.Dir(f), "/")
	for _, s := range segs {
		if s == "node_modules" || s == "site-packages" || s == "dist-packages" || s == "__pycache__" || strings.HasPrefix(s, ".") && s != "." {
			return true
		}
	}
	return false
}
