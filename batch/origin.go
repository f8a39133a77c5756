package batch

import (
	"fmt"
	"math"
	"strconv"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/attempt"
)

// SchedulerLikely reports whether the attempts so far give the table's
// SCHEDULER signals (candidate failed, base passed, a retry inside the
// cap passed, within budget). The label is still the table's: rows 7 and
// 8 may say otherwise, and then the probe's results are only extra data.
func SchedulerLikely(t *Tally) bool {
	return t.Candidate == attempt.Fail && t.Base == attempt.Pass && t.BudgetOK && t.Complete &&
		len(t.Retries) > 0 && t.Retries[len(t.Retries)-1] == attempt.Pass
}

// History is what earlier records of a triple on this base, with this
// argv template, say about its base seed.
type History struct {
	Passes, Fails int // base results: the base replay and probe runs
	Records       int // records read
}

// CandidateRuns are the candidate's attempts of a SCHEDULER triple: its
// first run and its retries, and how many of them did not pass.
type CandidateRuns struct{ Runs, Fails int }

// CandidateRunsOf counts the candidate's first run and retries of t and
// how many of them did not pass (the first run failed: it is a SCHEDULER
// signal).
func CandidateRunsOf(t *Tally) CandidateRuns {
	cand := CandidateRuns{Runs: 1 + len(t.Retries), Fails: 1}
	for _, res := range t.Retries {
		if res != attempt.Pass {
			cand.Fails++
		}
	}
	return cand
}

// Origin combines this check's base replay (a pass, counted unless it
// came from the replay cache, which an earlier record holds), the
// probe's results and the history into the origin and its reason. A base
// failure makes it "base". Otherwise it is "new" only when the base
// passed often enough that a flake failing as often as the candidate did
// (cand) would have failed at least once with NewFlakeConfidence; with
// fewer passes, or without a probe (flake_probe_runs: 0), it is
// "unknown": nothing says whose flake it is.
// The third result is the counts alone, for reports.
func Origin(probed, countReplay bool, probes []string, h History, cand CandidateRuns) (origin, why, counts string) {
	passes, fails := h.Passes, h.Fails
	if countReplay {
		passes++
	}
	probeFails := 0
	for _, r := range probes {
		switch r {
		case attempt.Pass:
			passes++
		case attempt.Fail:
			fails++
			probeFails++
		}
	}
	if fails > 0 {
		counts := fmt.Sprintf("this base failed the seed %d of %d times (%d in %d probe runs, %d in %d earlier records of this base)",
			fails, fails+passes, probeFails, len(probes), h.Fails, h.Records)
		return flakegate.FlakeOriginBase, "flake on base: " + counts, counts
	}
	rate := float64(cand.Fails) / float64(max(cand.Runs, 1))
	show := 1 - math.Pow(1-rate, float64(passes))
	counts = fmt.Sprintf("base passed %d of %d; a 1-in-%s flake would show in %d runs with %.0f%% probability",
		passes, passes, oneIn(cand), passes, 100*show)
	if !probed {
		return flakegate.FlakeOriginUnknown, "unknown flake origin: flake_probe_runs is 0, the base seed was not probed; " + counts, counts
	}
	if show >= flakegate.NewFlakeConfidence {
		return flakegate.FlakeOriginNew, "new flake: " + counts + "; this patch may have introduced it", counts
	}
	return flakegate.FlakeOriginUnknown, fmt.Sprintf("unknown flake origin: %s, less than the %.0f%% that would tell a new flake", counts, 100*flakegate.NewFlakeConfidence), counts
}

// oneIn writes the candidate's failure rate as "2" (1 in 2) or "1.5".
func oneIn(c CandidateRuns) string {
	if c.Fails <= 0 {
		return "inf"
	}
	if c.Runs%c.Fails == 0 {
		return strconv.Itoa(c.Runs / c.Fails)
	}
	return strconv.FormatFloat(float64(c.Runs)/float64(c.Fails), 'f', 1, 64)
}
