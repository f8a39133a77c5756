package flakegate

import (
	"path"
	"strconv"
	"strings"

	"github.com/flakegate/flakegate/internal/lazyre"
)

// exitMeanings are what a test runner's exit codes mean, by the name
// ProgramName gives the runner.
var exitMeanings = map[string]map[int]string{
	"pytest":  {2: "interrupted", 3: "internal error", 4: "usage error", 5: "no tests collected"},
	"go test": {2: "build or usage error"},
}

// commonExits are what any program's exit codes 126 and 127 mean (the
// shell's and env's convention).
var commonExits = map[int]string{126: "cannot execute", 127: "command not found"}

// ResultTypeReasonRe matches the decision table's reason for a result
// that is neither pass nor fail (an attempt that errored or timed out):
// group 1 is the key, group 2 the value.
var ResultTypeReasonRe = lazyre.New(`^(candidate_result|base_seed_result|retry_results\[\d+\]): want "pass" or "fail", got the string "(error|timeout)"$`)

// tellingRe matches a line of output that usually says why a run failed.
var tellingRe = lazyre.New(`(?i)(^E\s|^ERROR\b|error[:\]]|no module named|not found|cannot find|permission denied|usage:|exception|traceback)`)

// ProgramName names the test runner an argv starts, for a reason:
// "pytest" (also python -m pytest), "go test", "vitest", "jest", else the
// program's base name (after env and its assignments).
func ProgramName(argv []string) string {
	prog := ""
	for i, w := range argv {
		b := path.Base(w)
		switch {
		case b == "pytest" || b == "py.test" || w == "pytest" && i > 0 && argv[i-1] == "-m":
			return "pytest"
		case b == "go" && i+1 < len(argv) && argv[i+1] == "test":
			return "go test"
		case b == "vitest" || b == "jest":
			return b
		}
		if prog == "" && b != "env" && !strings.HasPrefix(w, "-") && !strings.Contains(w, "=") {
			prog = b
		}
	}
	if prog == "" {
		return "the command"
	}
	return prog
}

// NeverRan says why an attempt that errored or timed out is no result,
// in words a person can act on: "the test never ran: candidate attempt
// 0: pytest exited 4 (usage error): ERROR: file or directory not found:
// tests/x.py". prog is ProgramName's; why is the attempt's own reason
// (the runner's or the evidence's; "" when unknown).
func NeverRan(prog string, a Attempt, why string) string {
	var b strings.Builder
	b.WriteString("the test never ran: " + a.Side + " attempt " + strconv.Itoa(a.Index) + ": ")
	code := strconv.Itoa(a.ExitCode)
	switch {
	case a.Result == ResultTimeout:
		b.WriteString(prog + " ran past its budget")
		if why != "" {
			b.WriteString(" (" + why + ")")
		}
	case a.ExitCode >= 0:
		b.WriteString(prog + " exited " + code)
		meaning := exitMeanings[prog][a.ExitCode]
		if meaning == "" {
			meaning = commonExits[a.ExitCode]
		}
		if meaning != "" {
			b.WriteString(" (" + meaning + ")")
		}
		if rest, ok := strings.CutPrefix(why, "exit "+code+" but "); ok {
			b.WriteString(" but " + rest)
		} else if why != "" && why != "exit code "+code {
			b.WriteString(": " + why)
		}
	default:
		if why == "" {
			why = "it did not start"
			if a.Signal != "" {
				why = "killed by " + a.Signal
			}
		}
		b.WriteString(why)
	}
	if l := TellingLine(a.OutputTail); l != "" && !strings.Contains(b.String(), l) {
		b.WriteString(": " + l)
	}
	return b.String()
}

// TellingLine is the line of an output tail that says why a run failed:
// the last one that looks like an error, else the last line; control
// characters blanked, at most 240 bytes.
func TellingLine(tail string) string {
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

// FirstUnfinished is the first attempt that errored or timed out.
func FirstUnfinished(as []Attempt) (Attempt, bool) {
	for _, a := range as {
		if a.Result == ResultError || a.Result == ResultTimeout {
			return a, true
		}
	}
	return Attempt{}, false
}
