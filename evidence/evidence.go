// Package evidence judges an attempt's output: an exit 0 is a pass only
// when the output shows the named test ran and passed, an exit 1 a
// failure only when it shows the test ran and failed (go test, pytest,
// vitest, jest, or the config's pass and fail markers). It reads output; it starts nothing.
package evidence

import (
	"bytes"
	"path"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/flakegate/flakegate/attempt"

	"github.com/flakegate/flakegate/internal/lazyre"
)

// Frameworks whose output is read: the names of the config's framework:
// key (config.FrameworkGo, ...). FrameworkNone ("" or "none") reads only
// the markers.
const (
	FrameworkNone   = ""
	FrameworkGo     = "go"
	FrameworkPytest = "pytest"
	FrameworkVitest = "vitest"
	FrameworkJest   = "jest"
)

// DetectFramework names the test framework an argv runs itself: "go" for
// go test, "pytest" for pytest, py.test and python -m pytest, "" else
// (wrappers are config.FrameworkOfArgv's: a property's framework is known
// at load, config.Property.Framework).
func DetectFramework(argv []string) string {
	if len(argv) == 0 {
		return FrameworkNone
	}
	prog := path.Base(argv[0])
	switch {
	case prog == "go" && len(argv) > 1 && argv[1] == "test":
		return FrameworkGo
	case prog == "pytest" || prog == "py.test" || strings.HasPrefix(prog, "pytest-"):
		return FrameworkPytest
	case strings.HasPrefix(prog, "python") && len(argv) > 2 && argv[1] == "-m" && argv[2] == "pytest":
		return FrameworkPytest
	}
	return FrameworkNone
}

// Argv returns argv with the flags that make the framework name
// each test it ran: -v for go test (before the package list, unless a -v
// or -json flag is there), -rA for pytest (a "PASSED node" line per test,
// unless an -r option that reports passes is there). Other argvs are
// returned as they are.
func Argv(argv []string) []string {
	return ArgvFor(DetectFramework(argv), argv)
}

// ArgvFor is Argv for a property whose framework is known. When argv
// runs it through a wrapper (env, sh -c, uv run, ...), the option goes in
// through the variable the framework reads, added to what the attempt's
// environment already holds there: -v to GOFLAGS for go, -rA to
// PYTEST_ADDOPTS for pytest (a small sh that then execs argv).
func ArgvFor(framework string, argv []string) []string {
	if direct := DetectFramework(argv); direct != framework {
		switch framework {
		case FrameworkGo:
			return viaEnv("GOFLAGS", "-v", argv)
		case FrameworkPytest:
			return viaEnv("PYTEST_ADDOPTS", "-rA", argv)
		}
		return argv
	}
	switch framework {
	case FrameworkGo:
		for _, a := range argv[2:] {
			if a == "-v" || a == "-test.v" || strings.HasPrefix(a, "-v=") || strings.HasPrefix(a, "-test.v=") || a == "-json" {
				return argv
			}
		}
		out := append([]string{}, argv[:2]...)
		out = append(out, "-v")
		return append(out, argv[2:]...)
	case FrameworkPytest:
		// pytest keeps the last -r: one that already reports passes stays.
		for _, a := range argv[1:] {
			if strings.HasPrefix(a, "-r") && !strings.HasPrefix(a, "--") && strings.ContainsAny(a[2:], "ApP") {
				return argv
			}
		}
		out := append([]string{}, argv...)
		return append(out, "-rA")
	}
	return argv
}

// Checker checks that an attempt which exited 0 shows the test ran and
// passed, and that one which exited 1 shows the test ran and failed.
// Write it the attempt's output (Command.Output), then call Judge on the
// outcome.
//
// A pass needs:
//   - go test: a "--- PASS: NAME" line (NAME the test, any test when the
//     name is empty) and no "--- SKIP:" line for it.
//   - pytest: a final summary with at least one passed and no skipped,
//     xfailed or xpassed; with a name, a "PASSED" line for that node.
//   - vitest, jest: a summary line or JSON report with at least one
//     passed and none failed (js.go).
//   - a pass marker (config pass_marker): a line matching it.
//
// A failure needs:
//   - go test: a "--- FAIL: NAME" line (any test when the name is empty);
//   - pytest: a "FAILED path::name" line naming the node, or a final
//     summary with at least one failed and no error;
//   - vitest, jest: a summary line or JSON report with a failed test (a
//     suite that failed to run reports none);
//   - a fail marker (config fail_marker): a line matching it.
//
// Anything else is an error (a build failure, "[build failed]", a
// collection error, "no tests ran", an import or config error): the test
// never ran, and the reason quotes the line that says so. Without a
// framework or marker, exit 0 stays a pass and exit 1 a failure.
type Checker struct {
	Framework  string
	Name       string
	Marker     *regexp.Regexp
	FailMarker *regexp.Regexp

	mu      sync.Mutex
	partial []byte
	last    string // the last non-empty line
	passed  string // the line that shows the named test passed
	skipped string // a line that shows it was skipped
	summary string // pytest's last summary line
	derand  string // a hypothesis profile line with derandomize=True

	failed     string // the line that shows the named test failed
	buildError string // go: the first compiler or go command error line
	buildFail  string // go: a "[build failed]" or "[setup failed]" line
	notRun     string // pytest: the first line that says a test did not run
	notRunE    string // pytest: the last "E   ..." line after notRun
	inErrors   bool   // pytest: reading its ERRORS section

	js jsState // vitest and jest
}

// viaEnv runs argv with opt added to the variable name.
func viaEnv(name, opt string, argv []string) []string {
	script := name + `="${` + name + `:+$` + name + ` }` + opt + `" exec "$@"`
	return append([]string{"sh", "-c", script, "flakegate-evidence"}, argv...)
}

// New returns the checker for one attempt, or nil when there is
// nothing to check (no framework, no marker).
func New(framework, name string, marker, failMarker *regexp.Regexp) *Checker {
	if framework == "none" {
		framework = FrameworkNone
	}
	if framework == FrameworkNone && marker == nil && failMarker == nil {
		return nil
	}
	return &Checker{Framework: framework, Name: name, Marker: marker, FailMarker: failMarker}
}

// Write scans output, line by line.
func (e *Checker) Write(p []byte) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.Framework == FrameworkJest || e.Framework == FrameworkVitest {
		e.js.keep(p)
	}
	data := p
	if len(e.partial) > 0 {
		data = append(e.partial, p...)
		e.partial = nil
	}
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		e.line(string(bytes.TrimRight(data[:i], "\r")))
		data = data[i+1:]
	}
	if len(data) > 0 {
		if len(data) > 64<<10 {
			data = data[len(data)-64<<10:] // a line this long holds no marker we read
		}
		e.partial = append([]byte(nil), data...)
	}
	return len(p), nil
}

var (
	goResultRe     = lazyre.New(`^\s*--- (PASS|SKIP|FAIL): (\S+) \(`)
	pytestSummary  = lazyre.New(`^=*\s*(\d+ (passed|failed|skipped|xfailed|xpassed|errors?|deselected|warnings?)(, )?)+.* in [0-9.]+s( \([0-9:]+\))?\s*=*$`)
	pytestCountRe  = lazyre.New(`(\d+) (passed|failed|skipped|xfailed|xpassed|errors?|deselected)`)
	pytestPassedRe = lazyre.New(`^PASSED (\S+)`)
	pytestFailedRe = lazyre.New(`^FAILED (\S+)`)
	pytestNotRunRe = lazyre.New(`^[=_]*\s*(ERROR collecting |ERROR \S+\.py\b|ERROR: |INTERNALERROR|ImportError while |no tests ran)`)
	pytestELineRe  = lazyre.New(`^E\s+\S`)
	pytestHeadRe   = lazyre.New(`^=+ (.*) =+$`)
	goBuildFailRe  = lazyre.New(`^FAIL\s.*\[(build|setup) failed\]`)
	goNoiseRe      = lazyre.New(`^go: (downloading|finding|extracting) `)
	goCompileRe    = lazyre.New(`^(\.{0,2}/)?[^\s:]+\.go:\d+(:\d+)?: \S|^go: |^package \S+ is not in |^no required module provides`)
	derandomizeRe  = lazyre.New(`^hypothesis profile .*derandomize=True`)
)

// ansiRe matches terminal colour and cursor sequences (pytest --color=yes).
var ansiRe = lazyre.New("\x1b\\[[0-9;?]*[ -/]*[@-~]")

func (e *Checker) line(l string) {
	if strings.IndexByte(l, 0x1b) >= 0 {
		l = ansiRe.ReplaceAllString(l, "")
	}
	if strings.TrimSpace(l) != "" {
		e.last = clip(strings.TrimSpace(l))
	}
	if e.Marker != nil && e.passed == "" && e.Marker.MatchString(l) {
		e.passed = clip(l)
	}
	if e.FailMarker != nil && e.failed == "" && e.FailMarker.MatchString(l) {
		e.failed = clip(l)
	}
	switch e.Framework {
	case FrameworkGo:
		if e.buildError == "" && goCompileRe.MatchString(l) && !goNoiseRe.MatchString(l) {
			e.buildError = clip(strings.TrimSpace(l))
		}
		if e.buildFail == "" && goBuildFailRe.MatchString(l) {
			e.buildFail = clip(strings.TrimSpace(l))
		}
		m := goResultRe.FindStringSubmatch(l)
		if m == nil || (e.Name != "" && m[2] != e.Name) {
			return
		}
		switch m[1] {
		case "PASS":
			if e.Marker == nil && e.passed == "" {
				e.passed = clip(strings.TrimSpace(l))
			}
		case "SKIP":
			e.skipped = clip(strings.TrimSpace(l))
		case "FAIL":
			if e.FailMarker == nil && e.failed == "" {
				e.failed = clip(strings.TrimSpace(l))
			}
		}
	case FrameworkVitest, FrameworkJest:
		e.jsLine(l)
	case FrameworkPytest:
		if pytestSummary.MatchString(l) {
			e.summary = clip(strings.Trim(l, "= "))
		}
		if h := pytestHeadRe.FindStringSubmatch(l); h != nil {
			e.inErrors = h[1] == "ERRORS"
		}
		if e.notRun == "" && pytestNotRunRe.MatchString(l) {
			e.notRun = clip(strings.Trim(l, "=_ "))
		}
		if e.notRun != "" && e.inErrors && pytestELineRe.MatchString(l) {
			e.notRunE = clip(strings.TrimSpace(l))
		}
		if e.FailMarker == nil && e.failed == "" && pytestLineNames(l, "FAILED ", e.Name) {
			e.failed = clip(l)
		}
		if derandomizeRe.MatchString(l) {
			e.derand = clip(l)
		}
		if e.Marker == nil && e.passed == "" && pytestLineNames(l, "PASSED ", e.Name) {
			e.passed = clip(l)
		}
	}
}

// pytestLineNames reports whether l is a line of pytest's short summary
// for the result word ("PASSED ", "FAILED ") that names the test name. A
// node id may hold spaces (a parametrized case: "test_add[one two]"), and
// a failure's message follows " - ", so the node is the rest of the line,
// or for a failure any part of it before a " - " (a "PASSED" line has no
// message: the whole rest must name the test).
func pytestLineNames(l, word, name string) bool {
	rest, ok := strings.CutPrefix(l, word)
	if !ok {
		return false
	}
	rest = strings.TrimRight(rest, " ")
	for node := rest; ; {
		if node != "" && !strings.HasPrefix(node, " ") && nodeMatches(node, name) {
			return true
		}
		i := strings.LastIndex(node, " - ")
		if i < 0 || word != "FAILED " {
			return false
		}
		node = node[:i]
	}
}

// nodeMatches reports whether the pytest node id names the test name: the
// whole id, its last part, a class or a parametrized case of it.
func nodeMatches(node, name string) bool {
	if name == "" || node == name {
		return true
	}
	if strings.HasPrefix(node, name+"::") || strings.HasPrefix(node, name+"[") {
		return true
	}
	for _, sep := range []string{"::" + name + "::", "::" + name + "["} {
		if strings.Contains(node, sep) {
			return true
		}
	}
	return strings.HasSuffix(node, "::"+name)
}

// Judge turns a pass or a fail without evidence into an errored outcome
// whose reason quotes the line seen. Other results are kept.
func (e *Checker) Judge(out *attempt.Outcome) {
	if e == nil || (out.Result != attempt.Pass && out.Result != attempt.Fail) {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.partial) > 0 {
		e.line(string(e.partial))
		e.partial = nil
	}
	why := ""
	if out.Result == attempt.Pass {
		why = e.missing()
	} else {
		why = e.failMissing()
	}
	if why != "" {
		out.Result, out.Reason = attempt.Errored, why
	}
}

// failMissing says why an exit 1 is not evidence that the test ran and
// failed, "" when it is.
func (e *Checker) failMissing() string {
	what := "the test"
	if e.Name != "" {
		what = e.Name
	}
	seen := "nothing"
	if e.last != "" {
		seen = strconv.Quote(e.last)
	}
	if e.FailMarker != nil {
		if e.failed == "" {
			return "exit 1 without the fail marker " + strconv.Quote(e.FailMarker.String()[4:]) + "; the last line is " + seen
		}
		return ""
	}
	switch e.Framework {
	case FrameworkGo:
		if e.failed != "" {
			return ""
		}
		if e.buildFail != "" || e.buildError != "" {
			line := e.buildError
			if line == "" {
				line = e.buildFail
			}
			return "go test: build failed: " + strconv.Quote(line)
		}
		return "exit 1 but no \"--- FAIL: " + e.nameOr("NAME") + "\" line shows " + what + " ran and failed; the last line is " + seen
	case FrameworkPytest:
		if e.failed != "" {
			return ""
		}
		counts := map[string]int{}
		for _, m := range pytestCountRe.FindAllStringSubmatch(e.summary, -1) {
			n, _ := strconv.Atoi(m[1])
			counts[m[2]] += n
		}
		errs := counts["error"] + counts["errors"]
		if counts["failed"] > 0 && errs == 0 && e.notRun == "" {
			return ""
		}
		if e.notRun != "" {
			why := "pytest: " + what + " did not run: " + strconv.Quote(e.notRun)
			if e.notRunE != "" {
				why += "; " + strconv.Quote(e.notRunE)
			}
			return why
		}
		if e.summary != "" {
			return "pytest's summary says " + strconv.Quote(e.summary) + "; want a \"FAILED\" line naming " + what + ", or at least one failed and no error"
		}
		return "exit 1 but no \"FAILED\" line and no pytest summary line; the last line is " + seen
	case FrameworkVitest, FrameworkJest:
		return e.jsFailMissing(what, seen)
	}
	return ""
}

func (e *Checker) missing() string {
	what := "the test"
	if e.Name != "" {
		what = e.Name
	}
	seen := "nothing"
	if e.last != "" {
		seen = strconv.Quote(e.last)
	}
	if e.derand != "" {
		return "hypothesis runs derandomized, so --hypothesis-seed is ignored: " + strconv.Quote(e.derand)
	}
	if e.Marker != nil {
		if e.passed == "" {
			return "exit 0 without the pass marker " + strconv.Quote(e.Marker.String()[4:]) + "; the last line is " + seen
		}
		return ""
	}
	switch e.Framework {
	case FrameworkGo:
		if e.skipped != "" {
			return what + " was skipped: " + strconv.Quote(e.skipped)
		}
		if e.passed == "" {
			return "exit 0 but no \"--- PASS: " + e.nameOr("NAME") + "\" line shows " + what + " ran; the last line is " + seen
		}
	case FrameworkPytest:
		if e.summary == "" {
			return "exit 0 but no pytest summary line; the last line is " + seen
		}
		counts := map[string]int{}
		for _, m := range pytestCountRe.FindAllStringSubmatch(e.summary, -1) {
			n, _ := strconv.Atoi(m[1])
			counts[m[2]] += n
		}
		for _, k := range []string{"skipped", "xfailed", "xpassed"} {
			if counts[k] > 0 {
				return "pytest's summary says " + strconv.Quote(e.summary) + "; a skipped, xfailed or xpassed test is not a pass"
			}
		}
		if counts["passed"] == 0 {
			return "pytest's summary says " + strconv.Quote(e.summary) + "; want at least one passed"
		}
		if e.Name != "" && e.passed == "" {
			return "no \"PASSED\" line names " + e.Name + "; pytest's summary says " + strconv.Quote(e.summary)
		}
	case FrameworkVitest, FrameworkJest:
		return e.jsMissing(seen)
	}
	return ""
}

func (e *Checker) nameOr(s string) string {
	if e.Name != "" {
		return e.Name
	}
	return s
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}
