package suites

import (
	"path"
	"strings"

	"github.com/flakegate/flakegate/config"
)

// InScope reports whether rel is a test file of the suite's scope:
// the files the graded candidate takes from the base.
func InScope(s *config.Suite, rel string) bool {
	base := path.Base(rel)
	switch s.Framework {
	case config.FrameworkGo:
		if !strings.HasSuffix(base, "_test.go") {
			return false
		}
		dir := path.Dir(rel)
		pat := strings.TrimPrefix(s.Path, "./")
		if rest, ok := strings.CutSuffix(pat, "..."); ok {
			rest = strings.TrimSuffix(rest, "/")
			return rest == "" || rest == "." || dir == rest || strings.HasPrefix(dir, rest+"/")
		}
		return dir == pat || pat == "." && dir == "."
	case config.FrameworkPytest:
		if !strings.HasSuffix(base, ".py") || !(strings.HasPrefix(base, "test_") || strings.HasSuffix(base, "_test.py")) {
			return false
		}
		return s.Path == "." || rel == s.Path || strings.HasPrefix(rel, s.Path+"/")
	case config.FrameworkVitest, config.FrameworkJest:
		return IsJSTestFile(rel) && (s.Path == "." || rel == s.Path || strings.HasPrefix(rel, s.Path+"/"))
	}
	return false
}

// Property is the property of one test of suite s in cfg, with
// the fixture the suite's triples digest ("" for none).
func Property(cfg *config.Config, s *config.Suite, t Test, list *List, fixture string) config.Property {
	return config.Property{Path: t.File, Name: t.Name, Fixture: fixture, Seeds: s.Seeds, RandomSeeds: s.RandomSeeds,
		WallBudget: s.WallBudget, FlakeProbeRuns: cfg.FlakeProbeRuns, Index: len(cfg.Properties), Prepare: cfg.Prepare,
		Framework: s.Framework, FrameworkSet: true, Batch: true, Suite: s, Run: suiteRun(s, t, list)}
}

// suiteRun is the run template of one suite test: the batch shape of its
// framework (batch/shape.go), with the order seed where the framework
// takes it.
func suiteRun(s *config.Suite, t Test, list *List) []string {
	switch s.Framework {
	case config.FrameworkGo:
		run := []string{"go", "test", "-shuffle={seed}", "-run", "^{name}$", t.Pkg}
		if list.Rapid[t.Pkg] {
			run = append(run, "-rapid.seed={seed}")
		}
		return run
	case config.FrameworkVitest, config.FrameworkJest:
		return append(JSSuiteLead(s.Framework, "{seed}"), "{path}", "-t", "^{name}$") // js.go
	}
	run := append(PytestArgv(s, list.Python), "{path}::{name}")
	if list.Hypothesis {
		run = append(run, "--hypothesis-seed={seed}")
	}
	return run
}
