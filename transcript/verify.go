package transcript

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/flakegate/flakegate"
)

// Verify re-checks a run record (flakegate.RunRecord JSON)
// against the transcript it names and returns each difference as a
// sentence; none means they agree. It checks that:
//
//   - every line is a JSON event chained to the line before it, and the
//     file ends with a newline (no torn last line);
//   - exactly one retry_cap event comes before any attempt or base replay,
//     and equals the record's retry_cap;
//   - every attempt_end has its attempt_start, every attempt ends, and no
//     attempt runs twice; the base seed runs at most once;
//   - the record's attempts are the transcript's attempt_end events in
//     order, with equal side, index, result, exit code and wall seconds;
//   - candidate_result and retry_results match the candidate attempts
//     (index 0, then retries 1, 2, ... in order, no more than the cap);
//     a record may say "fail" for an attempt that timed out or errored,
//     never "pass";
//   - base_seed_result and base_from_replay_cache equal the one base_replay
//     event (whose result equals the base attempt's when it did not come
//     from the cache); with no base_replay the record may not claim a pass
//     or a fail on base;
//   - base_probe_results are the results of the probe attempts, in order;
//   - a complete event is the last line.
//
// The record's transcript_sha256 is checked by the caller, against the
// file it read.
func Verify(recordRaw, transcriptRaw []byte) []string {
	var rec flakegate.RunRecord
	if err := json.Unmarshal(recordRaw, &rec); err != nil {
		return []string{"the record is not a readable run record: " + err.Error()}
	}
	v := &verifier{rec: &rec}
	v.readChain(transcriptRaw)
	v.walk()
	v.checkCap()
	v.checkAttempts()
	v.checkCandidate()
	v.checkBase()
	v.checkProbes()
	return v.diffs
}

// checkProbes compares base_probe_results with the probe attempts, in
// order.
func (v *verifier) checkProbes() {
	var probes []string
	for _, e := range v.ends {
		if e.ev.Side == SideProbe {
			probes = append(probes, e.ev.Result)
		}
	}
	if !slices.Equal(probes, v.rec.BaseProbeResults) {
		v.addf("base_probe_results is %q in the record, but the probe attempts ended %q", v.rec.BaseProbeResults, probes)
	}
}

type lineEvent struct {
	line int // 1-based
	ev   Event
}

type attemptKey struct {
	side  string
	index int
}

func (k attemptKey) String() string { return fmt.Sprintf("%s #%d", k.side, k.index) }

type verifier struct {
	rec   *flakegate.RunRecord
	diffs []string

	events      []lineEvent
	lines       int
	caps        []lineEvent
	ends        []lineEvent // attempt_end events in order
	baseReplays []lineEvent
}

func (v *verifier) addf(format string, args ...any) {
	v.diffs = append(v.diffs, fmt.Sprintf(format, args...))
}

// readChain parses the lines and checks the sha256 chain.
func (v *verifier) readChain(raw []byte) {
	if len(raw) == 0 {
		v.addf("the transcript is empty")
		return
	}
	if raw[len(raw)-1] != '\n' {
		v.addf("the transcript's last line has no newline: the file was cut off")
	} else {
		raw = raw[:len(raw)-1]
	}
	prev := ""
	for i, line := range bytes.Split(raw, []byte("\n")) {
		n := i + 1
		v.lines = n
		var probe struct {
			Prev *string `json:"prev_sha256"`
		}
		var ev Event
		if err := json.Unmarshal(line, &probe); err != nil {
			v.addf("line %d is not a JSON event: %v", n, err)
		} else if err := json.Unmarshal(line, &ev); err != nil {
			v.addf("line %d is not a transcript event: %v", n, err)
		} else {
			switch {
			case probe.Prev == nil:
				v.addf("line %d has no prev_sha256", n)
			case *probe.Prev != prev && n == 1:
				v.addf("line 1: prev_sha256 is not empty: the transcript does not start at its first line")
			case *probe.Prev != prev:
				v.addf("line %d: prev_sha256 does not match the sha256 of line %d: a line was edited, dropped or reordered", n, n-1)
			}
			v.events = append(v.events, lineEvent{line: n, ev: ev})
		}
		prev = lineSHA256(line)
	}
}

// walk checks the order of events and collects them by type.
func (v *verifier) walk() {
	open := map[attemptKey]int{}
	seen := map[attemptKey]bool{}
	firstResult := 0 // line of the first attempt or base replay
	complete := 0
	for _, le := range v.events {
		ev, n := le.ev, le.line
		if complete != 0 {
			v.addf("line %d: an event follows the complete event on line %d", n, complete)
			complete = 0 // report once
		}
		k := attemptKey{ev.Side, ev.Index}
		switch ev.Type {
		case EventRetryCap:
			if firstResult != 0 {
				v.addf("line %d: retry_cap was written after the first attempt (line %d), so the cap was not fixed in advance", n, firstResult)
			}
			v.caps = append(v.caps, le)
		case EventAttemptStart:
			if firstResult == 0 {
				firstResult = n
			}
			if ev.Side != SideCandidate && ev.Side != SideBase && ev.Side != SideProbe {
				v.addf("line %d: attempt side %q is neither candidate, base nor probe", n, ev.Side)
			}
			if seen[k] {
				v.addf("line %d: attempt %s starts a second time", n, k)
			}
			seen[k] = true
			open[k] = n
		case EventAttemptEnd:
			if firstResult == 0 {
				firstResult = n
			}
			if _, ok := open[k]; !ok {
				v.addf("line %d: attempt %s ends without an attempt_start", n, k)
			}
			delete(open, k)
			v.ends = append(v.ends, le)
		case EventBaseReplay:
			if firstResult == 0 {
				firstResult = n
			}
			v.baseReplays = append(v.baseReplays, le)
		case EventPrepare:
			if firstResult != 0 {
				v.addf("line %d: a prepare was written after the first attempt (line %d)", n, firstResult)
			}
		case EventComplete:
			complete = n
		default:
			v.addf("line %d: unknown event type %q", n, ev.Type)
		}
	}
	unended := make([]lineEvent, 0, len(open))
	for k, n := range open {
		unended = append(unended, lineEvent{line: n, ev: Event{Side: k.side, Index: k.index}})
	}
	slices.SortFunc(unended, func(a, b lineEvent) int { return a.line - b.line })
	for _, le := range unended {
		v.addf("attempt %s started on line %d never ended", attemptKey{le.ev.Side, le.ev.Index}, le.line)
	}
	if len(v.events) > 0 && v.events[len(v.events)-1].ev.Type != EventComplete {
		v.addf("the transcript does not end with a complete event")
	} else if len(v.events) > 0 && v.events[len(v.events)-1].line != v.lines {
		v.addf("the transcript's last line is not a readable complete event")
	}
}

func (v *verifier) checkCap() {
	switch len(v.caps) {
	case 0:
		v.addf("the transcript has no retry_cap event")
		return
	case 1:
	default:
		v.addf("retry_cap is written %d times (lines %s)", len(v.caps), joinLines(v.caps))
	}
	c := v.caps[0]
	if c.ev.RetryCap == nil {
		v.addf("line %d: the retry_cap event has no value", c.line)
		return
	}
	if *c.ev.RetryCap != v.rec.RetryCap {
		v.addf("retry_cap is %d in the record but %d in the transcript (line %d)", v.rec.RetryCap, *c.ev.RetryCap, c.line)
	}
}

// checkAttempts compares the record's attempts with the attempt_end events.
func (v *verifier) checkAttempts() {
	ra := v.rec.Attempts
	if len(ra) != len(v.ends) {
		v.addf("the record lists %d attempts, the transcript %d", len(ra), len(v.ends))
	}
	for i := 0; i < len(ra) && i < len(v.ends); i++ {
		a, e := ra[i], v.ends[i]
		rk, tk := attemptKey{a.Side, a.Index}, attemptKey{e.ev.Side, e.ev.Index}
		if rk != tk {
			v.addf("attempt %d is %s in the record but %s in the transcript (line %d)", i+1, rk, tk, e.line)
			continue
		}
		if a.Result != e.ev.Result {
			v.addf("attempt %s: the record says %q, the transcript (line %d) %q", rk, a.Result, e.line, e.ev.Result)
		}
		if a.ExitCode != e.ev.ExitCode {
			v.addf("attempt %s: the record says exit code %d, the transcript (line %d) %d", rk, a.ExitCode, e.line, e.ev.ExitCode)
		}
		if a.WallSeconds != e.ev.WallSeconds {
			v.addf("attempt %s: the record says %gs of wall time, the transcript (line %d) %gs", rk, a.WallSeconds, e.line, e.ev.WallSeconds)
		}
	}
}

// checkCandidate compares candidate_result and retry_results with the
// candidate attempts.
func (v *verifier) checkCandidate() {
	var first *lineEvent
	var retries []lineEvent
	for i, e := range v.ends {
		if e.ev.Side != SideCandidate {
			continue
		}
		if e.ev.Index == 0 {
			if first == nil {
				first = &v.ends[i]
			}
			continue
		}
		if want := len(retries) + 1; e.ev.Index != want {
			v.addf("line %d: candidate retry #%d ends where retry #%d was due", e.line, e.ev.Index, want)
		}
		retries = append(retries, e)
	}
	if first == nil && v.rec.AttemptsSkipped != "" && len(v.ends) == 0 {
		// The diff alone decided (attempts_skipped): nothing ran, and the
		// record claims no pass.
		if v.rec.CandidateResult != flakegate.ResultFail || len(v.rec.RetryResults) > 0 {
			v.addf("the record skipped its attempts (%s) but claims candidate_result %q and %d retries", v.rec.AttemptsSkipped, v.rec.CandidateResult, len(v.rec.RetryResults))
		}
		return
	}
	if first == nil {
		v.addf("the transcript has no first candidate attempt")
	} else if !sameResult(v.rec.CandidateResult, first.ev.Result) {
		v.addf("candidate_result is %q in the record, but the first candidate attempt (line %d) ended %q", v.rec.CandidateResult, first.line, first.ev.Result)
	}
	if len(retries) > v.rec.RetryCap {
		v.addf("%d retries ran but the retry cap is %d", len(retries), v.rec.RetryCap)
	}
	if len(v.rec.RetryResults) != len(retries) {
		v.addf("retry_results lists %d retries, the transcript %d", len(v.rec.RetryResults), len(retries))
	}
	for i := 0; i < len(retries) && i < len(v.rec.RetryResults); i++ {
		if !sameResult(v.rec.RetryResults[i], retries[i].ev.Result) {
			v.addf("retry %d is %q in retry_results, but it ended %q (line %d)", i+1, v.rec.RetryResults[i], retries[i].ev.Result, retries[i].line)
		}
	}
}

// checkBase compares base_seed_result and base_from_replay_cache with the
// base_replay event and the base attempt.
func (v *verifier) checkBase() {
	var base []lineEvent
	for _, e := range v.ends {
		if e.ev.Side == SideBase {
			base = append(base, e)
		}
	}
	if len(base) > 1 {
		v.addf("the base seed ran %d times (lines %s); a base replay never retries", len(base), joinLines(base))
	}
	switch len(v.baseReplays) {
	case 0:
		if r := v.rec.BaseSeedResult; r == flakegate.ResultPass || r == flakegate.ResultFail {
			v.addf("base_seed_result is %q in the record, but the transcript has no base replay", r)
		}
		if v.rec.BaseFromCache {
			v.addf("the record says the base result came from the replay cache, but the transcript has no base replay")
		}
		return
	case 1:
	default:
		v.addf("the transcript has %d base_replay events (lines %s)", len(v.baseReplays), joinLines(v.baseReplays))
	}
	br := v.baseReplays[0]
	if v.rec.BaseSeedResult != br.ev.Result {
		v.addf("base_seed_result is %q in the record, %q in the transcript (line %d)", v.rec.BaseSeedResult, br.ev.Result, br.line)
	}
	if v.rec.BaseFromCache != br.ev.FromCache {
		v.addf("base_from_replay_cache is %t in the record, %t in the transcript (line %d)", v.rec.BaseFromCache, br.ev.FromCache, br.line)
	}
	if br.ev.FromCache {
		return
	}
	if len(base) == 0 {
		v.addf("line %d: the base replay did not come from the cache, but no base attempt ran", br.line)
	} else if base[0].ev.Result != br.ev.Result {
		v.addf("line %d: the base replay says %q, but the base attempt (line %d) ended %q", br.line, br.ev.Result, base[0].line, base[0].ev.Result)
	}
}

// sameResult reports whether a record's pass/fail result agrees with an
// attempt's result: equal, or "fail" for an attempt that timed out or
// errored. A pass is never inferred.
func sameResult(record, attempt string) bool {
	return record == attempt || record == flakegate.ResultFail && (attempt == flakegate.ResultTimeout || attempt == flakegate.ResultError)
}

func joinLines(les []lineEvent) string {
	s := make([]string, len(les))
	for i, le := range les {
		s[i] = fmt.Sprint(le.line)
	}
	return strings.Join(s, ", ")
}
