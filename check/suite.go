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
//     out (gradedCandidate, git.OverlayCommit). The base's tests run on
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
//     new_test_runs times on the candidate's own tree (suitenew.go).
//
// A patch that only adds a test file: the graded candidate is the base's
// tree plus nothing, so every base triple runs (and passes where the
// base passes), and the new tests are tried new_test_runs times.

package check

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/gocache"
)

// suiteTest is one test a suite's framework lists.
type suiteTest struct {
	pkg  string // go: the package's folder argument ("./p"); pytest: ""
	file string // the test's file, repo-relative
	name string // go: the test's name; pytest: the node id after "file::"
}

// suiteList is what a suite's framework listed in one tree.
type suiteList struct {
	tests []suiteTest
	// pkgTests are a go package's names as go test -list printed them
	// (the list -shuffle permutes); rapid marks the packages that use
	// rapid.
	pkgTests map[string][]string
	rapid    map[string]bool
	// python is the interpreter that runs pytest in the sandbox, and
	// hypothesis says it has Hypothesis (pytest).
	python     string
	hypothesis bool
	// unnamed counts the node ids pytest's listing printed that no triple
	// can name (over config.MaxNameLength bytes, or with a control
	// character), and unnamedSome shows the first few: they are not
	// gated, and the check says so.
	unnamed     int
	unnamedSome []string
	// skips are the tests ("file::name") the base skips or expects to
	// fail, each with "skipped" or "xfail": pytest's marks that hold
	// (pytestSkips), a go test its fill's run skipped (markGoSkips).
	// skipPlan says why pytest's could not be told ("" when they could). Such a test
	// never passes on the base either, so it is not gated, and the check
	// says so (gated).
	skips    map[string]string
	skipPlan string
	// notRun are the listed or declared functions of a go suite that go
	// test does not run as a test (benchmarks, examples without
	// output), by kind: not gated, and said.
	notRun notRunSet
	// key names a kept pytest listing of the base (suitecachepy.go): what
	// decides it decides the base's session too (impactpy.go); "" when
	// it is not kept.
	key string
}

// notRunSet counts what a suite does not gate, by kind, and keeps the
// first few of each.
type notRunSet map[string]*notRunKind

type notRunKind struct {
	n    int
	some []string
}

func (s *notRunSet) add(kind, id string) {
	if *s == nil {
		*s = notRunSet{}
	}
	k := (*s)[kind]
	if k == nil {
		k = &notRunKind{}
		(*s)[kind] = k
	}
	k.n++
	if len(k.some) < 3 {
		k.some = append(k.some, shortID(id))
	}
}

// gated reports whether test t of suite s becomes triples: not excluded
// by the suite, and not one the base skips.
func (l *suiteList) gated(s *config.Suite, t suiteTest) bool {
	return !s.Excluded(t.name) && l.skips[t.file+"::"+t.name] == ""
}

// leaveOut counts a listed test no triple can name.
func (l *suiteList) leaveOut(id string) {
	l.unnamed++
	if len(l.unnamedSome) < 3 {
		l.unnamedSome = append(l.unnamedSome, id)
	}
}

// suiteState is what a check keeps of its suites.
type suiteState struct {
	graded   string             // the graded candidate's commit (gradedCandidate)
	lists    map[int]*suiteList // the base's lists, by suite index
	orders   suiteOrders
	newTests []flakegate.NewTest
	// changed are the base's tests the patch changes, by changedKey
	// (graded.go, noteChangedTests).
	changed map[string]bool
	// impacts are impact's decisions, one per suite it was asked of
	// (impact.go), for the summary.
	impacts []flakegate.SuiteImpact
	// noImpact says why this check decides no impact ("" when it may).
	noImpact string
}

// suiteOrders are the orders of a check's suite triples, by property and
// seed (filled by orderSuites, read by the record).
type suiteOrders map[*config.Property]map[flakegate.Seed]*flakegate.SuiteOrder

// inSuiteScope reports whether rel is a test file of the suite's scope:
// the files the graded candidate takes from the base.
func inSuiteScope(s *config.Suite, rel string) bool {
	base := path.Base(rel)
	switch s.Framework {
	case config.FrameworkGo:
		if !strings.HasSuffix(base, "_test.go") {
			return false
		}
		dir := path.Dir(rel)
		pat := strings.TrimPrefix(s.Path, "./")
		if rest, ok := strings.CutSuffix(pat, "..."); ok {
			rest = strings.TrimSuffix(rest, "/")
			return rest == "" || rest == "." || dir == rest || strings.HasPrefix(dir, rest+"/")
		}
		return dir == pat || pat == "." && dir == "."
	case config.FrameworkPytest:
		if !strings.HasSuffix(base, ".py") || !(strings.HasPrefix(base, "test_") || strings.HasSuffix(base, "_test.py")) {
			return false
		}
		return s.Path == "." || rel == s.Path || strings.HasPrefix(rel, s.Path+"/")
	case config.FrameworkVitest, config.FrameworkJest:
		return isJSTestFile(rel) && (s.Path == "." || rel == s.Path || strings.HasPrefix(rel, s.Path+"/"))
	}
	return false
}

// gradedCandidate returns the commit the candidate's trees check out:
// the graded tree (graded.go), the candidate's code with the base's tests
// and what decides how they run; the candidate itself when the patch
// changes none of that. The diff the records carry becomes the graded
// tree's (what ran).
func (c *checker) gradedCandidate(ctx context.Context) (string, error) {
	gt, err := makeGraded(ctx, c.git, c.cfg, c.baseSHA, c.candSHA, c.watch)
	if err != nil {
		return "", err
	}
	c.graded = gt
	if gt.sha != c.candSHA {
		if c.diff, err = c.git.DiffNames(ctx, c.baseSHA, gt.sha); err != nil {
			return "", err
		}
	}
	return gt.sha, nil
}

// expandSuites lists every suite's tests in the base tree and adds one
// property per test to the config, after the config's own properties. A
// test a property already names (same file and name) is gated once, as
// the property.
func (c *site) expandSuites(ctx context.Context) error {
	if len(c.cfg.Suites) == 0 {
		return nil
	}
	named := map[string]bool{}
	for _, p := range c.cfg.Properties {
		named[p.Path+"\x00"+p.Name] = true
	}
	c.suite.lists = map[int]*suiteList{}
	base := c.trees.workers[0].base
	for i := range c.cfg.Suites {
		s := &c.cfg.Suites[i]
		list, err := c.baseSuiteList(ctx, s, base)
		if err != nil {
			return err
		}
		c.suite.lists[i] = list
		if list.unnamed > 0 {
			some := make([]string, len(list.unnamedSome))
			for k, id := range list.unnamedSome {
				some[k] = shortID(id)
			}
			verb := "tests are"
			if list.unnamed == 1 {
				verb = "test is"
			}
			c.say(fmt.Sprintf("suites[%d]: %d listed %s not gated: a name longer than %d bytes or with a control character cannot be a triple's (%s)",
				i, list.unnamed, verb, config.MaxNameLength, strings.Join(some, ", ")))
		}
		c.goBaseSkips(s, list, base.dir)
		c.saySkips(i, list)
		c.sayNotRun(i, list)
		fixture := ""
		if s.FixtureRoot != "" && c.checkBaseFile(base.dir, fmt.Sprintf("suites[%d].fixture", i), s.FixtureRoot, "fixture") == nil {
			fixture = s.FixtureRoot
		}
		si, err := c.impactSuite(ctx, i, s, list)
		if err != nil {
			return err
		}
		for _, t := range list.tests {
			if !list.gated(s, t) || named[t.file+"\x00"+t.name] {
				continue
			}
			if si != nil && si.unaffected[si.unitOf(t)] {
				continue // impact: its base result stands
			}
			named[t.file+"\x00"+t.name] = true
			p := suiteProperty(c.cfg, s, t, list, fixture)
			if si != nil {
				p.RandomSeeds += si.extra
			}
			c.cfg.Properties = append(c.cfg.Properties, p)
		}
	}
	return nil
}

// goBaseSkips marks the tests of go suite s that the base's own run of
// the suite skipped (t.Skip; the fill runs every go suite once on the
// base, trusted code, and records them): such a test passes on no tree,
// so it is not gated. dir is the base tree (its go.mod names the module).
func (c *site) goBaseSkips(s *config.Suite, list *suiteList, dir string) {
	if c.goc != nil {
		markGoSkips(c.goc, c.goc.FillKey(), s, list, dir)
	}
}

// markGoSkips marks in list what the fill from key recorded as skipped
// by the base (a replay's key is the base's, BaseKey).
func markGoSkips(gc *gocache.Caches, key string, s *config.Suite, list *suiteList, dir string) {
	if s.Framework != config.FrameworkGo {
		return
	}
	skipped, ok := gc.BaseSkipped(key)
	if !ok || len(skipped) == 0 {
		return
	}
	module, err := goModulePath(filepath.Join(dir, "go.mod"))
	if err != nil {
		return
	}
	for _, t := range list.tests {
		imp := module
		if t.pkg != "." {
			imp += "/" + strings.TrimPrefix(t.pkg, "./")
		}
		if skipped[imp+"\x00"+t.name] {
			if list.skips == nil {
				list.skips = map[string]string{}
			}
			list.skips[t.file+"::"+t.name] = "skipped"
		}
	}
}

// shortID is a test's id as a "not gated" line shows it: quoted, and cut
// at 80 bytes.
func shortID(id string) string {
	if len(id) > 80 {
		id = id[:77] + "..."
	}
	return strconv.QuoteToGraphic(id)
}

// saySkips says which listed tests of suite i the base skips, and so
// are not gated, or that pytest could not tell them.
func (c *site) saySkips(i int, list *suiteList) {
	if list.skipPlan != "" {
		c.say(fmt.Sprintf("suites[%d]: cannot tell which tests the base skips (%s): a test that skips itself is INCOMPLETE in every check; name it in exclude:", i, list.skipPlan))
	}
	if len(list.skips) == 0 {
		return
	}
	var some []string
	for _, t := range list.tests {
		if w := list.skips[t.file+"::"+t.name]; w != "" && len(some) < 3 {
			some = append(some, shortID(t.file+"::"+t.name)+" "+w)
		}
	}
	verb, them := "tests are", "them"
	if len(list.skips) == 1 {
		verb, them = "test is", "it"
	}
	c.say(fmt.Sprintf("suites[%d]: %d listed %s not gated: the base skips %s or expects %s to fail, so no run of %s passes (%s)",
		i, len(list.skips), verb, them, them, them, strings.Join(some, ", ")))
}

// sayNotRun says which functions of suite i's go test files are not
// gated because go test does not run them as the suite runs it.
func (c *site) sayNotRun(i int, list *suiteList) {
	for _, kind := range []string{notRunBench, notRunExample} {
		k := list.notRun[kind]
		if k == nil {
			continue
		}
		c.say(fmt.Sprintf("suites[%d]: %s not gated: %s (%s)", i, count(k.n, "function is", "functions are"), kind, strings.Join(k.some, ", ")))
	}
}

// suiteProperty is the property of one test of suite s in cfg, with
// the fixture the suite's triples digest ("" for none).
func suiteProperty(cfg *config.Config, s *config.Suite, t suiteTest, list *suiteList, fixture string) config.Property {
	return config.Property{Path: t.file, Name: t.name, Fixture: fixture, Seeds: s.Seeds, RandomSeeds: s.RandomSeeds,
		WallBudget: s.WallBudget, FlakeProbeRuns: cfg.FlakeProbeRuns, Index: len(cfg.Properties), Prepare: cfg.Prepare,
		Framework: s.Framework, FrameworkSet: true, Batch: true, Suite: s, Run: suiteRun(s, t, list)}
}

// suiteRun is the run template of one suite test: the batch shape of its
// framework (batchplan.go), with the order seed where the framework
// takes it.
func suiteRun(s *config.Suite, t suiteTest, list *suiteList) []string {
	switch s.Framework {
	case config.FrameworkGo:
		run := []string{"go", "test", "-shuffle={seed}", "-run", "^{name}$", t.pkg}
		if list.rapid[t.pkg] {
			run = append(run, "-rapid.seed={seed}")
		}
		return run
	case config.FrameworkVitest, config.FrameworkJest:
		return append(jsSuiteLead(s.Framework, "{seed}"), "{path}", "-t", "^{name}$") // suitejs.go
	}
	run := append(pytestSuiteArgv(s, list.python), "{path}::{name}")
	if list.hypothesis {
		run = append(run, "--hypothesis-seed={seed}")
	}
	return run
}

// pytestSuiteArgv starts every pytest command of suite s (its listing,
// its batches, its new tests), run by python (the interpreter the
// listing found, pytestPython): node ids are relative to the repository
// root (--rootdir=.), no cache is written or read (it could reorder the
// next run: --ff, --lf), and pytest-randomly, if installed, does not
// reorder what flakegate ordered. A suite's pythonpath comes first, as
// env PYTHONPATH=a:b (relative folders: Python reads them from the
// repository root, where the commands run).
func pytestSuiteArgv(s *config.Suite, python string) []string {
	argv := []string{python, "-m", "pytest", "--rootdir=.", "-p", "no:cacheprovider", "-p", "no:randomly"}
	if len(s.PythonPath) > 0 {
		argv = append([]string{"env", "PYTHONPATH=" + strings.Join(s.PythonPath, ":")}, argv...)
	}
	return argv
}

// pytestRank is where a node id goes in the order of seed: node ids are
// sorted by it.
func pytestRank(seed flakegate.Seed, node string) string {
	h := sha256.Sum256([]byte(seed.String() + "\x00" + node))
	return hex.EncodeToString(h[:])
}

// orderSuites puts the jobs of each suite in the order their batches run
// (go: by package, then name; pytest: by each seed's shuffle; vitest and
// jest: as listed, the framework shuffles them), in the
// places the suite's jobs held, renumbers every job and notes the order
// of each suite triple for its record.
func (c *checker) orderSuites(jobs []job) []job {
	c.suite.orders = suiteOrders{}
	bySuite := map[*config.Suite][]int{}
	for i := range jobs {
		if s := jobs[i].ps.prop.Suite; s != nil {
			bySuite[s] = append(bySuite[s], i)
		}
	}
	for s, slots := range bySuite {
		list := c.suite.lists[s.Index]
		js := make([]job, len(slots))
		for k, i := range slots {
			js[k] = jobs[i]
		}
		sort.SliceStable(js, func(a, b int) bool {
			ja, jb := &js[a], &js[b]
			if ja.seed != jb.seed {
				return seedBefore(ja, jb)
			}
			if s.Framework == config.FrameworkGo {
				if ja.ps.prop.Run[5] != jb.ps.prop.Run[5] {
					return ja.ps.prop.Run[5] < jb.ps.prop.Run[5]
				}
				return ja.ps.prop.Name < jb.ps.prop.Name
			}
			if s.Framework != config.FrameworkPytest {
				return false // vitest, jest: the list's order
			}
			return pytestRank(ja.seed, memberLabel(ja)) < pytestRank(jb.seed, memberLabel(jb))
		})
		for k, i := range slots {
			jobs[i] = js[k]
		}
		c.noteOrders(s, list, js)
	}
	for i := range jobs {
		jobs[i].index = i
	}
	return jobs
}

// seedBefore orders two seeds of a suite: listed seeds first, in the
// suite's order, then the others by value.
func seedBefore(a, b *job) bool {
	seeds := a.ps.prop.Seeds
	ia, ib := slices.Index(seeds, a.seed), slices.Index(seeds, b.seed)
	switch {
	case ia >= 0 && ib >= 0:
		return ia < ib
	case ia >= 0 || ib >= 0:
		return ia >= 0
	}
	return a.seed < b.seed
}

// noteOrders records the order of each job of suite s (js in run order).
func (c *checker) noteOrders(s *config.Suite, list *suiteList, js []job) {
	digest := func(names []string) string {
		h := sha256.Sum256([]byte(strings.Join(names, "\n")))
		return hex.EncodeToString(h[:])
	}
	files := map[string][]string{} // vitest, jest: each file's tests as listed
	for _, t := range list.tests {
		files[t.file] = append(files[t.file], t.name)
	}
	nodes := map[flakegate.Seed][]string{}
	for _, j := range js {
		nodes[j.seed] = append(nodes[j.seed], memberLabel(&j))
	}
	for _, j := range js {
		p := j.ps.prop
		o := &flakegate.SuiteOrder{Framework: s.Framework, Seed: j.seed}
		if s.Framework == config.FrameworkGo {
			pkg := p.Run[5]
			o.Package, o.Flags = pkg, []string{"-shuffle=" + j.seed.String()}
			if list.rapid[pkg] {
				o.Flags = append(o.Flags, "-rapid.seed="+j.seed.String())
			}
			o.Tests, o.TestsSHA256 = len(list.pkgTests[pkg]), digest(list.pkgTests[pkg])
		} else if s.Framework != config.FrameworkPytest {
			o.File, o.Flags = p.Path, jsOrderFlags(s.Framework, j.seed)
			o.Tests, o.TestsSHA256 = len(files[p.Path]), digest(files[p.Path])
		} else {
			if list.hypothesis {
				o.Flags = []string{"--hypothesis-seed=" + j.seed.String()}
			}
			o.Tests, o.TestsSHA256 = len(nodes[j.seed]), digest(nodes[j.seed])
		}
		if c.suite.orders[p] == nil {
			c.suite.orders[p] = map[flakegate.Seed]*flakegate.SuiteOrder{}
		}
		c.suite.orders[p][j.seed] = o
	}
}

// suiteKeys are the record's suite and order keys of j ("" and nil for a
// property).
func (c *checker) suiteKeys(j *job) (string, *flakegate.SuiteOrder) {
	s := j.ps.prop.Suite
	if s == nil {
		return "", nil
	}
	return s.Path, c.suite.orders[j.ps.prop][j.seed]
}
