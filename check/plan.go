// A config's cost in a check's terms (package plan estimates it): which
// triples share a process, as the check batches them.

package check

import (
	sitepkg "github.com/flakegate/flakegate/site"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/batch"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/plan"
)

// PlanCost computes the cost of cfg on base (plan.Estimate), its
// processes grouped as a check batches them (ProcessGroups).
func PlanCost(cfg *config.Config, t plan.Timings, base string) plan.Cost {
	return plan.Estimate(cfg, t, base, ProcessGroups)
}

// ProcessGroups says which triples share a process: each group is run by
// one process per attempt. It is batchGroups, the check's own batch plan.
var ProcessGroups = batchGroups

// batchGroups groups the triples as a check batches them (planBatches,
// batchplan.go): triples whose command shape, prepare and seed agree
// share a process, the others run alone. Drawn seeds ("") are not known
// yet; a property's drawn triples land in batches of their own, one per
// drawn seed, as they do in a check (drawn seeds are the same for every
// property of one batch key).
func batchGroups(cfg *config.Config, triples []plan.Triple) [][]plan.Triple {
	jobs := make([]job, len(triples))
	positions := make([]int, len(triples))
	states := map[int]*propState{}
	for i, t := range triples {
		ps := states[t.Property]
		if ps == nil {
			p := &cfg.Properties[t.Property]
			ps = &propState{index: t.Property, prop: p, framework: batch.EvidenceFramework(p)}
			if p.Prepare != nil {
				ps.prepareSHA256 = sitepkg.PrepareSHA256(p.Prepare, nil)
			}
			states[t.Property] = ps
		}
		jobs[i] = job{index: i, ps: ps, seed: flakegate.Seed(t.Seed)}
		positions[i] = i
	}
	var out [][]plan.Triple
	for _, u := range planBatches(jobs, positions) {
		g := make([]plan.Triple, len(u))
		for k, pos := range u {
			g[k] = triples[pos]
		}
		out = append(out, g)
	}
	return out
}
