// Batch planning: which triples run as one process, and the command of
// that process, built from the members' run templates.
//
// A triple joins a batch only when its run template has the standard
// shape of its framework, with the test selection in one recognised
// place:
//
//	go test [FLAGS] -run ^{name}$ ./PKG [FLAGS]      (the -run value exactly ^{name}$)
//	pytest|python -m pytest [OPTS] {path}::{name} [OPTS]
//	jest, vitest: RUNNER [OPTS] {path} [OPTS] -t ^{name}$ [OPTS]   (js.go)
//
// The key of a batch is the side-independent rest of the command: the
// template expanded for the seed with the selection (and, for go, the
// package) taken out, plus the property's prepare. Triples with equal
// keys and the same seed form one batch, in config order; any template
// that does not fit (a {name} or {path} elsewhere, a go flag whose value
// is a separate argument, a package pattern with "...", a subtest name)
// runs alone, exactly as without batches.

package batch

import (
	"encoding/json"
	"path"
	"slices"
	"strings"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/evidence"
	"github.com/flakegate/flakegate/internal/lazyre"
	"github.com/flakegate/flakegate/suites"
	"github.com/flakegate/flakegate/template"
)

// Shape is how one triple's command takes part in a batch.
type Shape struct {
	Framework string
	Key       string   // equal keys and seeds batch together
	Lead      []string // go: the flags before -run and the packages; pytest: the argv before the node ids
	Trail     []string // the arguments after them
	Pkg       string   // go: the member's package argument ("./p")
	prog      string   // go: the go the template names ("go", or a path to one)
	Test      string   // go: the test's name; pytest: the node id
}

var goTestName = lazyre.New(`^[A-Za-z_][A-Za-z0-9_]*$`)

// goBoolFlags are go test flags that take no separate value.
var goBoolFlags = map[string]bool{"-v": true, "-race": true, "-short": true, "-failfast": true, "-cover": true,
	"-json": true, "-x": true, "-a": true, "-n": true, "-trimpath": true, "-benchmem": true, "-msan": true, "-asan": true}

// ShapeOf returns the batch shape of a triple of p for seed, nil when it
// runs alone: framework is the property's evidence framework
// (EvidenceFramework), prepareSHA256 the digest of its prepare ("" for
// none).
func ShapeOf(p *config.Property, framework, prepareSHA256 string, seed flakegate.Seed) *Shape {
	fw := Framework(p, framework)
	if fw == "" || p.Name == "" {
		return nil
	}
	argv, err := template.Expand(p.Run, Vars(p, seed))
	if err != nil || len(argv) != len(p.Run) {
		return nil
	}
	var s *Shape
	switch fw {
	case evidence.FrameworkGo:
		s = goShape(p.Run, argv, p.Name)
	case evidence.FrameworkPytest:
		s = pytestShape(p.Run, argv, p.Path+"::"+p.Name)
	case evidence.FrameworkJest, evidence.FrameworkVitest:
		s = jsShape(fw, p.Run, argv, p.Path, p.Name) // js.go
	}
	if s == nil {
		return nil
	}
	s.Framework = fw
	k, _ := json.Marshal([]any{fw, s.Lead, s.Trail, prepareSHA256})
	switch {
	case p.Suite != nil && fw == evidence.FrameworkGo:
		k, _ = json.Marshal([]any{fw, s.Lead, s.Trail, prepareSHA256, "suite", s.Pkg}) // one process per package and seed (a suite's go is "go")
	case s.prog != "" && s.prog != "go":
		// A template that names its go by path batches only with
		// templates of that go, and the batch runs it (Argv).
		k, _ = json.Marshal([]any{fw, s.Lead, s.Trail, prepareSHA256, "go", s.prog})
	}
	s.Key = string(k)
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

func goShape(tmpl, argv []string, name string) *Shape {
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
	s := &Shape{Test: name, prog: argv[0]}
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
			s.Lead = append(s.Lead, a)
		case goBoolFlags[a]:
			s.Lead = append(s.Lead, a)
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
	s.Pkg = pkg
	for i++; i < len(argv); i++ {
		switch {
		case i == sel || runFlag && i == sel-1:
		case len(s.Trail) == 0 && !strings.HasPrefix(argv[i], "-"):
			return nil // a second package
		case goFailFast(argv[i]):
			// A known answer fails in every batch (known.go): -failfast
			// would leave the members after it unrun.
		default:
			timeout = timeout || strings.HasPrefix(argv[i], "-test.timeout") || strings.HasPrefix(argv[i], "-timeout")
			s.Trail = append(s.Trail, argv[i])
		}
	}
	if !count {
		s.Lead = append(s.Lead, "-count=1")
	}
	if !timeout {
		// flakegate's budget bounds the batch; go's own default of 10
		// minutes would fail the test that runs at that moment.
		s.Lead = append(s.Lead, "-timeout=0")
	}
	return s
}

// goFailFast reports whether a is go test's -failfast flag.
func goFailFast(a string) bool {
	a = strings.Replace(a, "-test.", "-", 1)
	return a == "-failfast" || strings.HasPrefix(a, "-failfast=")
}

func pytestShape(tmpl, argv []string, node string) *Shape {
	sel := selection(tmpl, "{path}::{name}")
	if sel < 1 || strings.ContainsAny(node, " \t\n") {
		return nil
	}
	lead := argv[:sel:sel]
	if at := pytestAt(lead); at >= 0 {
		lead = append(lead[:at+1:at+1], pytestKeepGoing(lead[at+1:])...)
	}
	return &Shape{Test: node, Lead: lead, Trail: pytestKeepGoing(argv[sel+1:])}
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

// Argv is the command of a batch of members (in order) of shape s.
func Argv(s *Shape, members []*Shape) []string {
	switch s.Framework {
	case evidence.FrameworkGo:
		names := make([]string, 0, len(members))
		var pkgs []string
		for _, m := range members {
			if !slices.Contains(names, m.Test) {
				names = append(names, m.Test)
			}
			if !slices.Contains(pkgs, m.Pkg) {
				pkgs = append(pkgs, m.Pkg)
			}
		}
		prog := s.prog
		if prog == "" {
			prog = "go" // a suite's new test, a known answer: the go on PATH
		}
		argv := []string{prog, "test", "-json"}
		argv = append(argv, s.Lead...)
		argv = append(argv, "-run", "^("+strings.Join(names, "|")+")$")
		argv = append(argv, pkgs...)
		return append(argv, s.Trail...)
	case evidence.FrameworkPytest:
		argv := append([]string{}, s.Lead...)
		for _, m := range members {
			argv = append(argv, m.Test)
		}
		argv = append(argv, s.Trail...)
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
		return suites.PyBootstrapArgv(append(argv, "-o", "junit_family=xunit1"), "run") // and --junitxml (report.go, attempt)
	case evidence.FrameworkJest, evidence.FrameworkVitest:
		return jsBatchArgv(s, members)
	}
	return nil
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
