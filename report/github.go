package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/internal/termsafe"
)

// GitHubAnnotations writes GitHub workflow commands for s: an ::error on
// the property file for each reject, a ::notice for each SCHEDULER result
// and one for each frozen triple that was skipped. Passing results get
// none.
func GitHubAnnotations(w io.Writer, s *flakegate.Summary) error {
	bw := bufio.NewWriter(w)
	if s.Isolation == "none" {
		fmt.Fprintf(bw, "::warning title=%s::%s\n", escapeProperty("flakegate not sandboxed"),
			escapeData("the attempts ran without the sandbox (sandbox: {mode: none}, isolation none): the code under test could reach the gate, so no freeze is granted"))
	}
	suiteRejects := suiteRejectsByTest(s)
	for i := range s.Results {
		r := &s.Results[i]
		var kind, title string
		var msg strings.Builder
		switch {
		case r.Suite != "" && r.Label.Reject() && !r.Skipped:
			// A suite's test is one annotation for all its seeds, written
			// where its first reject is.
			rs := suiteRejects[r.Suite+"\x00"+r.ID()]
			if rs[0] != r {
				continue
			}
			kind, title = "error", "flakegate "+string(r.Label)
			suiteRejectMessage(&msg, rs)
		case r.Skipped:
			kind, title = "notice", fmt.Sprintf("flakegate %s %s", r.Label, FrozenWording)
			fmt.Fprintf(&msg, "%sseed %s %s: %s", namePrefix(r), seedText(r), FrozenWording, frozenLine(r))
		case r.Label.Reject():
			kind, title = "error", "flakegate "+string(r.Label)
			fmt.Fprintf(&msg, "%sseed %s: %s", namePrefix(r), seedText(r), reasonOf(r))
			if line := attemptsShort(r.Attempts); line != "" {
				fmt.Fprintf(&msg, "\nattempts: %s", line)
			}
			if r.Reproduce != "" {
				fmt.Fprintf(&msg, "\nreproduce: %s", r.Reproduce)
			}
		case r.Label == flakegate.Scheduler:
			kind, title = "notice", "flakegate SCHEDULER"
			fmt.Fprintf(&msg, "%sseed %s failed, then passed on a retry inside the cap; the base seed passed", namePrefix(r), seedText(r))
			if o := originText(r); o != "" {
				fmt.Fprintf(&msg, "\nflake origin: %s", o)
			}
			if line := attemptsShort(r.Attempts); line != "" {
				fmt.Fprintf(&msg, "\nattempts: %s", line)
			}
			if flakegate.NotBaseFlake(r.FlakeOrigin) {
				fmt.Fprintf(&msg, "\nnot frozen by default (base never failed this seed); to freeze it anyway: %s --allow-new-flake", grantCommand(r))
			} else {
				fmt.Fprintf(&msg, "\nto freeze this triple: %s", grantCommand(r))
			}
		default:
			continue
		}
		// The log a person reads shows the message: what a terminal (or
		// the log viewer) would act on is rendered as text first.
		fmt.Fprintf(bw, "::%s file=%s,title=%s::%s\n", kind, escapeProperty(termsafe.String(r.PropertyPath)),
			escapeProperty(termsafe.String(title)), escapeData(termsafe.String(msg.String())))
	}
	for _, t := range s.NewTests {
		if newTestFailed(t) {
			fmt.Fprintf(bw, "::error file=%s,title=%s::%s\n", escapeProperty(termsafe.String(t.Path)), escapeProperty("flakegate new test failed"),
				escapeData(termsafe.String(newTestText(t)+" on the candidate (suite "+t.Suite+"); no base can replay a test the patch adds. "+newTestPolicy(s))))
		}
	}
	return bw.Flush()
}

// suiteRejectsByTest gathers the rejected triples of each suite's test
// (suite, path and name), in summary order.
func suiteRejectsByTest(s *flakegate.Summary) map[string][]*flakegate.Result {
	out := map[string][]*flakegate.Result{}
	for i := range s.Results {
		r := &s.Results[i]
		if r.Suite != "" && r.Label.Reject() && !r.Skipped {
			k := r.Suite + "\x00" + r.ID()
			out[k] = append(out[k], r)
		}
	}
	return out
}

// suiteRejectMessage tells one suite test's rejects: which order seeds,
// each one's label and reason, and how to reproduce it.
func suiteRejectMessage(msg *strings.Builder, rs []*flakegate.Result) {
	r := rs[0]
	fmt.Fprintf(msg, "%s(suite %s) rejected on %s", namePrefix(r), r.Suite, plural(len(rs), "order seed"))
	for _, x := range rs {
		fmt.Fprintf(msg, "\nseed %s: %s: %s", seedText(x), x.Label, reasonOf(x))
		if x.Reproduce != "" {
			fmt.Fprintf(msg, "\nreproduce: %s", x.Reproduce)
		}
	}
}

// namePrefix is "NAME " for a result with a test name.
func namePrefix(r *flakegate.Result) string {
	if r.Name == "" {
		return ""
	}
	return r.Name + " "
}

// grantCommand is the command line that freezes a SCHEDULER result.
func grantCommand(r *flakegate.Result) string {
	rec := r.Record
	if rec == "" {
		rec = "RECORD"
	}
	return fmt.Sprintf("flakegate freeze grant --record %s --owner NAME", rec)
}

// escapeData escapes a workflow command's message: % first, then CR and LF.
func escapeData(s string) string {
	s = strings.ReplaceAll(s, "%", "%25")
	s = strings.ReplaceAll(s, "\r", "%0D")
	return strings.ReplaceAll(s, "\n", "%0A")
}

// escapeProperty escapes a workflow command's property value: as data,
// plus ':' and ',' which end a value.
func escapeProperty(s string) string {
	s = escapeData(s)
	s = strings.ReplaceAll(s, ":", "%3A")
	return strings.ReplaceAll(s, ",", "%2C")
}

// attemptsShort tells the attempts in one line: the candidate's runs in
// order, then the base replay: "fail → fail → pass; base pass".
func attemptsShort(as []flakegate.Attempt) string {
	var cand, base, probe []string
	for _, a := range as {
		switch a.Side {
		case "base":
			base = append(base, a.Result)
		case "probe":
			probe = append(probe, a.Result)
		default:
			cand = append(cand, a.Result)
		}
	}
	s := strings.Join(cand, " → ")
	for _, part := range []struct {
		what string
		rs   []string
	}{{"base ", base}, {"base probes ", probe}} {
		if len(part.rs) == 0 {
			continue
		}
		if s != "" {
			s += "; "
		}
		s += part.what + strings.Join(part.rs, ", ")
	}
	return s
}
