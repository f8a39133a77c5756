// The freeze ledger as a check sees it: when a triple may consult it,
// what a freeze must match, the result of a skipped triple, and the
// freezes a check grants (--freeze-owner).

package check

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	sitepkg "github.com/flakegate/flakegate/site"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/fleet"
)

// binding is what a freeze of j's triple must match.
func (c *checker) binding(j *job) flakegate.Binding {
	return flakegate.Binding{PropertySHA256: j.ps.candPropertySHA256, RunSHA256: j.ps.runSHA256, PropertyEntrySHA256: j.ps.entrySHA256,
		SeedOrigin: j.seedOrigin()}
}

// ledgerKey is the runner's ledger key: the value of the variable the
// base config's ledger.key_env names (default FLAKEGATE_LEDGER_KEY), ""
// when it is unset.
func (c *checker) ledgerKey() string {
	name := cmp.Or(c.cfg.Ledger.KeyEnv, config.DefaultLedgerKeyEnv)
	v := ""
	for _, kv := range c.opts.Env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == name {
			v = val
		}
	}
	return v
}

// useLedgerKey gives a store that authenticates its rows (PostgreSQL) the
// runner's key. A store without one cannot vouch for a freeze: every
// skip is refused (flakegate.Vouching), and drawn seeds are refused too,
// since their secret would be one that any database client can read.
func (c *checker) useLedgerKey(key string) error {
	k, ok := c.store.(interface{ UseKey([]byte) error })
	if !ok {
		return nil
	}
	if key != "" {
		return k.UseKey([]byte(key))
	}
	name := cmp.Or(c.cfg.Ledger.KeyEnv, config.DefaultLedgerKeyEnv)
	for _, p := range c.cfg.Properties {
		if p.RandomSeeds > 0 {
			return &flakegate.Error{Code: flakegate.EINVALID, Op: "check", Path: c.cfgPath,
				Message: fmt.Sprintf("%s draws seeds (random_seeds), but the PostgreSQL ledger has no key: $%s is not set, and the seed secret would be one any client of the database can read", p.ID(), name),
				Hint:    fmt.Sprintf("set %s from the runner's secret store (openssl rand -hex 32); see docs/postgres.md", name)}
		}
	}
	c.progress.Note(NoteTopic, fmt.Sprintf("the PostgreSQL ledger has no key ($%s is not set): no freeze in it lets a triple skip, and this check grants none; see docs/postgres.md", name))
	return nil
}

// mayConsultLedger is false when a freeze must not hide what the patch
// did: a watched path is in the diff or the fixture changed (the table
// rejects such a triple), or the patch edits the test's file or its
// world, which the graded tree took back (grade/gradertests.go): the base's version
// runs, and a failure of it is CONTAMINATED, never skipped.
func (c *checker) mayConsultLedger(ps *propState) bool {
	return len(ps.contaminated) == 0 && ps.candFixtureSHA256 == ps.baseFixtureSHA256 && len(ps.graderEdits) == 0
}

// skipped is the result of a triple the ledger lets the check skip. The
// frozen record is copied into the output folder.
func (c *checker) skipped(ctx context.Context, j *job, t flakegate.Triple, d flakegate.SkipDecision, stem, reproduce string) (fleet.Outcome, error) {
	recPath := ""
	raw, err := c.store.GetRecord(ctx, d.Freeze.RecordSHA256)
	var frozen struct {
		CandidateSHA string `json:"candidate_sha"`
	}
	switch {
	case err == nil:
		json.Unmarshal(raw, &frozen) //nolint:errcheck // a record without them names no candidate
		recPath = filepath.Join(c.outDir, stem+".frozen.json")
		if err := writeFile(recPath, raw); err != nil {
			return fleet.Outcome{}, err
		}
	case flakegate.ErrorCode(err) != flakegate.ENOTFOUND:
		return fleet.Outcome{}, flakegate.StoreError("read the frozen record", err)
	}
	left := d.RunsLeft
	res := flakegate.Result{
		PropertyPath:  t.PropertyPath,
		Name:          t.Name,
		Seed:          t.Seed,
		FixtureSHA256: t.FixtureSHA256,
		Label:         d.Freeze.Label,
		Reason:        d.Reason,
		Skipped:       true,
		RunsLeft:      &left,
		Owner:         d.Freeze.Owner,
		Suite:         suitePath(j),
		RecordSHA256:  d.Freeze.RecordSHA256,
		Record:        recPath,
		Reproduce:     reproduce,
		// The freeze is bound to its record by hash: the candidate of that
		// record earned it.
		FrozenCandidate: cmp.Or(d.Freeze.CandidateSHA, frozen.CandidateSHA),
		BaseSHA:         c.baseSHA,
		CandidateSHA:    c.candSHA,
		At:              d.Freeze.GrantedAt.UTC().Format(time.RFC3339),
	}
	res.SeedOrigin = j.seedOrigin()
	return fleet.Outcome{Result: res}, nil
}

// grantFreezes writes a freeze for each SCHEDULER record of this check,
// in config order. A triple that already has a freeze keeps it.
func (c *checker) grantFreezes(ctx context.Context, jobs []job, results []fleet.Outcome) error {
	runs := c.cfg.Freeze.ExpiresAfterRuns
	for i := range results {
		r := &results[i]
		if r.Result.Skipped || r.Result.Label != flakegate.Scheduler || r.Raw == nil {
			continue
		}
		if c.iso.Mode != sitepkg.IsolationBwrap {
			// The code under test could reach the gate: its SCHEDULER may
			// be forged (attack 1, 2, 3), so it earns no freeze.
			why := "no freeze granted: the check ran without the sandbox (isolation none); a freeze needs a sandboxed run"
			r.Result.Reason = joinReason(r.Result.Reason, why)
			c.progress.Note(NoteTopic, fmt.Sprintf("%s seed %s: %s", jobs[i].ps.prop.ID(), jobs[i].seed, why))
			continue
		}
		if v, ok := c.store.(flakegate.Vouching); ok && v.Unvouched() != "" {
			why := "no freeze granted: " + v.Unvouched()
			r.Result.Reason = joinReason(r.Result.Reason, why)
			continue
		}
		if r.Result.FlakeOrigin != flakegate.FlakeOriginBase {
			// A flake this base was never seen failing may be the patch's
			// own: a freeze would let it hide a later regression of the
			// same triple. Only a person grants it.
			origin := cmp.Or(r.Result.FlakeOrigin, flakegate.FlakeOriginUnknown)
			why := fmt.Sprintf("no freeze granted: flake origin %s (this base was never seen failing this seed); look at it, and grant one by hand with 'flakegate freeze grant --allow-new-flake' if it is not the patch's", origin)
			r.Result.Reason = joinReason(r.Result.Reason, why)
			c.progress.Note(NoteTopic, fmt.Sprintf("%s seed %s: %s", jobs[i].ps.prop.ID(), jobs[i].seed, why))
			continue
		}
		f, err := flakegate.GrantRecord(ctx, c.store, r.Raw, c.opts.FreezeOwner, runs, false, c.opts.By, c.now())
		if flakegate.ErrorCode(err) == flakegate.ECONFLICT {
			c.progress.Note(NoteTopic, fmt.Sprintf("%s seed %s: already frozen; the existing freeze stays", jobs[i].ps.prop.ID(), jobs[i].seed))
			continue
		}
		if err != nil {
			return err
		}
		left := f.ExpiresAfterRuns
		r.Result.Owner, r.Result.RunsLeft = f.Owner, &left
	}
	return nil
}
