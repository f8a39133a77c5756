package suites

import (
	"fmt"
	"strings"

	"github.com/flakegate/flakegate/config"
)

// Count is what the base lists of one suite of the config, for doctor:
// how many tests its framework lists in the base tree, in the check's
// sandbox, and so how many triples a check gates.
type Count struct {
	Index     int    // in the config's suites
	Framework string // the suite's
	Path      string // the suite's
	Tests     int    // listed and not excluded
	Excluded  int    // listed and excluded
	Skipped   int    // listed, not excluded, and skipped or expected to fail by the base (List.Gated)
	Seeds     int    // listed and drawn order seeds
	Err       error  // the listing failed
}

// CountOf counts suite i (s) of a config from the base's list l (nil:
// the listing failed with err).
func CountOf(i int, s *config.Suite, l *List, err error) Count {
	c := Count{Index: i, Framework: s.Framework, Path: s.Path, Seeds: len(s.Seeds) + s.RandomSeeds, Err: err}
	if l == nil {
		return c
	}
	for _, t := range l.Tests {
		switch {
		case s.Excluded(t.Name):
			c.Excluded++
		case !l.Gated(s, t):
			c.Skipped++
		default:
			c.Tests++
		}
	}
	return c
}

// Line is the count in words: "the base lists 2 tests (1 excluded): 4
// triples with 2 order seeds".
func (s Count) Line() string {
	skipped := ""
	if s.Skipped > 0 {
		skipped = fmt.Sprintf(", %d the base skips", s.Skipped)
	}
	return fmt.Sprintf("suites[%d] (%s %s): the base lists %s (%d excluded%s): %d triples with %s", s.Index, s.Framework, s.Path,
		count(s.Tests, "test", "tests"), s.Excluded, skipped, s.Tests*s.Seeds, count(s.Seeds, "order seed", "order seeds"))
}

// PlanSuite is what check --plan counts of one suite: the tests the
// base lists (less the excluded ones and those a property names) and the
// triples they make with the suite's order seeds.
type PlanSuite struct {
	Index     int    `json:"index"`
	Framework string `json:"framework"`
	Path      string `json:"path"`
	Tests     int    `json:"tests"`
	Triples   int    `json:"triples"`
}

// Plan counts each suite of cfg from the properties its listing added
// to cfg's after the first own ones.
func Plan(cfg *config.Config, own int) []PlanSuite {
	var plan []PlanSuite
	for i := range cfg.Suites {
		st := &cfg.Suites[i]
		ps := PlanSuite{Index: i, Framework: st.Framework, Path: st.Path}
		for k := own; k < len(cfg.Properties); k++ {
			if cfg.Properties[k].Suite == st {
				ps.Tests++
			}
		}
		ps.Triples = ps.Tests * (len(st.Seeds) + st.RandomSeeds)
		plan = append(plan, ps)
	}
	return plan
}

// PlanLines say what a plan's listing did, one line each (sandbox is the
// isolation line of the listing; notListed, when not "", why nothing
// was listed).
func PlanLines(suites []PlanSuite, sandbox, notListed string) []string {
	if notListed != "" {
		return []string{"suites: " + notListed + "; their triples are not counted below (flakegate doctor says what the sandbox needs)"}
	}
	if len(suites) == 0 {
		return nil
	}
	var parts []string
	for _, s := range suites {
		parts = append(parts, fmt.Sprintf("suites[%d] (%s %s) %s, %d triples", s.Index, s.Framework, s.Path, count(s.Tests, "test", "tests"), s.Triples))
	}
	return []string{"suites: listed on the base tree as a check lists them (go list and go test -list, pytest --collect-only, vitest list, a jest run that selects no test), in its sandbox: " + sandbox,
		"suites: " + strings.Join(parts, "; ")}
}

// count is n and the noun for it: "1 test", "2 tests".
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
