// Batch planning: which triples run as one process, and the command of
// that process, built from the members' run templates.
//
// A triple joins a batch only when its run template has the standard
// shape of its framework, with the test selection in one recognised
// place:
//
//	go test [FLAGS] -run ^{name}$ ./PKG [FLAGS]      (the -run value exactly ^{name}$)
//	pytest|python -m pytest [OPTS] {path}::{name} [OPTS]
//	jest, vitest: RUNNER [OPTS] {path} [OPTS] -t ^{name}$ [OPTS]   (batchjs.go)
//
// The key of a batch is the side-independent rest of the command: the
// template expanded for the seed with the selection (and, for go, the
// package) taken out, plus the property's prepare. Triples with equal
// keys and the same seed form one batch, in config order; any template
// that does not fit (a {name} or {path} elsewhere, a go flag whose value
// is a separate argument, a package pattern with "...", a subtest name)
// runs alone, exactly as without batches.

package check

import (
	"encoding/json"
	"path"
	"slices"
	"strings"

	"github.com/flakegate/flakegate/evidence"
	"github.com/flakegate/flakegate/template"

	"github.com/flakegate/flakegate/internal/lazyre"
	"github.com/flakegate/flakegate/suites"
)

// batchShape is how one triple's command takes part in a batch.
type batchShape struct {
	framework string
	key       string   // equal keys and seeds batch together
	lead      []string // go: the flags before -run and the packages; pytest: the argv before the node ids
	trail     []string // the arguments after them
	pkg       string   // go: the member's package argument ("./p")
	prog      string   // go: the go the template names ("go", or a path to one)
	test      string   // go: the test's name; pytest: the node id
}

var goTestName = lazyre.New(`^[A-Za-z_][A-Za-z0-9_]*$`)

// goBoolFlags are go test flags that take no separate value.
var goBoolFlags = map[string]bool{"-v": true, "-race": true, "-short": true, "-failfast": true, "-cover": true,
	"-json": true, "-x": true, "-a": true, "-n": true, "-trimpath": true, "-benchmem": true, "-msan": true, "-asan": true}

// shapeOf returns the batch shape of j's triple, nil when it runs alone.
func shapeOf(j *job) *batchShape {
	ps := j.ps
	fw := batchFramework(ps)
	if fw == "" || ps.prop.Name == "" {
		return nil
	}
	argv, err := template.Expand(ps.prop.Run, vars(ps.prop, j.seed))
	if err != nil || len(argv) != len(ps.prop.Run) {
		return nil
	}
	var s *batchShape
	switch fw {
	case evidence.FrameworkGo:
		s = goShape(ps.prop.Run, argv, ps.prop.Name)
	case evidence.FrameworkPytest:
		s = pytestShape(ps.prop.Run, argv, ps.prop.Path+"::"+ps.prop.Name)
	case evidence.FrameworkJest, evidence.FrameworkVitest:
		s = jsShape(fw, ps.prop.Run, argv, ps.prop.Path, ps.prop.Name) // batchjs.go
	}
	if s == nil {
		return nil
	}
	s.framework = fw
	k, _ := json.Marshal([]any{fw, s.lead, s.trail, ps.prepareSHA256})
	switch {
	case ps.prop.Suite != nil && fw == evidence.FrameworkGo:
		k, _ = json.Marshal([]any{fw, s.lead, s.trail, ps.prepareSHA256, "suite", s.pkg, s.prog}) // one process per package and seed
	case s.prog != "" && s.prog != "go":
		// A template that names its go by path batches only with
		// templates of that go, and the batch runs it (batchArgv).
		k, _ = json.Marshal([]any{fw, s.lead, s.trail, ps.prepareSHA256, "go", s.prog})
	}
	s.key = string(k)
	return s
}

// selection returns the index of the one template argument that is
// exactly sel; -1 when there is none, when there are more, or when
// {name} or {path} occurs in any other argument.
func selection(tmpl []string, sel ...string) int {
	at := -1
	for i, a := range tmpl {
		if slices.Contains(sel, a) {
			if at >= 0 {
				return -1
			}
			at = i
			continue
		}
		if template.Uses([]string{a}, "name") || template.Uses([]string{a}, "path") {
			return -1
		}
	}
	return at
}

func goShape(tmpl, argv []string, name string) *batchShape {
	if len(argv) < 3 || path.Base(argv[0]) != "go" || argv[1] != "test" || !goTestName.MatchString(name) {
		return nil
	}
	sel := selection(tmpl, "^{name}$", "-run=^{name}$")
	if sel < 0 {
		return nil
	}
	runFlag := tmpl[sel] == "^{name}$"
	if runFlag && (sel == 0 || argv[sel-1] != "-run") {
		return nil
	}
	s := &batchShape{test: name, prog: argv[0]}
	timeout, count := false, false
	i := 2
	for ; i < len(argv) && strings.HasPrefix(argv[i], "-"); i++ {
		a := argv[i]
		switch {
		case i == sel || runFlag && i == sel-1:
		case a == "-run" && i+1 == sel:
		case a == "-v" || a == "-json" || strings.HasPrefix(a, "-v=") || goFailFast(a):
			// -failfast would leave the members after a failure unrun.
		case strings.Contains(a, "="):
			timeout = timeout || strings.HasPrefix(a, "-timeout=")
			count = count || strings.HasPrefix(a, "-count=")
			s.lead = append(s.lead, a)
		case goBoolFlags[a]:
			s.lead = append(s.lead, a)
		default:
			return nil // a flag whose value may be the next argument
		}
		if runFlag && i == sel-1 {
			i++ // the value
		}
	}
	if i >= len(argv) || i == sel {
		return nil
	}
	pkg := argv[i]
	if pkg != "." && (!strings.HasPrefix(pkg, "./") || strings.Contains(pkg, "...") || "./"+path.Clean(pkg[2:]) != pkg) {
		return nil
	}
	s.pkg = pkg
	for i++; i < len(argv); i++ {
		switch {
		case i == sel || runFlag && i == sel-1:
		case len(s.trail) == 0 && !strings.HasPrefix(argv[i], "-"):
			return nil // a second package
		case goFailFast(argv[i]):
			// A known answer fails in every batch (known.go): -failfast
			// would leave the members after it unrun.
		default:
			timeout = timeout || strings.HasPrefix(argv[i], "-test.timeout") || strings.HasPrefix(argv[i], "-timeout")
			s.trail = append(s.trail, argv[i])
		}
	}
	if !count {
		s.lead = append(s.lead, "-count=1")
	}
	if !timeout {
		// flakegate's budget bounds the batch; go's own default of 10
		// minutes would fail the test that runs at that moment.
		s.lead = append(s.lead, "-timeout=0")
	}
	return s
}

// goFailFast reports whether a is go test's -failfast flag.
func goFailFast(a string) bool {
	a = strings.Replace(a, "-test.", "-", 1)
	return a == "-failfast" || strings.HasPrefix(a, "-failfast=")
}

func pytestShape(tmpl, argv []string, node string) *batchShape {
	sel := selection(tmpl, "{path}::{name}")
	if sel < 1 || strings.ContainsAny(node, " \t\n") {
		return nil
	}
	lead := argv[:sel:sel]
	if at := pytestAt(lead); at >= 0 {
		lead = append(lead[:at+1:at+1], pytestKeepGoing(lead[at+1:])...)
	}
	return &batchShape{test: node, lead: lead, trail: pytestKeepGoing(argv[sel+1:])}
}

// pytestAt is the index of the word that runs pytest in argv (pytest,
// py.test, or the "pytest" of -m pytest), -1 when none.
func pytestAt(argv []string) int {
	for i, a := range argv {
		if b := path.Base(a); b == "pytest" || b == "py.test" || a == "pytest" && i > 0 && argv[i-1] == "-m" {
			return i
		}
	}
	return -1
}

// pytestKeepGoing drops from pytest options those that stop the session
// at the first failures (-x, --exitfirst, --maxfail=N, --sw): a known
// answer fails in every batch (known.go), and the members after it would
// not run.
func pytestKeepGoing(opts []string) []string {
	var out []string
	for i := 0; i < len(opts); i++ {
		a := opts[i]
		switch {
		case a == "-x" || a == "--exitfirst" || a == "--sw" || a == "--stepwise" || strings.HasPrefix(a, "--maxfail="):
		case a == "--maxfail" && i+1 < len(opts):
			i++
		default:
			out = append(out, a)
		}
	}
	return out
}

// batchArgv is the command of a batch of members (in order) of shape s.
func batchArgv(s *batchShape, members []*batchShape) []string {
	switch s.framework {
	case evidence.FrameworkGo:
		names := make([]string, 0, len(members))
		var pkgs []string
		for _, m := range members {
			if !slices.Contains(names, m.test) {
				names = append(names, m.test)
			}
			if !slices.Contains(pkgs, m.pkg) {
				pkgs = append(pkgs, m.pkg)
			}
		}
		prog := s.prog
		if prog == "" {
			prog = "go" // a suite's new test, a known answer: the go on PATH
		}
		argv := []string{prog, "test", "-json"}
		argv = append(argv, s.lead...)
		argv = append(argv, "-run", "^("+strings.Join(names, "|")+")$")
		argv = append(argv, pkgs...)
		return append(argv, s.trail...)
	case evidence.FrameworkPytest:
		argv := append([]string{}, s.lead...)
		for _, m := range members {
			argv = append(argv, m.test)
		}
		argv = append(argv, s.trail...)
		// -rA: the short summary names every node; through
		// PYTEST_ADDOPTS when a wrapper (env PYTHONPATH=src, uv run)
		// runs pytest, as for a triple alone.
		argv = evidence.ArgvFor(evidence.FrameworkPytest, argv)
		// A verbose line per test, "node " as it starts and its result as
		// it ends, tells which member a killed batch was running.
		for v := pytestVerbosity(argv); v < 1; v++ {
			argv = append(argv, "-v")
		}
		// pytest from the toolchain, never from the tree (suites/pybootstrap.go).
		return suites.PyBootstrapArgv(append(argv, "-o", "junit_family=xunit1"), "run") // and --junitxml (batch.go, attempt)
	case evidence.FrameworkJest, evidence.FrameworkVitest:
		return jsBatchArgv(s, members)
	}
	return nil
}

// planBatches splits the positions into units: batches of two or more
// triples that share a shape key and a seed (in config order, each unit
// at the place of its first member), and triples that run alone. A test
// named twice in one batch (two entries for one test) goes to another
// batch: the report names it once.
func planBatches(jobs []job, positions []int) [][]int {
	var units [][]int
	open := map[string][]int{} // key and seed -> the units of that group
	for _, pos := range positions {
		j := &jobs[pos]
		s := shapeOf(j)
		if s == nil {
			units = append(units, []int{pos})
			continue
		}
		j.shape = s
		gk := s.key + "\x00" + j.seed.String()
		placed := false
		for _, u := range open[gk] {
			if !slices.ContainsFunc(units[u], func(p int) bool { m := jobs[p].shape; return m.test == s.test && m.pkg == s.pkg }) {
				units[u] = append(units[u], pos)
				placed = true
				break
			}
		}
		if !placed {
			open[gk] = append(open[gk], len(units))
			units = append(units, []int{pos})
		}
	}
	return units
}

// pytestVerbosity is the verbosity the -v and -q options of argv give.
func pytestVerbosity(argv []string) int {
	v := 0
	for _, a := range argv[1:] {
		switch {
		case a == "--verbose":
			v++
		case a == "--quiet":
			v--
		case len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.Trim(a[1:], "v") == "":
			v += len(a) - 1
		case len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.Trim(a[1:], "q") == "":
			v -= len(a) - 1
		}
	}
	return v
}

// batchTemplateKey is the key of the batches a property's triples join,
// before any seed is filled in ("" when they run alone): properties with
// equal keys share processes seed by seed. Seeds drawn from the secret,
// the base and this key (rather than the property's path and name) are
// the same for all of them, so drawn seeds do not split a batch into one
// process per property (check/seeds.go draws them).
func batchTemplateKey(ps *propState) string {
	s := shapeOf(&job{ps: ps, seed: "{seed}"})
	if s == nil {
		return ""
	}
	return s.key
}
