package e2e_test

import (
	"strings"
	"testing"
)

// TestCheckGoSuiteTestBuildsAreCached: a suite test that runs go build
// itself (as cobra's TestDeadcodeElimination does) finds what it builds
// in the repository's build cache, because the fill runs the base's go
// suites once for real. The test fails when its go build compiles
// package main: before the fill ran the suite, every attempt compiled it
// again under a throwaway layer, and the harmless patch was rejected.
func TestCheckGoSuiteTestBuildsAreCached(t *testing.T) {
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
}
