// Package plan says what a config will cost before anything runs: its
// triples, the attempts and processes they take, and the time that comes
// to, from the timings earlier checks and flakegate init measured and
// kept. check --plan and init print it; the check keeps its timings.
//
// The files:
//
//	cost.go     Cost and Estimate: the counts and the estimate, in words
//	            (Lines)
//	timings.go  Timings: the seconds per process (ProcessKey) and the last
//	            check's own times, kept under the git common directory
package plan

import (
	"fmt"
	"math"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/suites"
)

// WarnAfter is the estimate above which a plan warns.
const WarnAfter = 10 * time.Minute

// Triple is one (property, seed) triple a check runs; Seed is "" for
// a drawn seed (drawn per candidate, not known in advance).
type Triple struct {
	Property int // index into config.Properties
	Seed     string
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
	// Seconds is the estimated wall time of a check where every triple
	// passes: Processes at the config's workers, plus the setup and the
	// Go cache fill a check measured (timings.go). Measured says how many
	// of the properties (a suite's tests included) have a timing,
	// Unmeasured how many have neither a timing nor a timed property
	// running the same program: their wall_budget is counted instead, and
	// Seconds is then an upper bound (UpperBound).
	Seconds  float64 `json:"seconds"`
	Measured int     `json:"measured_properties"`
	// Alike are the properties without a timing that take the mean of
	// the timed ones running the same program.
	Alike      int  `json:"estimated_properties"`
	Unmeasured int  `json:"unmeasured_properties"`
	UpperBound bool `json:"upper_bound"`
	// AttemptSeconds, SetupSeconds and FillSeconds are Seconds' parts:
	// the processes at the workers, what the last check took before its
	// first triple, and a fill of the Go build cache (a base the last
	// check did not fill from). ReplaysCached says the last check ran on
	// this base and stored its base results in the replay cache, so
	// Seconds counts no base replay; CachedSeconds and UncachedSeconds
	// are the estimate with and without the base's replays cached.
	AttemptSeconds  float64 `json:"attempt_seconds"`
	SetupSeconds    float64 `json:"setup_seconds,omitempty"`
	FillSeconds     float64 `json:"fill_seconds,omitempty"`
	ReplaysCached   bool    `json:"replays_cached"`
	CachedSeconds   float64 `json:"cached_seconds"`
	UncachedSeconds float64 `json:"uncached_seconds"`
	Workers         int     `json:"workers"`
	// Measurement says a check measured the setup (Check in Timings).
	Measurement bool `json:"-"`
	// Source says where the timings came from.
	Source string `json:"source,omitempty"`
	// Warn is true when a measured Seconds is over WarnAfter.
	Warn bool `json:"warn"`
	// Suites are the config's suites as the base lists them (PlanSuites;
	// their triples are in the counts above), SuitesNotListed why they
	// could not be listed here (their triples are not counted).
	Suites          []suites.PlanSuite `json:"suites,omitempty"`
	SuitesNotListed string             `json:"suites_not_listed,omitempty"`
	// Impact is the config's impact: the counts are every suite test's,
	// and a check runs the ones its patch can reach (ImpactLine).
	Impact bool `json:"impact,omitempty"`
}

// ImpactLine says what impact: true does to the plan's counts.
const ImpactLine = "impact: on: the counts above are every suite test's, as without it; a check runs only the tests its patch can reach " +
	"(go: by package; pytest, vitest, jest: by test file), each with up to 12 order seeds and never more than the whole suite once per seed costs, " +
	"and says \"unaffected: N tests (inputs identical to the base's)\" for the rest"

// Estimate computes the cost of cfg on base (a commit; "" when there is
// none yet: init's, whose first check fills the Go cache), from the timings kept by earlier checks and flakegate init
// (ReadTimings): seconds per process by ProcessKey.
func Estimate(cfg *config.Config, t Timings, base string, groups func(*config.Config, []Triple) [][]Triple) Cost {
	var triples []Triple
	for i := range cfg.Properties {
		p := &cfg.Properties[i]
		for _, s := range p.Seeds {
			triples = append(triples, Triple{Property: i, Seed: s.String()})
		}
		for range p.RandomSeeds {
			triples = append(triples, Triple{Property: i})
		}
	}
	c := Cost{Triples: len(triples), Source: t.Source, Workers: max(cfg.Workers, 1)}
	cand, baseSide := c.perProcess(cfg, t)
	var busy, busyCand, longest float64
	for _, g := range groups(cfg, triples) {
		if len(g) == 0 {
			continue
		}
		p := &cfg.Properties[g[0].Property]
		k := p.FlakeProbeRuns // the property's own key, else the global one (config.Load)
		c.Attempts += 2 * len(g)
		c.Processes += 2
		c.MaxAttempts += (2 + cfg.RetryCap + k) * len(g)
		c.MaxProcesses += 2 + cfg.RetryCap + k
		// A measured run is mostly the process: a batch costs about one
		// process of its first member's key.
		one, two := cand[g[0].Property], baseSide[g[0].Property]
		busy += one + two
		busyCand += one
		longest = max(longest, one+two) // a group's processes run one after the other, on one worker
	}
	// The workers share the processes; the longest group bounds the end.
	// With the base's replays cached only the candidate's processes run.
	uncached := math.Round(max(busy/float64(c.Workers), longest))
	cached := math.Round(max(busyCand/float64(c.Workers), longest*busyCand/max(busy, 1e-9)))
	if ct := t.Check; ct != nil && c.Triples > 0 {
		c.Measurement = true
		c.SetupSeconds = math.Round(ct.Setup)
		if ct.Fill > 0 && (base == "" || ct.FillBase != base && ct.Base != base) {
			c.FillSeconds = math.Round(ct.Fill) // a new base ("": none yet) is filled once
		}
		c.ReplaysCached = base != "" && ct.Base == base && ct.Replays
	}
	c.UpperBound = c.Unmeasured > 0 || c.Measured+c.Alike == 0
	c.AttemptSeconds = uncached
	if c.ReplaysCached {
		c.AttemptSeconds = cached
	}
	c.Seconds = c.AttemptSeconds + c.SetupSeconds + c.FillSeconds
	c.CachedSeconds = cached + c.SetupSeconds + c.FillSeconds
	c.UncachedSeconds = uncached + c.SetupSeconds + c.FillSeconds
	c.Warn = !c.UpperBound && time.Duration(c.Seconds)*time.Second > WarnAfter
	return c
}

// perProcess is the seconds of one process of each property, a
// candidate's and a base replay's: its own timing (each side's, else the
// one of either side), else the mean of the timed ones that run the same
// program (the same runner's start-up and build), else its wall_budget
// (an upper bound). It counts each kind in c.
func (c *Cost) perProcess(cfg *config.Config, t Timings) (cand, base []float64) {
	timed := func(p *config.Property) (float64, float64, bool) {
		k := ProcessKey(p)
		s, ok := t.Seconds[k]
		cs, cok := t.Candidate[k]
		bs, bok := t.Base[k]
		if !cok {
			cs = s
		}
		if !bok {
			bs = s
		}
		return cs, bs, ok || cok || bok
	}
	type acc struct{ cand, base float64 }
	sum, n := map[string]acc{}, map[string]int{}
	for i := range cfg.Properties {
		p := &cfg.Properties[i]
		if cs, bs, ok := timed(p); ok {
			a := sum[flakegate.ProgramName(p.Run)]
			sum[flakegate.ProgramName(p.Run)] = acc{a.cand + cs, a.base + bs}
			n[flakegate.ProgramName(p.Run)]++
		}
	}
	cand, base = make([]float64, len(cfg.Properties)), make([]float64, len(cfg.Properties))
	for i := range cfg.Properties {
		p := &cfg.Properties[i]
		prog := flakegate.ProgramName(p.Run)
		cs, bs, ok := timed(p)
		switch {
		case ok:
			c.Measured++
		case n[prog] > 0:
			cs, bs = sum[prog].cand/float64(n[prog]), sum[prog].base/float64(n[prog])
			c.Alike++
		default:
			cs, bs = p.WallBudget.Seconds(), p.WallBudget.Seconds()
			c.Unmeasured++
		}
		cand[i], base[i] = cs, bs
	}
	return cand, base
}

// Lines says the cost in words, one line each: the counts, the
// estimate and where it comes from, and a warning with the knobs that
// bring it down when a measured estimate is over WarnAfter.
func (c Cost) Lines() []string {
	lines := []string{
		fmt.Sprintf("cost: %d triples; %d attempts in %d processes when every triple passes (candidate and base replay), at most %d attempts in %d processes when every one fails (retries and flake probes)",
			c.Triples, c.Attempts, c.Processes, c.MaxAttempts, c.MaxProcesses),
	}
	if c.Triples == 0 {
		return lines
	}
	lines = append(lines, c.estimateLine())
	if c.Impact && len(c.Suites) > 0 {
		lines = append(lines, ImpactLine)
	}
	if c.Warn {
		lines = append(lines, fmt.Sprintf("warning: the estimate is over %s; to bring it down: fewer seeds or random_seeds per property, "+
			"batches (batch: true, many triples per process), more workers, or fewer properties (exclude, or remove entries)", WarnAfter))
	}
	return lines
}

// estimateLine is the estimate, its parts, and what it rests on.
func (c Cost) estimateLine() string {
	props := func(n int) string { return count(n, "property", "properties") }
	if c.Measured == 0 && c.Alike == 0 {
		return fmt.Sprintf("estimate: at most %s when every triple passes: an upper bound from the wall budgets, not a forecast: nothing has been measured yet, "+
			"so each process counts its whole wall_budget (the first check measures every process; flakegate init times one run)", secondsText(c.Seconds))
	}
	var from string
	switch {
	case c.Unmeasured == 0 && c.Alike == 0:
		from = "from " + c.Source
	case c.Unmeasured == 0:
		from = fmt.Sprintf("%s timed (from %s), %s estimated from the timed ones running the same program", props(c.Measured), c.Source, props(c.Alike))
	default:
		from = fmt.Sprintf("%s timed (from %s), ", props(c.Measured), c.Source)
		if c.Alike > 0 {
			from += fmt.Sprintf("%s estimated from them, ", props(c.Alike))
		}
		from += fmt.Sprintf("%s counted at %s whole wall_budget", props(c.Unmeasured), plural(c.Unmeasured, "its", "their"))
	}
	parts := fmt.Sprintf("%s of attempts at %s", secondsText(c.AttemptSeconds), count(c.Workers, "worker", "workers"))
	if c.SetupSeconds > 0 {
		parts += fmt.Sprintf(", %s of setup (worktrees, listing, digests, as the last check took)", secondsText(c.SetupSeconds))
	}
	if c.FillSeconds > 0 {
		parts += fmt.Sprintf(", %s to fill the Go build cache from this base (as the last fill took)", secondsText(c.FillSeconds))
	}
	word := "about"
	if c.UpperBound {
		word = "at most"
	}
	line := fmt.Sprintf("estimate: %s %s when every triple passes (%s; %s)", word, secondsText(c.Seconds), parts, from)
	switch {
	case c.UpperBound:
	case c.ReplaysCached:
		line += fmt.Sprintf("; the base's replays come from the replay cache (the last check, of this base, stored them): about %s if they do not", secondsText(c.UncachedSeconds))
	default:
		line += fmt.Sprintf("; about %s once the replay cache holds the base's results (a later check of this base)", secondsText(c.CachedSeconds))
	}
	if !c.Measurement {
		line += "; the first check also sets up its worktrees and caches, which no check has measured yet"
	}
	return line
}

// secondsText is a whole number of seconds as a duration: "1m30s".
func secondsText(s float64) string {
	return (time.Duration(s) * time.Second).String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
