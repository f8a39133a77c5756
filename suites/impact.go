// The plan of impact's runs (issue 44): which tests of a suite the
// patch can reach is decided by the impact package's rules (decide*.go
// runs them over a check's trees); what the verdicts make of a
// suite's list is planned here: the units not run again, and the order
// seeds each affected test gets beyond the suite's, up to what the whole
// suite once per seed would cost (impact.Budget).

package suites

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/impact"
	"github.com/flakegate/flakegate/internal/atomicfile"
)

// DefaultUnitStart is what a package's run is taken to cost when the
// base's run did not time it.
const DefaultUnitStart = time.Second

// Impact is what impact decided for one suite.
type Impact struct {
	Unaffected map[string]bool // units (UnitOf) whose tests are not run again
	Extra      int             // drawn seeds each affected test gets beyond the suite's
	UnitOf     func(t Test) string
	Summary    flakegate.SuiteImpact
}

// GatedFiles are the files of suite s's gated tests, each once in list
// order, how many tests are gated, and the first of them (nil for none).
func GatedFiles(s *config.Suite, list *List) (files []string, gated int, first *Test) {
	seen := map[string]bool{}
	for i, t := range list.Tests {
		if !list.Gated(s, t) {
			continue
		}
		gated++
		if first == nil {
			first = &list.Tests[i]
		}
		if !seen[t.File] {
			seen[t.File] = true
			files = append(files, t.File)
		}
	}
	return files, gated, first
}

// FilePlan plans a suite decided by test file and run as one process per
// seed (pytest, vitest, jest) that took total for its gated tests (0: not
// timed): the process's start is taken as at most DefaultUnitStart of it,
// and each test as an even share of the rest.
func FilePlan(s *config.Suite, list *List, verdicts []impact.Verdict, total time.Duration, gated int) (*Impact, string, error) {
	start, each := DefaultUnitStart, time.Duration(0)
	if total > 0 && gated > 0 {
		start = min(DefaultUnitStart, total/2)
		each = (total - start) / time.Duration(gated)
	}
	file := func(t Test) string { return t.File }
	return planRuns(s, list, verdicts, impactPlan{unit: "test file", unitOf: file,
		costUnit: func(Test) string { return s.Framework },
		start:    func(string) time.Duration { return start },
		duration: func(Test) time.Duration { return each }})
}

// impactPlan is what the budget needs of a suite besides the verdicts:
// which verdict's unit decides a test (a go package, a test file), which
// process runs it (costUnit: a go package, the one pytest process), and
// what those cost on the base.
type impactPlan struct {
	unit     string // the units' name in words: "package", "test file"
	unitOf   func(t Test) string
	costUnit func(t Test) string
	start    func(costUnit string) time.Duration // a process's start (and, for go, its tests' whole time)
	duration func(t Test) time.Duration          // a test's own time
}

// goPlan is a go suite's: a package is both the verdict's unit and the
// process, whose time in the base's run is its cost.
func goPlan(seconds map[string]float64) impactPlan {
	pkg := func(t Test) string { return t.Pkg }
	return impactPlan{unit: "package", unitOf: pkg, costUnit: pkg,
		start: func(u string) time.Duration {
			if sec, ok := seconds[u]; ok {
				return time.Duration(sec * float64(time.Second))
			}
			return DefaultUnitStart
		},
		duration: func(Test) time.Duration { return 0 }}
}

// GoBudget plans the runs of go suite s's gated tests from the verdicts
// per package and the base's seconds per package.
func GoBudget(s *config.Suite, list *List, verdicts []impact.Verdict, seconds map[string]float64) (*Impact, string, error) {
	return planRuns(s, list, verdicts, goPlan(seconds))
}

// planRuns plans the runs of suite s's gated tests from the verdicts (a
// test whose unit has none is affected) and the costs of pl.
func planRuns(s *config.Suite, list *List, verdicts []impact.Verdict, pl impactPlan) (*Impact, string, error) {
	byUnit := map[string]impact.Verdict{}
	for _, v := range verdicts {
		byUnit[v.Unit] = v
	}
	units := map[string]*impact.Unit{}
	var order, verdictUnits []string
	seen := map[string]bool{}
	for _, t := range list.Tests {
		if !list.Gated(s, t) {
			continue
		}
		cu := pl.costUnit(t)
		u := units[cu]
		if u == nil {
			u = &impact.Unit{ID: cu, Start: pl.start(cu)}
			units[cu] = u
			order = append(order, cu)
		}
		vu := pl.unitOf(t)
		if !seen[vu] {
			seen[vu] = true
			verdictUnits = append(verdictUnits, vu)
		}
		v, ok := byUnit[vu]
		u.Tests = append(u.Tests, impact.TestCost{ID: t.File + "::" + t.Name, Duration: pl.duration(t), Affected: !ok || v.Affected})
	}
	cost := impact.Cost{Seeds: len(s.Seeds) + s.RandomSeeds, NewTestRuns: 1}
	for _, id := range order {
		cost.Units = append(cost.Units, *units[id])
	}
	plan, err := impact.Budget(cost, impact.DefaultTarget)
	if err != nil {
		return nil, err.Error(), nil
	}
	si := &Impact{Unaffected: map[string]bool{}, Extra: plan.Extra, UnitOf: pl.unitOf}
	sum := flakegate.SuiteImpact{Affected: plan.Affected, Unaffected: plan.Unaffected, Unit: pl.unit, Runs: plan.Runs, Seeds: cost.Seeds,
		Chance: plan.Chance(impact.DefaultTarget.Rate)}
	for _, id := range verdictUnits {
		v, ok := byUnit[id]
		if ok && !v.Affected {
			si.Unaffected[id] = true
			sum.UnaffectedUnits++
			continue
		}
		sum.AffectedUnits++
		why := "the rules have no verdict of it"
		if ok {
			why = v.Why
		}
		sum.Reached = append(sum.Reached, flakegate.Reach{Unit: id, Why: why})
	}
	sort.Slice(sum.Reached, func(a, b int) bool { return sum.Reached[a].Unit < sum.Reached[b].Unit })
	si.Summary = sum
	return si, "", nil
}

// KeptSession is a base's session log as kept between checks.
type KeptSession struct {
	Session *impact.PytestSession `json:"session"`
	Seconds float64               `json:"seconds"`
}

// SessionPath is the file under common (the repository's git common
// dir) that keeps the base's pytest session log of the listing named key.
func SessionPath(common, key string) string {
	return filepath.Join(common, "flakegate", "impact", flakegate.SHA256Hex([]byte("pytest session v1\x00" + key))[:32]+".json")
}

// ReadSession reads a kept session log; false when there is none or it
// is not whole (the session runs again).
func ReadSession(file string) (*KeptSession, bool) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, false
	}
	var k KeptSession
	if json.Unmarshal(b, &k) != nil || k.Session == nil || k.Session.Read == nil || k.Session.Listed == nil || k.Session.Modules == nil {
		return nil, false
	}
	return &k, true
}

// WriteSession keeps k in file. Best effort: the next check runs the
// session again.
func WriteSession(file string, k *KeptSession) { keepImpact(file, k) }

// keepImpact keeps v as JSON in file, a kept base log or listing of
// impact, and removes those of its folder unused for ListMaxAge (one is
// kept per base: a runner that checks many bases would otherwise keep
// them all).
func keepImpact(file string, v any) {
	if b, err := json.Marshal(v); err == nil {
		os.MkdirAll(filepath.Dir(file), 0o755)
		atomicfile.WriteFile(file, b, 0o600)
		removeUnused(filepath.Dir(file))
	}
}

// GoListingPath is the file under common (the repository's git common
// dir) that keeps the base's go listing of the listing named key, in the
// base tree at dir over the prepared layer layer ("" without one).
func GoListingPath(common, key, dir, layer string) string {
	return filepath.Join(common, "flakegate", "impact", flakegate.SHA256Hex([]byte(impact.GoListingVersion + "\x00" + key + "\x00" + dir + "\x00" + layer))[:32]+".json")
}

// ReadGoListing reads a kept go listing; false when there is none or it
// cannot be read as one (the base is listed again).
func ReadGoListing(file string) (*impact.GoTree, bool) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, false
	}
	var l impact.GoListing
	if json.Unmarshal(b, &l) != nil {
		return nil, false
	}
	t, err := l.Tree()
	if err != nil {
		return nil, false
	}
	Touch(file) // last used
	return t, true
}

// WriteGoListing keeps l in file. Best effort: the next check lists the
// base again.
func WriteGoListing(file string, l *impact.GoListing) { keepImpact(file, l) }
