package e2e_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCheckGoSuiteTestBuildsAreCached: the caches of a go suite's second
// check. A suite test that runs go build
// itself (as cobra's TestDeadcodeElimination does) finds what it builds
// in the repository's build cache, because the fill runs the base's go
// suites once for real. The test fails when its go build compiles
// package main: before the fill ran the suite, every attempt compiled it
// again under a throwaway layer, and the harmless patch was rejected.
func TestCheckGoSuiteTestBuildsAreCached(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end to end: real git, go and a sandbox")
	}
	needTool(t, "go")
	r := newRepo(t, map[string]string{
		"go.mod":    "module example.com/builds\n\ngo 1.21\n",
		"README.md": "builds\n",
		"flakegate.yaml": `version: 1
retry_cap: 1
flake_probe_runs: 0
impact: false
suites:
  - path: "./..."
    framework: go
    seeds: [1]
    wall_budget: 120s
`,
		"testdata/prog/main.go": "package main\n\nfunc main() { println(\"prog\") }\n",
		"builds_test.go": `package builds

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestBuildIsCached(t *testing.T) {
	out, err := exec.Command("go", "build", "-x", "-o", filepath.Join(t.TempDir(), "prog"), "./testdata/prog").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "/compile ") && strings.Contains(l, " -p main ") {
			t.Fatalf("package main was compiled, not found in the build cache:\n%s", l)
		}
	}
}

func TestPlain(t *testing.T) {}
`,
	})
	r.candidate("docs", map[string]string{"README.md": "builds, documented\n"})
	for _, round := range []string{"first", "second"} {
		cr := r.check("--base", "base", "--candidate", "docs")
		if cr.code != 0 || len(cr.summary.Results) != 2 || len(notPass(cr)) != 0 {
			t.Fatalf("%s check of a harmless patch: want 2 PASS, exit 0; not pass %v\n%s", round, notPass(cr), cr)
		}
		if round == "first" && !strings.Contains(cr.stderr, "Go build cache filled from the base") {
			t.Fatalf("the first check did not fill the build cache:\n%s", cr.stderr)
		}
	}

	// The base's listing is kept between checks and read back: a kept
	// listing without TestPlain grades TestBuildIsCached alone; an
	// unreadable one is listed again.
	kept, _ := filepath.Glob(filepath.Join(r.dir, ".git", "flakegate", "suitelist", "*.json"))
	if len(kept) != 1 {
		t.Fatalf("want one kept listing, got %v", kept)
	}
	b, err := os.ReadFile(kept[0])
	if err != nil || !strings.Contains(string(b), "TestPlain") {
		t.Fatalf("kept listing %s: %v\n%s", kept[0], err, b)
	}
	var f map[string]any
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	tests := f["Tests"].([]any)
	f["Tests"] = slices.DeleteFunc(tests, func(x any) bool { return x.(map[string]any)["Name"] == "TestPlain" })
	b, _ = json.Marshal(f)
	if err := os.WriteFile(kept[0], b, 0o600); err != nil {
		t.Fatal(err)
	}
	if cr := r.check("--base", "base", "--candidate", "docs"); cr.code != 0 || len(cr.summary.Results) != 1 || cr.summary.Results[0].Name != "TestBuildIsCached" {
		t.Fatalf("with the kept listing of one test: want 1 result, got\n%s", cr)
	}
	if err := os.WriteFile(kept[0], []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if cr := r.check("--base", "base", "--candidate", "docs"); cr.code != 0 || len(cr.summary.Results) != 2 {
		t.Fatalf("with an unreadable kept listing: want 2 results (listed again), got\n%s", cr)
	}
}
