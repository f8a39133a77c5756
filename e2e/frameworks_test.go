package e2e_test

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// exampleFiles reads examples/<name> into a map for newRepo.
func exampleFiles(t *testing.T, name string) map[string]string {
	t.Helper()
	root := filepath.Join("..", "examples", name)
	files := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "__pycache__" || d.Name() == ".hypothesis" {
				return filepath.SkipDir
			}
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		files[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// frameworkCase is a real test framework run through flakegate.
type frameworkCase struct {
	example   string
	need      string            // a program the example needs on PATH
	bugFile   string            // the file the buggy candidate edits
	bugOld    string            // the line the bug removes
	bugNew    string            // and what it puts there
	noTestsOn map[string]string // config edits that make the run select no test
	// share is a sandbox block added to the config and env passed to
	// flakegate. (Go needs none: every attempt's build cache is the
	// host's, read-only, under a throwaway layer.)
	share func(t *testing.T) (block string, env []string)
}

func runFramework(t *testing.T, fc frameworkCase) {
	if testing.Short() {
		t.Skip("end-to-end with a real test framework")
	}
	if _, err := exec.LookPath(fc.need); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not installed", fc.need)
		}
		t.Skipf("%s is not installed", fc.need)
	}
	files := exampleFiles(t, fc.example)
	var env []string
	if fc.share != nil {
		var block string
		block, env = fc.share(t)
		files["flakegate.yaml"] = strings.Replace(files["flakegate.yaml"], "properties:", block+"properties:", 1)
	}
	r := newRepo(t, files)
	src := files[fc.bugFile]
	if !strings.Contains(src, fc.bugOld) {
		t.Fatalf("%s no longer holds %q", fc.bugFile, fc.bugOld)
	}
	r.candidate("buggy", map[string]string{fc.bugFile: strings.Replace(src, fc.bugOld, fc.bugNew, 1)})
	r.candidate("docs", map[string]string{"README.md": files["README.md"] + "\nA docs-only patch.\n"})

	buggy := r.checkEnv(env, "--base", "base", "--candidate", "buggy")
	if buggy.code != 1 || strings.Join(buggy.labels(), ",") != "PROPERTY,PROPERTY,PROPERTY,PROPERTY" {
		t.Fatalf("buggy candidate\n%s", buggy)
	}
	for i := range buggy.summary.Results {
		rec := buggy.record(t, i)
		if rec.BaseSeedResult != "pass" || rec.CandidateResult != "fail" || len(rec.RetryResults) != 2 {
			t.Errorf("record %d: %s/%s/%v", i, rec.CandidateResult, rec.BaseSeedResult, rec.RetryResults)
		}
	}
	docs := r.checkEnv(env, "--base", "base", "--candidate", "docs")
	if docs.code != 0 || strings.Join(docs.labels(), ",") != "PASS,PASS,PASS,PASS" {
		t.Fatalf("docs-only candidate\n%s", docs)
	}

	// A run in which no test executed is never a pass.
	cfg := files["flakegate.yaml"]
	for old, new := range fc.noTestsOn {
		cfg = strings.Replace(cfg, old, new, 1)
	}
	files["flakegate.yaml"] = cfg
	none := newRepo(t, files)
	none.candidate("docs", map[string]string{"README.md": "docs\n"})
	cr := none.checkEnv(env, "--base", "base", "--candidate", "docs")
	if cr.code != 1 || strings.Join(cr.labels(), ",") != "INCOMPLETE,INCOMPLETE,INCOMPLETE,INCOMPLETE" {
		t.Fatalf("a run that selected no test\n%s", cr)
	}
}

func TestCheckGoRapid(t *testing.T) {
	t.Parallel()
	runFramework(t, frameworkCase{
		example:   "go-rapid",
		need:      "go",
		bugFile:   "backoff.go",
		bugOld:    "if d > limit {",
		bugNew:    "if false && d > limit {",
		noTestsOn: map[string]string{`"^{name}$"`: "^TestNoSuchProperty$"},
	})
}

func TestCheckPytestHypothesis(t *testing.T) {
	t.Parallel()
	runFramework(t, frameworkCase{
		example:   "pytest-hypothesis",
		need:      "pytest",
		bugFile:   "retry_budget.py",
		bugOld:    "d = min(d, cap_ms)",
		bugNew:    "pass",
		noTestsOn: map[string]string{`"{path}::{name}",`: `"{path}", -k, no_such_property,`},
	})
}

// TestCheckNodeProperty: a plain Node.js property runs inside the minimal
// root (node from /usr, nothing of the host's home): a buggy candidate is
// PROPERTY on every seed and a docs-only one passes.
func TestCheckNodeProperty(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end with node")
	}
	if _, err := exec.LookPath("node"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("node is not installed")
		}
		t.Skip("node is not installed")
	}
	sortJS := "exports.sortNumbers = (xs) => [...xs].sort((a, b) => a - b);\n"
	files := map[string]string{
		"src/sort.js": sortJS,
		"props/sorted.js": `// Property: sortNumbers returns its input in ascending order.
const { sortNumbers } = require("../src/sort.js");
let s = BigInt(process.argv[2]);
const next = () => { s = (s * 6364136223846793005n + 1442695040888963407n) % (1n << 64n); return Number(s >> 40n) % 1000 - 500; };
for (let run = 0; run < 200; run++) {
  const xs = Array.from({ length: 1 + (run % 17) }, next);
  const ys = sortNumbers(xs);
  for (let i = 1; i < ys.length; i++) {
    if (ys[i - 1] > ys[i]) { console.log("not sorted:", JSON.stringify(xs), "->", JSON.stringify(ys)); process.exit(1); }
  }
}
console.log("ok");
`,
		"README.md": "node example\n",
		"flakegate.yaml": `version: 1
retry_cap: 1
workers: 1
properties:
  - path: props/sorted.js
    seeds: [1, 2]
    run: [node, "{path}", "{seed}"]
    wall_budget: 30s
`,
	}
	r := newRepo(t, files)
	r.candidate("buggy", map[string]string{"src/sort.js": "exports.sortNumbers = (xs) => [...xs].sort();\n"})
	r.candidate("docs", map[string]string{"README.md": "node example, docs\n"})
	if cr := r.check("--base", "base", "--candidate", "buggy"); cr.code != 1 || strings.Join(cr.labels(), ",") != "PROPERTY,PROPERTY" {
		t.Fatalf("buggy candidate\n%s", cr)
	}
	if cr := r.check("--base", "base", "--candidate", "docs"); cr.code != 0 || strings.Join(cr.labels(), ",") != "PASS,PASS" {
		t.Fatalf("docs-only candidate\n%s", cr)
	}
}
