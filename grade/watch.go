// What a property is graded against besides its file and generator: the
// globs of its framework, its watch and the global watch (WatchGlobs),
// the test infrastructure grade/infra finds in the base revision
// (PropGlobs), and the digests that bind a freeze to the property's
// command and config entry (RunSHA256, EntrySHA256). ExplainWatch lists
// them for check --explain-watch.

package grade

import (
	"context"
	"encoding/json"
	"path"
	"strings"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/grade/infra"
)

// FixtureAbsent is the fixture_sha256 recorded when the candidate has no
// file or folder at the fixture path of a property that has a fixture: it
// never equals a digest, so the decision table says FIXTURE. A property
// without a fixture records config.NoFixtureSHA256 on both sides instead.
const FixtureAbsent = "absent"

// jestKeyWhy is why grade/infra watches package.json for a jest test
// (its "jest" key is the config).
const jestKeyWhy = "the jest config (package.json's \"jest\")"

// lockWhy is why a vitest or jest test watches the lock files a
// prepare installs node_modules from (TestToolingChanged).
const lockWhy = "the test tooling's locked packages"

// goHelperWhy starts the reason grade/infra watches a Go package
// that only tests import.
const goHelperWhy = "a Go package of the module only tests import"

// RunSHA256 is the digest of p's argv template (the record's extra key
// "run_sha256"): a freeze is bound to it.
func RunSHA256(p *config.Property) string {
	b, _ := json.Marshal(p.Run)
	return flakegate.SHA256Hex(b)
}

// EntrySHA256 is the digest of p's config entry as the check reads it
// (the record's extra key "property_entry_sha256"): path, name, fixture,
// generator, run, wall budget, samples, watch globs, pass and fail markers, the
// framework: key when the entry has one, batch: false, plus the
// retry cap and the global watch globs. The seed lists are not part of it:
// adding a seed does not void the freezes of the others.
func EntrySHA256(cfg *config.Config, p *config.Property) string {
	marker := ""
	if p.PassMarker != nil {
		marker = p.PassMarker.String()
	}
	failMarker := ""
	if p.FailMarker != nil {
		failMarker = p.FailMarker.String()
	}
	framework := ""
	if p.FrameworkSet {
		framework = p.Framework
	}
	b, _ := json.Marshal(struct {
		Path        string   `json:"path"`
		Name        string   `json:"name"`
		Fixture     string   `json:"fixture"`
		Generator   string   `json:"generator"`
		Run         []string `json:"run"`
		WallBudgetS float64  `json:"wall_budget_s"`
		Samples     int      `json:"samples"`
		Watch       []string `json:"watch"`
		PassMarker  string   `json:"pass_marker"`
		RetryCap    int      `json:"retry_cap"`
		GlobalWatch []string `json:"global_watch"`
		FailMarker  string   `json:"fail_marker,omitempty"` // omitted when unset: older entries keep their digest
		Framework   string   `json:"framework,omitempty"`   // the entry's own framework: key, omitted when absent
		// NoBatch is batch: false on a framework that batches: the triple
		// is judged alone, not among the tests of a batch (omitted when
		// unset, as FailMarker).
		NoBatch bool `json:"no_batch,omitempty"`
	}{p.Path, p.Name, p.Fixture, p.Generator, p.Run, p.WallBudget.Seconds(), p.Samples, p.Watch, marker, cfg.RetryCap, cfg.Watch, failMarker, framework, !p.Batch && p.Framework != config.FrameworkNone})
	return flakegate.SHA256Hex(b)
}

// PropGlobs is what p of cfg is graded against besides its file and
// generator: WatchGlobs, and what finder finds.
func PropGlobs(ctx context.Context, cfg *config.Config, finder *infra.Finder, p *config.Property) ([]infra.Watch, error) {
	found, err := finder.Find(ctx, p)
	if err != nil {
		return nil, err
	}
	return append(WatchGlobs(cfg, p), found...), nil
}

// WatchGlobs lists the globs of p besides its file and generator: the
// framework's defaults (from its framework and its file), the property's watch and the
// global watch. PropGlobs adds what it finds in the base
// revision: pytest helper modules, vitest and jest files.
//
//   - pytest: conftest.py, pytest.ini, pyproject.toml, setup.cfg and
//     tox.ini in the property's folder and every folder above it up to
//     the root (pytest reads each of them to decide how a test runs),
//     except pyproject.toml when the property has a prepare: with go.mod,
//     go.sum, setup.py and package-lock.json it decides what the prepare
//     builds, which a patch may change (its prepared layer then differs);
//   - go test: every *_test.go file of the property's package folder (a
//     TestMain or init there decides whether the test runs) and the
//     package's testdata/rapid fail files.
func WatchGlobs(cfg *config.Config, p *config.Property) []infra.Watch {
	var out []infra.Watch
	dir := path.Dir(p.Path)
	if p.Framework == config.FrameworkPytest || config.FrameworkOfFile(p.Path, nil) == config.FrameworkPytest {
		for d := dir; ; d = path.Dir(d) {
			for _, f := range []string{"conftest.py", "pytest.ini", "pyproject.toml", "setup.cfg", "tox.ini"} {
				if f == "pyproject.toml" && p.Prepare != nil {
					continue // it decides the prepare: a patch may change it (see check/prepare.go)
				}
				out = append(out, infra.Watch{Glob: path.Join(d, f), Why: "pytest configuration"})
			}
			if d == "." {
				break
			}
		}
	}
	if (p.Framework == config.FrameworkGo || strings.HasSuffix(p.Path, "_test.go")) && p.Suite == nil {
		out = append(out, infra.Watch{Glob: path.Join(dir, "*_test.go"), Why: "a test file of the property's Go package"})
	}
	// A suite's test runs on the base's test files (check/suite.go): the
	// package's other test files cannot change it, and are not watched.
	if p.Framework == config.FrameworkGo || strings.HasSuffix(p.Path, "_test.go") {
		out = append(out, infra.Watch{Glob: path.Join(dir, "testdata/rapid/**"), Why: "rapid fail files of the property's package"})
	}
	if isJS(p.Framework) {
		for d := dir; ; d = path.Dir(d) {
			for _, f := range LockFiles {
				out = append(out, infra.Watch{Glob: path.Join(d, f), Why: lockWhy})
			}
			if d == "." {
				break
			}
		}
	}
	for _, g := range p.Watch {
		out = append(out, infra.Watch{Glob: g, Why: "the property's watch"})
	}
	for _, g := range cfg.Watch {
		out = append(out, infra.Watch{Glob: g, Why: "the global watch"})
	}
	return out
}

// InDiff returns the watched paths found in the diff: an entry ending in
// "/" matches every path under it.
func InDiff(diff, watched []string) []string {
	var hits []string
	for _, w := range watched {
		for _, d := range diff {
			d = path.Clean(d)
			if d == path.Clean(w) || strings.HasSuffix(w, "/") && strings.HasPrefix(d, w) {
				hits = append(hits, w)
				break
			}
		}
	}
	return hits
}

// WatchList is what one property is graded against: a candidate diff
// path matching any entry makes its triples CONTAMINATED.
type WatchList struct {
	Property  string      `json:"property"` // path or path::name
	Framework string      `json:"framework,omitempty"`
	Prepare   []string    `json:"prepare,omitempty"` // the prepare's command, run once per tree
	Watch     []WatchItem `json:"watch"`
}

// WatchItem is one watched path or glob and why it is watched.
type WatchItem struct {
	Glob string `json:"glob"`
	Why  string `json:"why"`
}

// ExplainWatch lists what each property of cfg (read from configPath)
// watches, with what an in-repository ledger adds (ledger) and the
// infrastructure finder finds in the base revision, without running
// anything.
func ExplainWatch(ctx context.Context, cfg *config.Config, configPath string, ledger []string, finder *infra.Finder) ([]WatchList, error) {
	watch := append([]string{configPath}, ledger...)
	var out []WatchList
	for i := range cfg.Properties {
		p := &cfg.Properties[i]
		wl := WatchList{Property: p.ID(), Framework: p.Framework}
		if p.Prepare != nil {
			wl.Prepare = p.Prepare.Run
		}
		wl.Watch = append(wl.Watch, WatchItem{p.Path, "the property file"})
		if p.Generator != "" {
			wl.Watch = append(wl.Watch, WatchItem{p.Generator, "the fixture generator"})
		}
		for _, w := range watch {
			why := "the config"
			if w != configPath {
				why = "the ledger (inside the repository)"
			}
			wl.Watch = append(wl.Watch, WatchItem{w, why})
		}
		globs, err := PropGlobs(ctx, cfg, finder, p)
		if err != nil {
			return nil, err
		}
		for _, g := range globs {
			wl.Watch = append(wl.Watch, WatchItem{g.Glob, g.Why})
		}
		out = append(out, wl)
	}
	return out, nil
}
