package report

import (
	"fmt"
	"strings"

	"github.com/flakegate/flakegate"
)

// labelMeaning says in words what a label means, for results whose reason
// is empty (the decision table's rows name it, the reason only refines it).
var labelMeaning = map[flakegate.Label]string{
	flakegate.Incomplete:   "the run record is incomplete",
	flakegate.Contaminated: "the candidate diff edits a watched path",
	flakegate.Fixture:      "the fixture digest differs from the base",
	flakegate.Budget:       "a budget did not hold",
	flakegate.Property:     "the property failed on the candidate",
	flakegate.Scheduler:    "failed, then passed on a retry inside the cap",
	flakegate.Pass:         "passed",
}

// reasonOf returns the result's reason, or the label's meaning.
func reasonOf(r *flakegate.Result) string {
	if r.Reason != "" {
		return r.Reason
	}
	if m, ok := labelMeaning[r.Label]; ok {
		return m
	}
	return "unknown label"
}

// failedAttempts returns the attempts of r that did not pass.
func failedAttempts(r *flakegate.Result) []flakegate.Attempt {
	var out []flakegate.Attempt
	for _, a := range r.Attempts {
		if a.Result != "pass" {
			out = append(out, a)
		}
	}
	return out
}

// attemptName names an attempt as people say it: "candidate run",
// "candidate retry 2", "base replay".
func attemptName(a flakegate.Attempt) string {
	switch {
	case a.Side == "base":
		return "base replay"
	case a.Index == 0:
		return a.Side + " run"
	default:
		return fmt.Sprintf("%s retry %d", a.Side, a.Index)
	}
}

// attemptLine is one attempt on one line: name, result, exit, wall time.
func attemptLine(a flakegate.Attempt) string {
	var b strings.Builder
	b.WriteString(attemptName(a))
	b.WriteString(": ")
	b.WriteString(a.Result)
	if a.Signal != "" {
		fmt.Fprintf(&b, " (signal %s)", a.Signal)
	} else if a.Result != "pass" {
		fmt.Fprintf(&b, " (exit %d)", a.ExitCode)
	}
	fmt.Fprintf(&b, " in %s", seconds(a.WallSeconds))
	return b.String()
}

// attemptsText lists the attempts, one per line.
func attemptsText(as []flakegate.Attempt) string {
	var b strings.Builder
	for _, a := range as {
		b.WriteString(attemptLine(a))
		b.WriteByte('\n')
	}
	return b.String()
}

// seconds formats a duration in seconds for people: "0.42s", "12.3s", "2m05s".
func seconds(s float64) string {
	switch {
	case s < 10:
		return fmt.Sprintf("%.2fs", s)
	case s < 60:
		return fmt.Sprintf("%.1fs", s)
	default:
		total := int(s + 0.5)
		return fmt.Sprintf("%dm%02ds", total/60, total%60)
	}
}

// runsLeft formats a frozen result's remaining runs.
func runsLeft(r *flakegate.Result) string {
	if r.RunsLeft == nil {
		return "unknown runs left"
	}
	if *r.RunsLeft == 1 {
		return "1 run left"
	}
	return fmt.Sprintf("%d runs left", *r.RunsLeft)
}

// frozenLine says where a skipped triple's freeze came from: the
// candidate of the record that earned it, the owner and the runs left.
func frozenLine(r *flakegate.Result) string {
	s := "owner " + ownerOf(r) + ", " + runsLeft(r)
	if r.FrozenCandidate != "" {
		s = "frozen from candidate " + flakegate.ShortSHA(r.FrozenCandidate) + ", " + s
	}
	return s
}

// originText says where a SCHEDULER flake comes from and what the
// probe saw: "new flake (base probe: pass, pass, pass)"; "" without a probe.
func originText(r *flakegate.Result) string {
	if r.FlakeOrigin == "" {
		return ""
	}
	s := r.FlakeOrigin + " flake"
	if r.FlakeOrigin == flakegate.FlakeOriginUnknown {
		s = "flake of unknown origin"
	}
	if r.FlakeOrigin == flakegate.FlakeOriginBase {
		s = "flake on base"
	}
	if len(r.BaseProbeResults) > 0 {
		s += " (base probe: " + strings.Join(r.BaseProbeResults, ", ") + ")"
	}
	if r.FlakeCounts != "" {
		s += ": " + r.FlakeCounts
	}
	return s
}

// ownerOf returns the result's owner, or says none was recorded.
func ownerOf(r *flakegate.Result) string {
	if r.Owner == "" {
		return "no owner recorded"
	}
	return r.Owner
}

// Counts tallies a summary: results per label (ran only), skipped frozen
// triples, rejects.
type Counts struct {
	Total   int
	Labels  map[flakegate.Label]int
	Skipped int
	Rejects int
}

// CountResults tallies s. A skipped result counts as skipped only, not
// under its freeze's label.
func CountResults(s *flakegate.Summary) Counts {
	c := Counts{Labels: map[flakegate.Label]int{}}
	for i := range s.Results {
		r := &s.Results[i]
		c.Total++
		switch {
		case r.Skipped:
			c.Skipped++
		default:
			c.Labels[r.Label]++
			if r.Label.Reject() {
				c.Rejects++
			}
		}
	}
	return c
}

// FrozenWording is how every report names a triple skipped under a
// freeze: the label stays SCHEDULER, the status is this.
const FrozenWording = "skipped (frozen)"

// idOf names the result's test: "path" or "path::name".
func idOf(r *flakegate.Result) string { return r.ID() }

// seedText is the seed as people read it, marked when it was drawn.
func seedText(r *flakegate.Result) string {
	if r.SeedOrigin != "" {
		return r.Seed.String() + " (" + r.SeedOrigin + ")"
	}
	return r.Seed.String()
}

// attemptCounts says how many attempts each side counts: "3 candidate, 1
// base", "1 candidate, 1 base (cached)", or why none ran.
func attemptCounts(r *flakegate.Result) string {
	if r.AttemptsSkipped != "" && r.CandidateAttempts == 0 {
		return "no attempt ran (" + r.AttemptsSkipped + ")"
	}
	cand, baseN := r.CandidateAttempts, r.BaseAttempts
	if cand+baseN == 0 {
		// A summary written before the counts existed: count the attempts.
		for _, a := range r.Attempts {
			if a.Side == "base" {
				baseN++
			} else {
				cand++
			}
		}
	}
	base := fmt.Sprintf("%d base", baseN)
	if r.BaseCached {
		base += " (cached)"
	}
	if n := len(r.BaseProbeResults); n > 0 {
		base += fmt.Sprintf(", %d base %s", n, map[bool]string{true: "probe", false: "probes"}[n == 1])
	}
	return fmt.Sprintf("%d candidate, %s", cand, base)
}

// failingAttempt returns the attempt whose output explains a failure: the
// first candidate attempt that did not pass, else the first attempt that
// did not pass.
func failingAttempt(as []flakegate.Attempt) (flakegate.Attempt, bool) {
	for _, a := range as {
		if a.Side != "base" && a.Result != "pass" {
			return a, true
		}
	}
	for _, a := range as {
		if a.Result != "pass" {
			return a, true
		}
	}
	return flakegate.Attempt{}, false
}

// maxExampleLines bounds an extracted falsifying example.
const maxExampleLines = 40

// FalsifyingExample returns the falsifying example a framework printed in
// output, or "": Hypothesis's "Falsifying example:" block (up to the next
// blank or rule line) and pgregory.net/rapid's "[rapid]" lines with the
// line that says how to reproduce.
func FalsifyingExample(output string) string {
	lines := strings.Split(output, "\n")
	var out []string
	for i := 0; i < len(lines) && len(out) < maxExampleLines; i++ {
		l := strings.TrimRight(lines[i], "\r")
		switch {
		case strings.Contains(l, "Falsifying example"):
			for ; i < len(lines) && len(out) < maxExampleLines; i++ {
				l = strings.TrimRight(lines[i], "\r")
				t := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "E "))
				if t == "" || strings.HasPrefix(t, "====") || strings.HasPrefix(t, "----") {
					break
				}
				out = append(out, l)
			}
		case strings.Contains(l, "[rapid] "), strings.Contains(l, "To reproduce, specify"):
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// failureText is the failing attempt's output tail, headed by the
// falsifying example when the framework printed one; "" without output.
func failureText(r *flakegate.Result) string {
	a, ok := failingAttempt(r.Attempts)
	if !ok || a.OutputTail == "" {
		return ""
	}
	var b strings.Builder
	if ex := FalsifyingExample(a.OutputTail); ex != "" {
		b.WriteString("falsifying example (" + attemptName(a) + "):\n" + ex + "\n\n")
	}
	b.WriteString("output of the " + attemptName(a) + " (tail):\n" + a.OutputTail)
	if !strings.HasSuffix(a.OutputTail, "\n") {
		b.WriteByte('\n')
	}
	return b.String()
}
