// A batch's report: the framework's account of each member (its JSON
// events, JUnit file or JSON report file), and the outcome of a member
// judged from it.

package batch

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/attempt/sandbox"
	"github.com/flakegate/flakegate/evidence"
	"github.com/flakegate/flakegate/suites"
)

// Judge is the outcome of the member label (of wall budget
// budgetOf) in a batch of framework, as check's batch runner says; a replay of
// a suite's triple judges its test with it too (replay/suite.go).
func Judge(framework, label string, budgetOf time.Duration, rep Report, tr evidence.TestReport, out attempt.Outcome, n int, budget time.Duration) (o attempt.Outcome, rerun bool) {
	killed := out.Result == attempt.Timeout
	o = attempt.Outcome{Result: tr.Result, ExitCode: out.ExitCode, Signal: out.Signal, Started: out.Started, Wall: tr.Elapsed, Tail: tr.Output, Reason: tr.Reason}
	switch {
	case tr.Result == attempt.Fail && out.ExitCode == 0:
		// The framework exits non-zero when a test fails: a failure
		// in the report of a process that exited 0 is output the
		// code under test wrote, never a result.
		o.Result = attempt.Errored
		o.Reason = label + " is reported failed, but the batch exited 0: the report is not the framework's own"
	case tr.Result == attempt.Pass || tr.Result == attempt.Fail:
		if budgetOf > 0 && tr.Elapsed > budgetOf {
			o.Result = attempt.Timeout
			o.Reason = fmt.Sprintf("its own time %.1fs in the batch is over its wall budget %s", tr.Elapsed.Seconds(), budgetOf)
		}
	case killed && tr.Started && !tr.Ended:
		o.Result, o.Wall = attempt.Timeout, out.Wall
		o.Reason = fmt.Sprintf("the batch of %d tests was killed at %.1fs (%s) while this test ran", n, out.Wall.Seconds(), batchWhy(out, budget))
	case killed && !tr.Started && IsJS(framework):
		// A jest or vitest batch writes its report when it ends: killed,
		// it names no test that was running. Every member is a timeout
		// of this batch, and none runs again alone: a test can hang only
		// beside the others (state one test leaves in a module for the
		// next), as the project's own runner runs them, and a run alone
		// would pass it.
		o.Result, o.Wall = attempt.Timeout, out.Wall
		o.Reason = fmt.Sprintf("killed at %.1fs (%s) before %s wrote its report", out.Wall.Seconds(), batchWhy(out, budget), framework)
		if n > 1 {
			o.Reason = fmt.Sprintf("the batch of %d tests was killed at %.1fs (%s) before %s wrote its report: which test hung is not known, and none runs again alone (a test may hang only beside the others)", n, out.Wall.Seconds(), batchWhy(out, budget), framework)
		}
	case killed && !tr.Started || tr.Rerun:
		return o, true
	case tr.Result == "":
		o.Result = attempt.Errored
		o.Reason = label + " is absent from the batch's report"
		if tr.Reason != "" {
			o.Reason += ": " + tr.Reason
		}
		if out.Reason != "" {
			o.Reason += "; the batch: " + out.Reason
		}
		if l := rep.LastOther(); l != "" {
			o.Reason += "; the last line is " + l
		}
	case killed:
		o.Result, o.Reason = attempt.Timeout, tr.Reason+"; "+batchWhy(out, budget)
	}
	return o, false
}

// batchWhy says what ended a killed batch: its budget or a sandbox limit.
func batchWhy(out attempt.Outcome, budget time.Duration) string {
	if out.Limit != "" {
		return "sandbox " + out.Limit + " reached"
	}
	return "the sum of its members' wall budgets is " + budget.String()
}

// Label names the triple of the test name in file path among a batch's
// members (path::name; pytest: the node id).
func Label(path, name string) string { return path + "::" + name }

// Report reads a batch's output and reports each member's result.
type Report interface {
	io.Writer
	Of(s *Shape) evidence.TestReport
	LastOther() string
}

func NewReport(framework, dir string) Report {
	if framework == evidence.FrameworkPytest {
		return pytestReport{evidence.NewPytestJUnit()}
	}
	if IsJS(framework) {
		return jsReport{evidence.NewJSReport(framework)}
	}
	mod, err := suites.GoModulePath(filepath.Join(dir, "go.mod"))
	return &goReport{GoJSON: evidence.NewGoJSON(), module: mod, modErr: err}
}

type pytestReport struct{ *evidence.PytestJUnit }

func (p pytestReport) Of(s *Shape) evidence.TestReport { return p.Report(s.Test) }
func (p pytestReport) LastOther() string               { return "" }

// goReport maps a member's package argument to the import path the
// events name, through the module path of the tree's go.mod.
type goReport struct {
	*evidence.GoJSON
	module string
	modErr error
}

func (g *goReport) Of(s *Shape) evidence.TestReport {
	if g.modErr != nil {
		return evidence.TestReport{Result: attempt.Errored, Reason: "cannot name the package of a batched go test: " + g.modErr.Error()}
	}
	return g.Report(g.importPath(s.Pkg), s.Test)
}

// GoModule is the module path the go report rep names packages by, ""
// for another framework's report or a tree whose go.mod has none.
func GoModule(rep Report) string {
	if g, ok := rep.(*goReport); ok && g.modErr == nil {
		return g.module
	}
	return ""
}

// importPath is the import path of a package argument ("./p", ".").
func (g *goReport) importPath(arg string) string {
	pkg := g.module
	if rel := strings.TrimPrefix(strings.TrimSuffix(arg, "/"), "./"); rel != "." && rel != "" {
		pkg += "/" + rel
	}
	return pkg
}

func (g *goReport) LastOther() string {
	if l := g.Other(); l != "" {
		return fmt.Sprintf("%q", l)
	}
	return ""
}

// ReportFile adds to cmd the file its framework writes its report to
// (flag, then the file's path: --junitxml=, --outputFile=): name, in a
// folder of its own outside the tree (junitDir), shared read-write with
// the sandbox for this one attempt. It returns the file's path; the
// caller removes its folder.
func ReportFile(cmd *attempt.Command, name, flag string) (string, error) {
	dir, err := junitDir()
	if err != nil {
		return "", err
	}
	file := filepath.Join(dir, name)
	cmd.Argv = append(cmd.Argv, flag+file)
	if sb, _ := cmd.Sandbox.(*sandbox.Sandbox); sb != nil {
		sb.RW = append(append([]string(nil), sb.RW...), dir)
	}
	return file, nil
}

// AddReportFile adds the report file of framework's batch to cmd (the
// pytest JUnit file, the jest or vitest JSON report) and returns its
// path; "" for go, whose report is its output. The caller removes the
// file's folder.
func AddReportFile(cmd *attempt.Command, framework string) (string, error) {
	switch {
	case framework == evidence.FrameworkPytest:
		return pytestJUnitFile(cmd)
	case IsJS(framework):
		return jsReportFile(cmd) // js.go
	}
	return "", nil
}

// ReadReportFile gives rep the report file the batch cmd wrote (file,
// from AddReportFile).
func ReadReportFile(rep Report, file string, cmd attempt.Command) {
	if pr, ok := rep.(pytestReport); ok {
		pr.SetJUnit(attempt.ReadBounded(file, 64<<20))
	}
	if jr, ok := rep.(jsReport); ok {
		data, err := attempt.ReadBounded(file, 64<<20)
		jr.SetFile(data, err, JSRoot(cmd))
	}
}

// pytestJUnitFile adds the JUnit file of a pytest batch to cmd.
func pytestJUnitFile(cmd *attempt.Command) (string, error) {
	return ReportFile(cmd, "junit.xml", "--junitxml=")
}

// junitDir makes the folder a pytest batch writes its JUnit file into,
// shared read-write with the sandbox for that one attempt.
func junitDir() (string, error) {
	dir, err := os.MkdirTemp("", "flakegate-junit-")
	if err == nil {
		err = os.Chmod(dir, 0o777) // the sandbox's uid writes it
	}
	if err != nil {
		return "", &flakegate.Error{Code: flakegate.EINTERNAL, Op: "check", Message: "cannot make a folder for a pytest batch's JUnit report", Err: err}
	}
	return dir, nil
}
