// What a config will cost before anything runs: its triples, the
// attempts and processes they take, and the time that comes to, from
// timings measured earlier (flakegate init). check --plan and init
// print it.

package check

import (
	"fmt"
	"math"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/config"
)

// PlanWarnAfter is the estimate above which a plan warns.
const PlanWarnAfter = 10 * time.Minute

// PlanTriple is one (property, seed) triple a check runs; Seed is "" for
// a drawn seed (drawn per candidate, not known in advance).
type PlanTriple struct {
	Property int // index into config.Properties
	Seed     string
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
func batchGroups(cfg *config.Config, triples []PlanTriple) [][]PlanTriple {
	jobs := make([]job, len(triples))
	positions := make([]int, len(triples))
	states := map[int]*propState{}
	for i, t := range triples {
		ps := states[t.Property]
		if ps == nil {
			p := &cfg.Properties[t.Property]
			ps = &propState{index: t.Property, prop: p, framework: evidenceFramework(p)}
			if p.Prepare != nil {
				ps.prepareSHA256 = prepareSHA256(p.Prepare, nil)
			}
			states[t.Property] = ps
		}
		jobs[i] = job{index: i, ps: ps, seed: flakegate.Seed(t.Seed)}
		positions[i] = i
	}
	var out [][]PlanTriple
	for _, u := range planBatches(jobs, positions) {
		g := make([]PlanTriple, len(u))
		for k, pos := range u {
			g[k] = triples[pos]
		}
		out = append(out, g)
	}
	return out
}

// Cost is what a config will cost on a candidate where nothing fails
// (Min: each triple's first attempt and its base replay) and where every
// triple fails (Max: the retries too, with a flake probe for each).
type Cost struct {
	Triples int `json:"triples"`
	// Attempts and Processes are the runs when every triple passes: the
	// candidate's first attempt and the base replay (the replay cache
	// takes the base's away on a second check of the same base).
	Attempts  int `json:"attempts"`
	Processes int `json:"processes"`
	// MaxAttempts and MaxProcesses are the runs when every candidate
	// attempt fails: retry_cap retries and flake_probe_runs probes more.
	MaxAttempts  int `json:"max_attempts"`
	MaxProcesses int `json:"max_processes"`
	// Seconds is the estimated wall time of Processes at the config's
	// workers; Measured says how many of the properties have a timing,
	// Unmeasured how many have neither a timing nor a timed property
	// running the same program: their wall_budget is counted instead (an
	// upper bound).
	Seconds  float64 `json:"seconds"`
	Measured int     `json:"measured_properties"`
	// Alike are the properties without a timing that take the mean of
	// the timed ones running the same program.
	Alike      int `json:"estimated_properties"`
	Unmeasured int `json:"unmeasured_properties"`
	// Source says where the timings came from.
	Source string `json:"source,omitempty"`
	// Warn is true when Seconds is over PlanWarnAfter.
	Warn bool `json:"warn"`
	// Suites are the config's suites as the base lists them (PlanSuites;
	// their triples are in the counts above), SuitesNotListed why they
	// could not be listed here (their triples are not counted).
	Suites          []PlanSuite `json:"suites,omitempty"`
	SuitesNotListed string      `json:"suites_not_listed,omitempty"`
}

// PlanCost computes the cost of cfg. measured holds seconds per process
// by property ID (config.Property.ID), source says where they come from.
func PlanCost(cfg *config.Config, measured map[string]float64, source string) Cost {
	var triples []PlanTriple
	for i := range cfg.Properties {
		p := &cfg.Properties[i]
		for _, s := range p.Seeds {
			triples = append(triples, PlanTriple{Property: i, Seed: s.String()})
		}
		for range p.RandomSeeds {
			triples = append(triples, PlanTriple{Property: i})
		}
	}
	c := Cost{Triples: len(triples), Source: source}
	// A property without a timing of its own takes the mean of the timed
	// ones that run the same program (the same runner's start-up and
	// build), else its wall_budget: an upper bound.
	sum, n := map[string]float64{}, map[string]int{}
	for i := range cfg.Properties {
		p := &cfg.Properties[i]
		if secs, ok := measured[p.ID()]; ok {
			sum[flakegate.ProgramName(p.Run)] += secs
			n[flakegate.ProgramName(p.Run)]++
		}
	}
	perProcess := make([]float64, len(cfg.Properties))
	for i := range cfg.Properties {
		p := &cfg.Properties[i]
		prog := flakegate.ProgramName(p.Run)
		secs, ok := measured[p.ID()]
		switch {
		case ok:
			c.Measured++
		case n[prog] > 0:
			secs = sum[prog] / float64(n[prog])
			c.Alike++
		default:
			secs = p.WallBudget.Seconds()
			c.Unmeasured++
		}
		perProcess[i] = secs
	}
	var busy float64
	for _, g := range ProcessGroups(cfg, triples) {
		if len(g) == 0 {
			continue
		}
		p := &cfg.Properties[g[0].Property]
		k := p.FlakeProbeRuns // the property's own key, else the global one (config.Load)
		c.Attempts += 2 * len(g)
		c.Processes += 2
		c.MaxAttempts += (2 + cfg.RetryCap + k) * len(g)
		c.MaxProcesses += 2 + cfg.RetryCap + k
		busy += 2 * perProcess[g[0].Property] // a measured run is mostly the process: a batch costs about one
	}
	workers := max(cfg.Workers, 1)
	c.Seconds = math.Round(busy / float64(workers))
	c.Warn = time.Duration(c.Seconds)*time.Second > PlanWarnAfter
	return c
}

// Lines says the cost in words, one line each: the counts, the
// estimate and where it comes from, and a warning with the knobs that
// bring it down when it is over PlanWarnAfter.
func (c Cost) Lines() []string {
	est := (time.Duration(c.Seconds) * time.Second).String()
	lines := []string{
		fmt.Sprintf("cost: %d triples; %d attempts in %d processes when every triple passes (candidate and base replay), at most %d attempts in %d processes when every one fails (retries and flake probes)",
			c.Triples, c.Attempts, c.Processes, c.MaxAttempts, c.MaxProcesses),
	}
	switch {
	case c.Triples == 0:
		return lines
	case c.Unmeasured == 0 && c.Alike == 0:
		lines = append(lines, fmt.Sprintf("estimate: about %s when every triple passes (from %s)", est, c.Source))
	case c.Unmeasured == 0:
		lines = append(lines, fmt.Sprintf("estimate: about %s when every triple passes: %s timed (from %s), %s estimated from the timed ones running the same program (flakegate init --measure times every one)",
			est, count(c.Measured, "property", "properties"), c.Source, count(c.Alike, "property", "properties")))
	case c.Measured == 0:
		lines = append(lines, fmt.Sprintf("estimate: at most %s when every triple passes: no property has a measured run, so each process counts its wall_budget (flakegate init --measure times one sandboxed attempt of each)", est))
	default:
		lines = append(lines, fmt.Sprintf("estimate: at most %s when every triple passes: %s timed (from %s), %s estimated from them, %s counted at their wall_budget",
			est, count(c.Measured, "property", "properties"), c.Source, count(c.Alike, "property", "properties"), count(c.Unmeasured, "property", "properties")))
	}
	if c.Warn {
		lines = append(lines, fmt.Sprintf("warning: the estimate is over %s; to bring it down: fewer seeds or random_seeds per property, "+
			"batches (batch: true, many triples per process), more workers, or fewer properties (exclude, or remove entries)", PlanWarnAfter))
	}
	return lines
}

func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
