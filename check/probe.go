// The history of a triple's base seed: what earlier records of it on
// this base, with this argv template, say (the Driver's flake origin,
// batch/origin.go, reads it).

package check

import (
	"context"
	"encoding/json"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/batch"
)

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
func (c *checker) baseHistory(ctx context.Context, j *job) (batch.History, error) {
	c.histMu.Lock()
	defer c.histMu.Unlock()
	if c.hist == nil {
		idx := map[string]batch.History{}
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
			h.Records++
			switch r.BaseSeedResult {
			case attempt.Pass:
				h.Passes++
			case attempt.Fail:
				h.Fails++
			}
			for _, p := range r.BaseProbeResults {
				switch p {
				case attempt.Pass:
					h.Passes++
				case attempt.Fail:
					h.Fails++
				}
			}
			idx[key] = h
			return nil
		})
		if err != nil {
			return batch.History{}, flakegate.StoreError("read the records' history", err)
		}
		c.hist = idx
	}
	key := historyKey(flakegate.Triple{PropertyPath: j.ps.prop.Path, Name: j.ps.prop.Name, Seed: j.seed, FixtureSHA256: j.ps.candFixtureSHA256}, c.baseSHA, j.ps.runSHA256)
	return c.hist[key], nil
}
