// The summary's reasons in words a person can act on: an attempt that
// errored says the test never ran, what the program's exit code means
// and the line of its output that says why; a contamination names each
// path once, with what watches it.

package check

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/evidence"
	"github.com/flakegate/flakegate/runner"
)

// exitMeanings are what a test runner's exit codes mean, by the name
// neverRan gives the program.
var exitMeanings = map[string]map[int]string{
	"pytest":  {2: "interrupted", 3: "internal error", 4: "usage error", 5: "no tests collected"},
	"go test": {2: "build or usage error"},
	"vitest":  {},
	"jest":    {},
}

// commonExits are what any program's exit codes 126 and 127 mean (the
// shell's and env's convention).
var commonExits = map[int]string{126: "cannot execute", 127: "command not found"}

// resultTypeRe matches the table's reason for a result that is neither
// pass nor fail (an attempt that errored or timed out).
var resultTypeRe = regexp.MustCompile(`^(candidate_result|base_seed_result|retry_results\[\d+\]): want "pass" or "fail", got the string "(error|timeout)"$`)

// telling is a line of output that usually says why a run failed.
var tellingRe = regexp.MustCompile(`(?i)(^E\s|^ERROR\b|error[:\]]|no module named|not found|cannot find|permission denied|usage:|exception|traceback)`)

// programName names the program of argv for a reason: the framework
// ("pytest", "go test"), the JavaScript runner, else argv's program.
func programName(framework string, argv []string) string {
	if framework != evidence.FrameworkNone {
		return framework
	}
	prog := runProgram(argv)
	for _, w := range argv {
		if b := filepath.Base(w); b == "vitest" || b == "jest" {
			return b
		}
	}
	if prog == "" {
		return "the command"
	}
	return filepath.Base(prog)
}

// neverRan says why an attempt that errored is no result: "the test
// never ran: candidate attempt 0: pytest exited 4 (usage error): ERROR:
// file or directory not found: tests/x.py". why is the attempt's own
// reason (the runner's or the evidence's).
func neverRan(framework string, argv []string, a flakegate.Attempt, why string) string {
	prog := programName(framework, argv)
	where := a.Side + " attempt " + strconv.Itoa(a.Index)
	var b strings.Builder
	b.WriteString("the test never ran: " + where + ": ")
	switch {
	case a.Result == runner.Timeout:
		b.WriteString(prog + " ran past its budget")
		if why != "" {
			b.WriteString(" (" + why + ")")
		}
	case a.ExitCode >= 0:
		b.WriteString(prog + " exited " + strconv.Itoa(a.ExitCode))
		meaning := exitMeanings[prog][a.ExitCode]
		if meaning == "" {
			meaning = commonExits[a.ExitCode]
		}
		if meaning != "" {
			b.WriteString(" (" + meaning + ")")
		}
		code := strconv.Itoa(a.ExitCode)
		if rest, ok := strings.CutPrefix(why, "exit "+code+" but "); ok {
			b.WriteString(" but " + rest)
		} else if why != "" && why != "exit code "+code {
			b.WriteString(": " + why)
		}
	default:
		if why == "" {
			why = "it did not start"
		}
		b.WriteString(why)
	}
	if l := tellingLine(a.OutputTail); l != "" && !strings.Contains(b.String(), l) {
		b.WriteString(": " + l)
	}
	return b.String()
}

// tellingLine is the line of tail that says why a run failed: the last
// one that looks like an error, else the last line; at most 240 bytes.
func tellingLine(tail string) string {
	lines := strings.Split(strings.TrimSpace(tail), "\n")
	pick := ""
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if l == "" {
			continue
		}
		if pick == "" {
			pick = l
		}
		if tellingRe.MatchString(l) {
			pick = l
			break
		}
	}
	pick = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, pick)
	if len(pick) > 240 {
		pick = pick[:240] + "..."
	}
	return pick
}

// incompleteReason is the reason of an INCOMPLETE triple whose table
// reason is only that a result was "error" or "timeout": what the first
// such attempt did, in words; "" when the table's reason says more.
func (r *tripleRun) incompleteReason(d flakegate.Decision) string {
	m := resultTypeRe.FindStringSubmatch(d.Reason)
	if m == nil {
		return ""
	}
	for _, a := range r.t.attempts {
		if a.Result != runner.Errored && a.Result != runner.Timeout {
			continue
		}
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
