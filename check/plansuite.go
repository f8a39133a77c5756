package check

import (
	"context"

	"github.com/flakegate/flakegate/config"
	sitepkg "github.com/flakegate/flakegate/site"
	"github.com/flakegate/flakegate/suites"
)

// PlanSuites lists the suites of b's config on the base tree as a check
// does (in the check's sandbox: go list and go test -list, pytest
// --collect-only, vitest list and jest run the project's code), and adds their tests to
// b.Config's properties, so that PlanCost counts their triples and
// batches. sandbox is the isolation line of the listing; notListed, when
// not "", says why nothing was listed (no sandbox here, a running check
// holds the worktrees): the suites' triples are then not counted. err is
// a listing that failed, as it fails a check.
func PlanSuites(ctx context.Context, b *sitepkg.Base, opts SiteOptions) (plan []suites.PlanSuite, sandbox, notListed string, err error) {
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
	return suites.Plan(cfg, own), sandbox, "", nil
}
