package grade

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/digest"
	"github.com/flakegate/flakegate/git"
	"github.com/flakegate/flakegate/grade/infra"
	"github.com/flakegate/flakegate/template"
)

// gitRepo makes a repository whose commits hold each of revs in turn (a
// file "" deletes it) and returns its client and the commits' shas.
func gitRepo(t *testing.T, revs ...map[string]string) (*git.Client, []string) {
	t.Helper()
	dir := t.TempDir()
	run := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run("init", "-q", "-b", "main")
	var shas []string
	for _, files := range revs {
		writeTree(t, dir, files)
		run("add", "-A")
		run("commit", "-q", "--allow-empty", "-m", "rev")
		shas = append(shas, run("rev-parse", "HEAD"))
	}
	return &git.Client{Dir: dir}, shas
}

// writeTree writes files under dir ("" removes one).
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for f, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(f))
		if text == "" {
			os.Remove(p)
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func testVars(p *config.Property, seed flakegate.Seed) template.Vars {
	return template.Vars{Path: p.Path, Name: p.Name, Seed: seed.String(), Fixture: p.Fixture}
}

var preflightBase = map[string]string{
	"flakegate.yaml":     "properties: []\n",
	"calc.py":            "def add(a, b):\n    return a + b\n",
	"tests/test_calc.py": "def test_add():\n    assert True\n",
	"tests/data.json":    "{}\n",
	"pyproject.toml":     "[project]\nname = \"calc\"\n\n[tool.pytest.ini_options]\naddopts = \"-q\"\n",
}

// TestPreflight: a property's digests on both sides, and the diff paths
// that make its triples CONTAMINATED: the config (an exact watch path),
// a conftest.py the patch adds (a glob), pyproject.toml only when its
// pytest part changes; a candidate without the fixture records
// FixtureAbsent and why, one without the property file the base's digest.
func TestPreflight(t *testing.T) {
	ctx := context.Background()
	type testCase struct {
		name      string
		cand      map[string]string
		wantWhy   []string
		wantFixAb bool
	}
	run := func(t *testing.T, tc testCase) {
		candFiles := map[string]string{}
		for f, s := range preflightBase {
			candFiles[f] = s
		}
		for f, s := range tc.cand {
			candFiles[f] = s
		}
		g, shas := gitRepo(t, preflightBase, candFiles)
		base, cand := t.TempDir(), t.TempDir()
		writeTree(t, base, preflightBase)
		writeTree(t, cand, candFiles)
		diff, err := g.DiffNames(ctx, shas[0], shas[1])
		if err != nil {
			t.Fatal(err)
		}
		cfg := &config.Config{RetryCap: 2}
		p := &config.Property{Path: "tests/test_calc.py", Name: "test_add", Framework: config.FrameworkPytest, Fixture: "tests/data.json",
			Run: []string{"sh", "-c", "pytest {path}"}}
		gr := &Grader{Git: g, BaseSHA: shas[0], CandSHA: shas[1], GradedSHA: shas[1], Config: cfg, ConfigPath: "flakegate.yaml",
			Watch: []string{"flakegate.yaml"}, Diff: diff, Finder: infra.New(g, shas[0]), Env: []string{"PATH=/usr/bin:/bin"}, Vars: testVars}
		ps, err := gr.Preflight(ctx, "properties[0]", p, base, cand)
		if err != nil {
			t.Fatal(err)
		}
		baseProp, _ := digest.Path(ctx, filepath.Join(base, "tests/test_calc.py"))
		baseFix, _ := digest.Path(ctx, filepath.Join(base, "tests/data.json"))
		if ps.BasePropertySHA256 != baseProp || ps.BaseFixtureSHA256 != baseFix || ps.CandPropertySHA256 != baseProp {
			t.Errorf("digests %s %s %s, want the base's %s %s", ps.BasePropertySHA256, ps.BaseFixtureSHA256, ps.CandPropertySHA256, baseProp, baseFix)
		}
		if tc.wantFixAb != (ps.CandFixtureSHA256 == FixtureAbsent) || tc.wantFixAb != strings.HasPrefix(ps.CandFixtureReason, "the candidate's fixture cannot be digested: ") {
			t.Errorf("candidate fixture %q (%q), absent %t", ps.CandFixtureSHA256, ps.CandFixtureReason, tc.wantFixAb)
		}
		if !tc.wantFixAb && ps.CandFixtureSHA256 != baseFix {
			t.Errorf("candidate fixture %s, want %s", ps.CandFixtureSHA256, baseFix)
		}
		if !slices.Equal(ps.WatchWhy, tc.wantWhy) {
			t.Errorf("watch why %q, want %q", ps.WatchWhy, tc.wantWhy)
		}
		if ps.RunSHA256 != RunSHA256(p) || ps.EntrySHA256 != EntrySHA256(cfg, p) {
			t.Errorf("run and entry digests %s %s", ps.RunSHA256, ps.EntrySHA256)
		}
	}
	for _, tc := range []testCase{
		{name: "code only", cand: map[string]string{"calc.py": "def add(a, b):\n    return b + a\n"}},
		{name: "pyproject's packaging part", cand: map[string]string{"pyproject.toml": "[project]\nname = \"calc2\"\n\n[tool.pytest.ini_options]\naddopts = \"-q\"\n"}},
		{name: "pyproject's pytest part", cand: map[string]string{"pyproject.toml": "[project]\nname = \"calc\"\n\n[tool.pytest.ini_options]\naddopts = \"-p no:x\"\n"},
			wantWhy: []string{"pyproject.toml (pytest configuration)"}},
		{name: "a conftest added", cand: map[string]string{"tests/conftest.py": "import pytest\n"},
			wantWhy: []string{"tests/conftest.py (pytest configuration)"}},
		{name: "fixture deleted", cand: map[string]string{"tests/data.json": ""}, wantFixAb: true},
		{name: "property file deleted", cand: map[string]string{"tests/test_calc.py": ""}},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestPreflightRefuses: what makes a config unusable is an EINVALID
// naming its key: a property file the base lacks, one whose symlink
// leads out of the tree, a test command not found, rapid seed 0, and a
// hypothesis profile that derandomizes.
func TestPreflightRefuses(t *testing.T) {
	ctx := context.Background()
	type testCase struct {
		name  string
		files map[string]string
		prop  config.Property
		want  string
	}
	run := func(t *testing.T, tc testCase) {
		g, shas := gitRepo(t, tc.files)
		base := t.TempDir()
		writeTree(t, base, tc.files)
		if err := os.Symlink("/etc/passwd", filepath.Join(base, "escape_test.go")); err != nil {
			t.Fatal(err)
		}
		gr := &Grader{Git: g, BaseSHA: shas[0], Config: &config.Config{}, ConfigPath: "flakegate.yaml",
			Finder: infra.New(g, shas[0]), Env: []string{"PATH=/usr/bin:/bin"}, Vars: testVars}
		_, err := gr.Preflight(ctx, "properties[3]", &tc.prop, base, base)
		if flakegate.ErrorCode(err) != flakegate.EINVALID || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("error %v, want EINVALID with %q", err, tc.want)
		}
	}
	goFiles := map[string]string{"x_test.go": "package x\n"}
	pyFiles := map[string]string{"tests/test_h.py": "def test_h():\n    pass\n", "tests/conftest.py": "settings.register_profile('ci',\n  derandomize=True)\n"}
	for _, tc := range []testCase{
		{"missing file", goFiles, config.Property{Path: "y_test.go", Run: []string{"go", "test"}},
			"properties[3].path: the property file y_test.go does not exist at the base revision"},
		{"escaping link", goFiles, config.Property{Path: "escape_test.go", Run: []string{"go", "test"}},
			"properties[3].path: escape_test.go is a symlink that leads out of the repository"},
		{"no command", goFiles, config.Property{Path: "x_test.go", Run: []string{"no-such-command-fg", "{seed}"}},
			`properties[3].run[0]: the test command "no-such-command-fg" was not found`},
		{"rapid seed 0", goFiles, config.Property{Path: "x_test.go", Framework: config.FrameworkGo, Run: []string{"sh", "-rapid.seed={seed}"}, Seeds: []flakegate.Seed{"3", "0"}},
			"properties[3]: seed 0 makes rapid pick a random seed"},
		{"derandomize", pyFiles, config.Property{Path: "tests/test_h.py", Framework: config.FrameworkPytest, Run: []string{"sh", "--hypothesis-seed={seed}"}},
			"properties[3]: tests/conftest.py:2 sets hypothesis derandomize"},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestDropGatedHelpers: a go suite test's globs leave out the test-only
// packages its own suite gates (code under test, graded by their own
// tests), keep a helper the suite does not gate, and keep everything for
// a property outside a suite or a suite that is not listed.
func TestDropGatedHelpers(t *testing.T) {
	helper := func(dir string) infra.Watch {
		return infra.Watch{Glob: dir + "/*.go", Why: goHelperWhy + " (a test helper of pkg)"}
	}
	globs := []infra.Watch{helper("cmpopts"), helper("internal/footest"), {Glob: "pkg/testdata/rapid/**", Why: "rapid fail files of the property's package"}}
	asked := 0
	g := &Grader{SuiteFiles: func(i int) []string {
		asked++
		if i != 0 {
			return nil
		}
		return []string{"pkg/a_test.go", "cmpopts/equate_test.go"}
	}}
	suite := &config.Property{Path: "pkg/a_test.go", Framework: config.FrameworkGo, Suite: &config.Suite{Index: 0}}
	for range 2 {
		got := g.dropGatedHelpers(suite, slices.Clone(globs))
		if want := []infra.Watch{globs[1], globs[2]}; !slices.Equal(got, want) {
			t.Errorf("suite test's globs %v, want %v", got, want)
		}
	}
	if asked != 1 {
		t.Errorf("the suite's files were listed %d times, want once", asked)
	}
	unlisted := &config.Property{Path: "pkg/a_test.go", Framework: config.FrameworkGo, Suite: &config.Suite{Index: 1}}
	alone := &config.Property{Path: "pkg/a_test.go", Framework: config.FrameworkGo}
	for _, p := range []*config.Property{unlisted, alone} {
		if got := g.dropGatedHelpers(p, slices.Clone(globs)); !slices.Equal(got, globs) {
			t.Errorf("globs %v, want all of %v", got, globs)
		}
	}
}
