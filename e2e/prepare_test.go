package e2e_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// preparePyFiles is a Python package whose tests import a module that
// only the prepare builds (gen.py writes pkg/_generated.py). Every
// prepare run appends a line to $FG_STATE/prepares (shared read-write).
func preparePyFiles(prepare string) map[string]string {
	if prepare == "" {
		prepare = `  run: [sh, -c, "echo run >> @FG_STATE@/prepares && python3 gen.py"]
  budget: 1m
`
	}
	return map[string]string{
		"flakegate.yaml": "version: 1\nretry_cap: 1\nsandbox:\n  rw: [\"@FG_STATE@\"]\nprepare:\n" + prepare + `properties:
  - path: tests/test_clamp.py
    name: test_clamp
    seeds: [1, 2]
    run: [pytest, -q, -p, no:cacheprovider, "{path}::{name}", "--hypothesis-seed={seed}"]
    wall_budget: 60s
`,
		"gen.py":              "import pathlib\npathlib.Path('pkg/_generated.py').write_text('LIMIT = 100\\n')\nprint('generated pkg/_generated.py')\n",
		"conftest.py":         "\n",
		"pkg/__init__.py":     "from pkg._generated import LIMIT\n\ndef clamp(x):\n    return min(x, LIMIT)\n",
		"tests/test_clamp.py": "from hypothesis import given, strategies as st\nfrom pkg import clamp, LIMIT\n\n@given(st.integers())\ndef test_clamp(x):\n    assert clamp(x) <= LIMIT\n",
		"README.md":           "a package with a build step\n",
	}
}

func needPytest(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("pytest"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("pytest is not installed")
		}
		t.Skip("pytest is not installed")
	}
}

// prepareRuns counts the prepares run so far in r.
func prepareRuns(t *testing.T, r *repo) int {
	b, err := os.ReadFile(filepath.Join(r.state, "prepares"))
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "run\n")
}

// TestCheckPreparePython: the tests import a module only the prepare
// builds. A harmless candidate passes and a buggy one is PROPERTY; the
// prepared layer lies under the attempts and never in the worktree; a
// second check of the same base (a new candidate) reuses the base's
// layer, and a check of the same candidate again prepares nothing.
func TestCheckPreparePython(t *testing.T) {
	t.Parallel()
	needPytest(t)
	r := newRepo(t, preparePyFiles(""))
	r.candidate("docs", map[string]string{"README.md": "docs\n"})
	r.candidate("buggy", map[string]string{"pkg/__init__.py": "from pkg._generated import LIMIT\n\ndef clamp(x):\n    return x\n"})

	explain := exec.Command(flakegateBin, "check", "--base", "base", "--explain-watch")
	explain.Dir = r.dir
	out, err := explain.CombinedOutput()
	if err != nil || !strings.Contains(string(out), `prepare (once per tree, not watched): ["sh","-c","echo run`) || strings.Contains(string(out), "pyproject.toml") {
		t.Errorf("--explain-watch: %v\n%s", err, out)
	}
	docs := r.check("--base", "base", "--candidate", "docs")
	if docs.code != 0 || strings.Join(docs.labels(), ",") != "PASS,PASS" {
		t.Fatalf("docs\n%s", docs)
	}
	for _, want := range []string{"prepare candidate: ", "prepare base: ", "(cached: no)"} {
		if !strings.Contains(docs.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, docs.stderr)
		}
	}
	if n := prepareRuns(t, r); n != 2 {
		t.Fatalf("%d prepares ran, want 2 (candidate and base)", n)
	}
	if len(docs.summary.Prepares) != 2 || !docs.summary.Prepares[0].OK || docs.summary.Prepares[0].Cached {
		t.Errorf("summary prepares: %+v", docs.summary.Prepares)
	}
	rec := docs.record(t, 0)
	if len(rec.PrepareSHA256) != 64 || rec.PrepareSeconds == nil || rec.BasePrepareSeconds == nil {
		t.Errorf("record prepare keys: %q %v %v", rec.PrepareSHA256, rec.PrepareSeconds, rec.BasePrepareSeconds)
	}
	raw, _ := os.ReadFile(rec.TranscriptPath)
	if strings.Count(string(raw), `"type":"prepare"`) != 2 {
		t.Errorf("the transcript has no prepare events:\n%s", raw)
	}
	matches, _ := filepath.Glob(filepath.Join(treesDir(t, r.dir), "*", "pkg", "_generated.py"))
	if len(matches) > 0 {
		t.Errorf("the prepare wrote a worktree: %v", matches)
	}

	buggy := r.check("--base", "base", "--candidate", "buggy")
	if buggy.code != 1 || strings.Join(buggy.labels(), ",") != "PROPERTY,PROPERTY" {
		t.Fatalf("buggy\n%s", buggy)
	}
	if !strings.Contains(buggy.stderr, "prepare base: ") || !strings.Contains(buggy.stderr, "(cached: yes)") {
		t.Errorf("the base's layer was not reused:\n%s", buggy.stderr)
	}
	if n := prepareRuns(t, r); n != 3 {
		t.Fatalf("%d prepares ran after a second candidate, want 3 (the base's layer reused)", n)
	}
	again := r.check("--base", "base", "--candidate", "docs", "--out", t.TempDir())
	if again.code != 0 {
		t.Fatalf("docs again\n%s", again)
	}
	if n := prepareRuns(t, r); n != 3 {
		t.Fatalf("%d prepares ran after checking a candidate again, want 3", n)
	}
}

// TestCheckPrepareFails: a prepare that fails on the candidate, on the
// base, or runs past its budget makes every triple INCOMPLETE with the
// reason and the output tail; nothing of it is cached.
func TestCheckPrepareFails(t *testing.T) {
	t.Parallel()
	needPytest(t)
	failGen := "import sys\nprint('cannot generate: no LIMIT')\nsys.exit(1)\n"

	r := newRepo(t, preparePyFiles(""))
	r.candidate("broken", map[string]string{"gen.py": failGen})
	cr := r.check("--base", "base", "--candidate", "broken")
	if cr.code != 1 || strings.Join(cr.labels(), ",") != "INCOMPLETE,INCOMPLETE" {
		t.Fatalf("candidate prepare fails\n%s", cr)
	}
	for i := range cr.summary.Results {
		if why := cr.summary.Results[i].Reason; !strings.Contains(why, "candidate prepare failed: exit 1: ") || !strings.Contains(why, "cannot generate: no LIMIT") {
			t.Errorf("reason %q", why)
		}
		if rec := cr.record(t, i); len(rec.Attempts) != 0 || !strings.Contains(rec.IncompleteReason, "prepare failed") {
			t.Errorf("record: %d attempts, incomplete_reason %q", len(rec.Attempts), rec.IncompleteReason)
		}
	}

	// The base's prepare fails: INCOMPLETE, and the next check runs it
	// again (nothing was cached for the base).
	files := preparePyFiles("")
	files["gen.py"] = failGen
	b := newRepo(t, files)
	b.candidate("fix", map[string]string{"gen.py": preparePyFiles("")["gen.py"]})
	for i := 0; i < 2; i++ {
		cr := b.check("--base", "base", "--candidate", "fix", "--out", t.TempDir())
		if cr.code != 1 || strings.Join(cr.labels(), ",") != "INCOMPLETE,INCOMPLETE" {
			t.Fatalf("base prepare fails\n%s", cr)
		}
		if why := cr.summary.Results[0].Reason; !strings.Contains(why, "base prepare failed: exit 1: ") {
			t.Errorf("reason %q", why)
		}
	}
	if n := prepareRuns(t, b); n != 3 {
		t.Errorf("%d prepares ran in two checks, want 3 (the candidate's once, the failed base's twice)", n)
	}

	// A prepare past its budget.
	slow := newRepo(t, preparePyFiles("  run: [sleep, \"30\"]\n  budget: 1s\n"))
	slow.candidate("docs", map[string]string{"README.md": "docs\n"})
	cr = slow.check("--base", "base", "--candidate", "docs")
	if cr.code != 1 || strings.Join(cr.labels(), ",") != "INCOMPLETE,INCOMPLETE" {
		t.Fatalf("slow prepare\n%s", cr)
	}
	if why := cr.summary.Results[0].Reason; !strings.Contains(why, "prepare failed: ran past its budget 1s") {
		t.Errorf("reason %q", why)
	}
	if entries, _ := os.ReadDir(filepath.Join(slow.dir, ".git", "flakegate", "prepared")); len(entries) != 0 {
		t.Errorf("a failed prepare left %d layers", len(entries))
	}
}

// TestCheckPrepareGoDependency: a patch that adds a Go dependency (a
// replace to a local folder: no network in tests) and changes go.mod is
// labelled by its test, not INCOMPLETE nor CONTAMINATED: go.mod is not
// test infrastructure, and the candidate's prepared layer (go build
// ./...) is built from the candidate's go.mod.
func TestCheckPrepareGoDependency(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go is not installed")
	}
	gosum, err := os.ReadFile(filepath.Join("..", "examples", "go-rapid", "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"go.mod":   "module example.com/m\n\ngo 1.23\n\nrequire pgregory.net/rapid v1.3.0\n",
		"go.sum":   string(gosum),
		"clamp.go": "package m\n\n// Clamp bounds x by 100.\nfunc Clamp(x int) int {\n\tif x > 100 {\n\t\treturn 100\n\t}\n\treturn x\n}\n",
		"clamp_prop_test.go": `package m

import (
	"testing"

	"pgregory.net/rapid"
)

func TestClampProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		x := rapid.Int().Draw(t, "x")
		if Clamp(x) > 100 {
			t.Fatalf("Clamp(%d) = %d", x, Clamp(x))
		}
	})
}
`,
		"flakegate.yaml": `version: 1
retry_cap: 1
prepare:
  run: [go, build, ./...]
  budget: 5m
properties:
  - path: clamp_prop_test.go
    name: TestClampProperty
    seeds: [11, 12]
    run: [go, test, -count=1, -run, "^{name}$", ., "-rapid.seed={seed}", -rapid.checks=200, -rapid.nofailfile]
    wall_budget: 2m
`,
	}
	r := newRepo(t, files)
	dep := func(max string) map[string]string {
		return map[string]string{
			"go.mod":                       files["go.mod"] + "\nrequire example.com/limits v0.0.0\n\nreplace example.com/limits => ./third_party/limits\n",
			"third_party/limits/go.mod":    "module example.com/limits\n\ngo 1.23\n",
			"third_party/limits/limits.go": "package limits\n\n// Max is the bound.\nconst Max = " + max + "\n",
			"clamp.go":                     "package m\n\nimport \"example.com/limits\"\n\n// Clamp bounds x by 100.\nfunc Clamp(x int) int {\n\tif x > 100 {\n\t\treturn limits.Max\n\t}\n\treturn x\n}\n",
		}
	}
	r.candidate("dep", dep("100"))
	r.candidate("baddep", dep("101"))
	cr := r.check("--base", "base", "--candidate", "dep")
	if cr.code != 0 || strings.Join(cr.labels(), ",") != "PASS,PASS" {
		t.Fatalf("a new dependency\n%s", cr)
	}
	cr = r.check("--base", "base", "--candidate", "baddep")
	if cr.code != 1 || strings.Join(cr.labels(), ",") != "PROPERTY,PROPERTY" {
		t.Fatalf("a new dependency with a bug\n%s", cr)
	}
}
