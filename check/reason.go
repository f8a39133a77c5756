// The summary's reasons in words a person can act on: an attempt that
// errored says the test never ran, what the program's exit code means
// and the line of its output that says why; a contamination names each
// path once, with what watches it.

package check

import (
	"strconv"
	"strings"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/evidence"
)

// programName names the program of argv for a reason: the framework
// ("pytest", "go test") when evidence knows it, else the root package's
// ProgramName.
func programName(framework string, argv []string) string {
	if framework != evidence.FrameworkNone {
		return framework
	}
	return flakegate.ProgramName(argv)
}

// neverRan is flakegate.NeverRan for the framework and argv of a triple.
func neverRan(framework string, argv []string, a flakegate.Attempt, why string) string {
	return flakegate.NeverRan(programName(framework, argv), a, why)
}

// incompleteReason is the reason of an INCOMPLETE triple whose table
// reason is only that a result was "error" or "timeout": what the first
// such attempt did, in words; "" when the table's reason says more.
func (r *tripleRun) incompleteReason(d flakegate.Decision) string {
	m := flakegate.ResultTypeReasonRe.FindStringSubmatch(d.Reason)
	if m == nil {
		return ""
	}
	if a, ok := flakegate.FirstUnfinished(r.t.attempts); ok {
		why := r.t.reason
		prefix := a.Side + " attempt " + strconv.Itoa(a.Index) + ": "
		if rest, ok := strings.CutPrefix(why, prefix); ok {
			why = rest
		} else {
			why = ""
		}
		return neverRan(r.j.ps.framework, r.argv, a, why) + " (the record's " + m[1] + " is " + strconv.Quote(m[2]) + ")"
	}
	return ""
}

// contaminatedReason names each path of the patch that grades the
// property once, with what watches it: "the patch edits what grades it:
// tests/test_x.py (the property file), conftest.py (pytest's conftest)".
func (r *tripleRun) contaminatedReason(d flakegate.Decision) string {
	ps := r.j.ps
	why := map[string]string{}
	for _, w := range ps.watchWhy {
		if i := strings.Index(w, " ("); i > 0 && strings.HasSuffix(w, ")") {
			why[w[:i]] = w[i+2 : len(w)-1]
		}
	}
	why[ps.prop.Path] = "the property file"
	if g := ps.prop.Generator; g != "" {
		if _, ok := why[g]; !ok {
			why[g] = "the fixture generator"
		}
	}
	if r.c.cfgPath != "" {
		why[r.c.cfgPath] = "the gate's config, read from the base"
	}
	if len(d.Paths) == 0 {
		return ""
	}
	parts := make([]string, len(d.Paths))
	for i, p := range d.Paths {
		parts[i] = p
		if w := why[p]; w != "" {
			parts[i] += " (" + w + ")"
		}
	}
	return "the patch edits what grades it: " + strings.Join(parts, ", ")
}
