package check

import (
	"slices"

	"github.com/flakegate/flakegate/batch"
)

// planBatches splits the positions into units: batches of two or more
// triples that share a shape key and a seed (in config order, each unit
// at the place of its first member), and triples that run alone. A test
// named twice in one batch (two entries for one test) goes to another
// batch: the report names it once.
func planBatches(jobs []job, positions []int) [][]int {
	var units [][]int
	open := map[string][]int{} // key and seed -> the units of that group
	for _, pos := range positions {
		j := &jobs[pos]
		s := shapeOf(j)
		if s == nil {
			units = append(units, []int{pos})
			continue
		}
		j.shape = s
		gk := s.Key + "\x00" + j.seed.String()
		placed := false
		for _, u := range open[gk] {
			if !slices.ContainsFunc(units[u], func(p int) bool { m := jobs[p].shape; return m.Test == s.Test && m.Pkg == s.Pkg }) {
				units[u] = append(units[u], pos)
				placed = true
				break
			}
		}
		if !placed {
			open[gk] = append(open[gk], len(units))
			units = append(units, []int{pos})
		}
	}
	return units
}

// batchTemplateKey is the key of the batches a property's triples join,
// before any seed is filled in ("" when they run alone): properties with
// equal keys share processes seed by seed. Seeds drawn from the secret,
// the base and this key (rather than the property's path and name) are
// the same for all of them, so drawn seeds do not split a batch into one
// process per property (check/seeds.go draws them).
func batchTemplateKey(ps *propState) string {
	s := shapeOf(&job{ps: ps, seed: "{seed}"})
	if s == nil {
		return ""
	}
	return s.Key
}

// shapeOf returns the batch shape of j's triple, nil when it runs alone
// (batch.ShapeOf).
func shapeOf(j *job) *batch.Shape {
	return batch.ShapeOf(j.ps.prop, j.ps.framework, j.ps.prepareSHA256, j.seed)
}
