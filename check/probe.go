// The flake probe: after a SCHEDULER result, the base seed runs
// flake_probe_runs more times, looking for a base failure; with the
// store's history of the triple it says where the flake comes from.

package check

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/transcript"
)

// schedulerLikely reports whether the attempts so far give the table's
// SCHEDULER signals (candidate failed, base passed, a retry inside the
// cap passed, within budget). The label is still the table's: rows 7 and
// 8 may say otherwise, and then the probe's results are only extra data.
func schedulerLikely(t *transcriptRun) bool {
	return t.candidate == attempt.Fail && t.base == attempt.Pass && t.budgetOK && t.complete &&
		len(t.retries) > 0 && t.retries[len(t.retries)-1] == attempt.Pass
}

// probe runs the base seed up to K more times on the base tree (a fresh
// view per attempt: an overlay, or a reset and clean between attempts),
// stopping at the first failure. It is not a retry: a probe can never
// turn a base failure into a pass, it only looks for base failures. Then
// it reads the store's history of the triple and sets the flake origin.
func (r *tripleRun) probe(ctx context.Context) error {
	t := &r.t
	k := r.j.ps.prop.FlakeProbeRuns
	if !schedulerLikely(t) || ctx.Err() != nil {
		return nil
	}
	if k > 0 {
		base := r.trees.base
		check := r.c.checkBaseTree(ctx, r.j.ps, base)
		t.probes = []string{}
		for i := 1; i <= k && ctx.Err() == nil; i++ {
			res, err := r.attempt(ctx, transcript.SideProbe, i, base, check)
			if err != nil {
				return err
			}
			t.probes = append(t.probes, res)
			if res == attempt.Fail {
				break // the flake is the base's: more runs say nothing more
			}
		}
		if ctx.Err() != nil {
			return nil
		}
	}
	h, err := r.c.baseHistory(ctx, r.j)
	if err != nil {
		return err
	}
	t.origin, t.originWhy, t.originCounts = flakeOrigin(k > 0, !t.fromCache, t.probes, h, candidateRunsOf(t))
	return nil
}

// candidateRunsOf counts the candidate's first run and retries of t and
// how many of them did not pass (the first run failed: it is a SCHEDULER
// signal).
func candidateRunsOf(t *transcriptRun) candidateRuns {
	cand := candidateRuns{runs: 1 + len(t.retries), fails: 1}
	for _, res := range t.retries {
		if res != attempt.Pass {
			cand.fails++
		}
	}
	return cand
}

// history is what earlier records of a triple on this base, with this
// argv template, say about its base seed.
type history struct {
	passes, fails int // base results: the base replay and probe runs
	records       int // records read
}

// candidateRuns are the candidate's attempts of a SCHEDULER triple: its
// first run and its retries, and how many of them did not pass.
type candidateRuns struct{ runs, fails int }

// flakeOrigin combines this check's base replay (a pass, counted unless
// it came from the replay cache, which an earlier record holds), the
// probe's results and the history into the origin and its reason. A base
// failure makes it "base". Otherwise it is "new" only when the base
// passed often enough that a flake failing as often as the candidate did
// (cand) would have failed at least once with NewFlakeConfidence; with
// fewer passes, or without a probe (flake_probe_runs: 0), it is
// "unknown": nothing says whose flake it is.
// The third result is the counts alone, for reports.
func flakeOrigin(probed, countReplay bool, probes []string, h history, cand candidateRuns) (origin, why, counts string) {
	passes, fails := h.passes, h.fails
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
			fails, fails+passes, probeFails, len(probes), h.fails, h.records)
		return flakegate.FlakeOriginBase, "flake on base: " + counts, counts
	}
	rate := float64(cand.fails) / float64(max(cand.runs, 1))
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
func oneIn(c candidateRuns) string {
	if c.fails <= 0 {
		return "inf"
	}
	if c.runs%c.fails == 0 {
		return strconv.Itoa(c.runs / c.fails)
	}
	return strconv.FormatFloat(float64(c.runs)/float64(c.fails), 'f', 1, 64)
}

// historyRecord is what baseHistory reads of a stored record.
type historyRecord struct {
	PropertyPath     string         `json:"property_path"`
	Name             string         `json:"name"`
	Seed             flakegate.Seed `json:"seed"`
	FixtureSHA256    string         `json:"fixture_sha256"`
	BaseSeedResult   any            `json:"base_seed_result"`
	BaseProbeResults []string       `json:"base_probe_results"`
	BaseSHA          string         `json:"base_sha"`
	RunSHA256        string         `json:"run_sha256"`
}

// historyKey is a triple on one base with one argv template: only such
// records are its history. A record of another base says nothing about
// this one (a base bug recorded once, then fixed, must not make a later
// flake the base's), nor does one of another command.
func historyKey(t flakegate.Triple, baseSHA, runSHA256 string) string {
	return t.Key() + "\x00" + baseSHA + "\x00" + runSHA256
}

// baseHistory returns the base results earlier records of j's triple
// on this base with this argv template hold (historyKey), in any store (the file store and PostgreSQL both list their
// records, EachRecord). The index is read once per check, when the first
// triple needs it.
func (c *checker) baseHistory(ctx context.Context, j *job) (history, error) {
	c.histMu.Lock()
	defer c.histMu.Unlock()
	if c.hist == nil {
		idx := map[string]history{}
		err := c.store.EachRecord(ctx, func(_ string, raw []byte) error {
			var r historyRecord
			if json.Unmarshal(raw, &r) != nil || !r.Seed.Valid() {
				return nil // not a record flakegate can read: no history
			}
			if r.BaseSHA == "" || r.RunSHA256 == "" {
				return nil // no base or command to match: no history
			}
			key := historyKey(flakegate.Triple{PropertyPath: r.PropertyPath, Name: r.Name, Seed: r.Seed, FixtureSHA256: r.FixtureSHA256}, r.BaseSHA, r.RunSHA256)
			h := idx[key]
			h.records++
			switch r.BaseSeedResult {
			case attempt.Pass:
				h.passes++
			case attempt.Fail:
				h.fails++
			}
			for _, p := range r.BaseProbeResults {
				switch p {
				case attempt.Pass:
					h.passes++
				case attempt.Fail:
					h.fails++
				}
			}
			idx[key] = h
			return nil
		})
		if err != nil {
			return history{}, flakegate.StoreError("read the records' history", err)
		}
		c.hist = idx
	}
	key := historyKey(flakegate.Triple{PropertyPath: j.ps.prop.Path, Name: j.ps.prop.Name, Seed: j.seed, FixtureSHA256: j.ps.candFixtureSHA256}, c.baseSHA, j.ps.runSHA256)
	return c.hist[key], nil
}
