package check

import (
	"context"
	"fmt"
	"strings"

	"github.com/flakegate/flakegate/config"
)

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

// PlanSuites lists the suites of b's config on the base tree as a check
// does (in the check's sandbox: go list and go test -list, pytest
// --collect-only, vitest list and jest run the project's code), and adds their tests to
// b.Config's properties, so that PlanCost counts their triples and
// batches. sandbox is the isolation line of the listing; notListed, when
// not "", says why nothing was listed (no sandbox here, a running check
// holds the worktrees): the suites' triples are then not counted. err is
// a listing that failed, as it fails a check.
func PlanSuites(ctx context.Context, b *Base, opts SiteOptions) (suites []PlanSuite, sandbox, notListed string, err error) {
	cfg := b.Config
	if len(cfg.Suites) == 0 {
		return nil, "", "", nil
	}
	if cfg.Sandbox.Mode == config.SandboxNone {
		return nil, "", "not listed: the config says sandbox: {mode: none}, and a listing runs the project's code, which check --plan runs only in the sandbox", nil
	}
	s := NewSite(b, opts)
	if err := s.Setup(ctx); err != nil {
		return nil, "", "not listed: " + err.Error(), nil
	}
	if sandbox, err = s.Probe(ctx); err != nil {
		return nil, "", "not listed: " + err.Error(), nil
	}
	own := len(cfg.Properties)
	if notListed, err = s.ExpandSuites(ctx); err != nil || notListed != "" {
		cfg.Properties = cfg.Properties[:own]
		return nil, sandbox, notListed, err
	}
	for i := range cfg.Suites {
		st := &cfg.Suites[i]
		ps := PlanSuite{Index: i, Framework: st.Framework, Path: st.Path}
		for k := own; k < len(cfg.Properties); k++ {
			if cfg.Properties[k].Suite == st {
				ps.Tests++
			}
		}
		ps.Triples = ps.Tests * (len(st.Seeds) + st.RandomSeeds)
		suites = append(suites, ps)
	}
	return suites, sandbox, "", nil
}

// PlanSuiteLines say what PlanSuites did, one line each, for the plan.
func PlanSuiteLines(suites []PlanSuite, sandbox, notListed string) []string {
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
