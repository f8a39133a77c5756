// The flake probe: after a SCHEDULER result, the base seed runs
// flake_probe_runs more times, looking for a base failure; with the
// store's history of the triple it says where the flake comes from.

package check

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/runner"
	"github.com/flakegate/flakegate/transcript"
)

// schedulerLikely reports whether the attempts so far give the table's
// SCHEDULER signals (candidate failed, base passed, a retry inside the
// cap passed, within budget). The label is still the table's: rows 7 and
// 8 may say otherwise, and then the probe's results are only extra data.
func schedulerLikely(t *transcriptRun) bool {
	return t.candidate == runner.Fail && t.base == runner.Pass && t.budgetOK && t.complete &&
		len(t.retries) > 0 && t.retries[len(t.retries)-1] == runner.Pass
}

// probe runs the base seed up to K more times on the base tree (a fresh
// view per attempt: an overlay, or a reset and clean between attempts),
// stopping at the first failure. It is not a retry: a probe can never
// turn a base failure into a pass, it only looks for base failures. Then
// it reads the store's history of the triple and sets the flake origin.
func (r *tripleRun) probe(ctx context.Context) error {
	t := &r.t
	k := r.j.ps.prop.FlakeProbeRuns
	if k <= 0 || !schedulerLikely(t) || ctx.Err() != nil {
		return nil
	}
	base := r.trees.base
	check := r.c.checkBaseTree(ctx, r.j.ps, base)
	t.probes = []string{}
	for i := 1; i <= k && ctx.Err() == nil; i++ {
		res, err := r.attempt(ctx, transcript.SideProbe, i, base, check)
		if err != nil {
			return err
		}
		t.probes = append(t.probes, res)
		if res == runner.Fail {
			break // the flake is the base's: more runs say nothing more
		}
	}
	if ctx.Err() != nil {
		return nil
	}
	h, err := r.c.baseHistory(ctx, r.j)
	if err != nil {
		return err
	}
	t.origin, t.originWhy = flakeOrigin(t.probes, h)
	return nil
}

// history is what earlier records of a triple say about its base seed.
type history struct {
	passes, fails int // base results: the base replay and probe runs
	records       int // records read
}

// flakeOrigin combines this check's base replay (a pass), the probe's
// results and the history into the origin and its reason.
func flakeOrigin(probes []string, h history) (string, string) {
	passes, fails := 1+h.passes, h.fails
	probeFails := 0
	for _, r := range probes {
		switch r {
		case runner.Pass:
			passes++
		case runner.Fail:
			fails++
			probeFails++
		}
	}
	if fails > 0 {
		why := fmt.Sprintf("flake on base: base failed %d of %d times (%d in %d probe runs, %d in %d earlier records)",
			fails, fails+passes, probeFails, len(probes), h.fails, h.records)
		return flakegate.FlakeOriginBase, why
	}
	return flakegate.FlakeOriginNew, fmt.Sprintf("new flake: base passed %d of %d times; this patch may have introduced it", passes, passes)
}

// historyRecord is what baseHistory reads of a stored record.
type historyRecord struct {
	PropertyPath     string         `json:"property_path"`
	Name             string         `json:"name"`
	Seed             flakegate.Seed `json:"seed"`
	FixtureSHA256    string         `json:"fixture_sha256"`
	BaseSeedResult   any            `json:"base_seed_result"`
	BaseProbeResults []string       `json:"base_probe_results"`
}

// baseHistory returns the base results earlier records of j's triple
// hold, in any store (the file store and PostgreSQL both list their
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
			key := flakegate.Triple{PropertyPath: r.PropertyPath, Name: r.Name, Seed: r.Seed, FixtureSHA256: r.FixtureSHA256}.Key()
			h := idx[key]
			h.records++
			switch r.BaseSeedResult {
			case runner.Pass:
				h.passes++
			case runner.Fail:
				h.fails++
			}
			for _, p := range r.BaseProbeResults {
				switch p {
				case runner.Pass:
					h.passes++
				case runner.Fail:
					h.fails++
				}
			}
			idx[key] = h
			return nil
		})
		if err != nil {
			return history{}, storeError("read the records' history", err)
		}
		c.hist = idx
	}
	key := flakegate.Triple{PropertyPath: j.ps.prop.Path, Name: j.ps.prop.Name, Seed: j.seed, FixtureSHA256: j.ps.candFixtureSHA256}.Key()
	return c.hist[key], nil
}
