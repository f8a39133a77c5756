// Batches of jest and vitest tests: the shape of a run template that
// batches, the batch's command and how each member is read from the
// framework's JSON report (evidence/jsreport.go).
//
// A jest or vitest template batches when the test file is one argument,
// exactly {path}, and the test is selected by name in one place, -t or
// --testNamePattern with the value {name} or ^{name}$:
//
//	[env X={seed}] RUNNER [OPTS] {path} [OPTS] -t ^{name}$ [OPTS]
//
// (RUNNER is whatever runs the framework: jest, npx vitest run, node
// node_modules/jest/bin/jest.js; the property's framework says which.)
// The batch's command is the template with the distinct test files in
// the place of {path}, the pattern ^(A|B|C)$ (each name quoted as a
// regular expression) in the place of the selection, and the framework's
// JSON reporter writing to a file outside the tree:
//
//	jest:   ... --json --outputFile=F
//	vitest: ... --reporter=json --outputFile=F
//
// A template that already picks a reporter or an output file, watches,
// bails out after a failure or shards runs each triple alone.

package batch

import (
	"regexp"
	"slices"
	"strings"

	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/attempt/sandbox"
	"github.com/flakegate/flakegate/evidence"
)

// JSNameSlot stands for the name pattern in a js shape's trail.
const JSNameSlot = "\x00name"

// jsShape is the batch shape of a jest or vitest template (nil when it
// runs alone): lead is the argv before the test file, trail the argv
// after it with JSNameSlot in the place of the name's value.
func jsShape(framework string, tmpl, argv []string, file, name string) *Shape {
	if file == "" || strings.ContainsAny(file, "\n\x00") || strings.ContainsRune(name, '\x00') {
		return nil
	}
	at, nameAt := -1, -1
	for i, a := range tmpl {
		switch {
		case a == "{path}":
			if at >= 0 {
				return nil
			}
			at = i
		case a == "{name}" || a == "^{name}$":
			if nameAt >= 0 || i == 0 || tmpl[i-1] != "-t" && tmpl[i-1] != "--testNamePattern" {
				return nil
			}
			nameAt = i
		case a == "-t=^{name}$" || a == "-t={name}" || a == "--testNamePattern=^{name}$" || a == "--testNamePattern={name}":
			if nameAt >= 0 {
				return nil
			}
			nameAt = i
		default:
			if strings.Contains(a, "{name}") || strings.Contains(a, "{path}") {
				return nil
			}
		}
	}
	if at < 1 || nameAt < 0 {
		return nil
	}
	flagAt := -1 // the -t before a separate value
	if !strings.HasPrefix(tmpl[nameAt], "-") {
		flagAt = nameAt - 1
	}
	for i, a := range argv {
		if i == at || i == nameAt || i == flagAt {
			continue
		}
		if !jsBatchable(framework, a) {
			return nil
		}
	}
	s := &Shape{Test: name, Pkg: file}
	for i, a := range argv {
		if i == at || framework == evidence.FrameworkJest && a == "--json" {
			continue // the batch adds its own --json
		}
		if i == nameAt {
			if flagAt < 0 {
				a = a[:strings.IndexByte(a, '=')+1] + JSNameSlot // -t=VALUE
			} else {
				a = JSNameSlot // VALUE: the name's own "=" is no flag's
			}
		}
		if i > at {
			s.Trail = append(s.Trail, a)
		} else {
			s.Lead = append(s.Lead, a)
		}
	}
	return s
}

// jsBatchable reports whether argument a of a template leaves a batch's
// report and members as the batch needs them.
func jsBatchable(framework, a string) bool {
	opt, _, _ := strings.Cut(a, "=")
	switch opt {
	case "-t", "--testNamePattern", "--outputFile", "--reporter", "--reporters", "--watch", "--watchAll", "-w",
		"--bail", "-b", "--shard", "--onlyChanged", "-o", "--changed", "--listTests", "--related", "--findRelatedTests",
		"--passWithNoTests", "--testPathPattern", "--testPathPatterns", "--selectProjects", "--project":
		return false
	}
	return !strings.HasPrefix(opt, "--outputFile.") && !strings.HasPrefix(opt, "--reporter.")
}

// jsBatchArgv is the command of a js batch of members (in order).
func jsBatchArgv(s *Shape, members []*Shape) []string {
	var files, names []string
	for _, m := range members {
		if !slices.Contains(files, m.Pkg) {
			files = append(files, m.Pkg)
		}
		q := regexp.QuoteMeta(m.Test)
		if s.Framework == evidence.FrameworkVitest {
			// vitest's list joins the titles by " > " and flakegate's name
			// by spaces (parseVitestList), so a title that holds " > " lost
			// it in the name: -t, which sees the titles joined by spaces,
			// takes either at each space.
			q = strings.ReplaceAll(q, " ", "(?: > | )")
		}
		if !slices.Contains(names, q) {
			names = append(names, q)
		}
	}
	pattern := "^(" + strings.Join(names, "|") + ")$"
	var argv []string
	for _, a := range s.Lead {
		argv = append(argv, strings.Replace(a, JSNameSlot, pattern, 1))
	}
	argv = append(argv, files...)
	for _, a := range s.Trail {
		argv = append(argv, strings.Replace(a, JSNameSlot, pattern, 1))
	}
	if s.Framework == evidence.FrameworkJest {
		return append(argv, "--json")
	}
	return append(argv, "--reporter=json") // and --outputFile (report.go, attempt)
}

// IsJS reports whether framework is jest or vitest.
func IsJS(framework string) bool {
	return framework == evidence.FrameworkJest || framework == evidence.FrameworkVitest
}

// jsReport is a js batch's report.
type jsReport struct{ *evidence.JSReport }

func (j jsReport) Of(s *Shape) evidence.TestReport { return j.Report(s.Pkg, s.Test) }

func (j jsReport) LastOther() string {
	if l := j.Other(); l != "" {
		return `"` + l + `"`
	}
	return ""
}

// JSRoot is the folder a js batch ran in, as its tests saw it: the
// report names each test file by its absolute path there.
func JSRoot(cmd attempt.Command) string {
	if sb, _ := cmd.Sandbox.(*sandbox.Sandbox); sb != nil {
		return sandbox.TreeMount
	}
	return cmd.Dir
}

// jsReportFile adds the report file of a js batch to cmd: a folder of
// its own outside the tree, shared read-write with the sandbox for this
// one attempt. It returns the file's path.
func jsReportFile(cmd *attempt.Command) (string, error) {
	return ReportFile(cmd, "report.json", "--outputFile=") // report.go
}
