package e2e_test

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// TestCheckGoBuildStep (gocache/build.go, binary.go): the
// go attempts of a tree get the build step's Go cache as more read-only
// lower layers (their overlay's lowerdir names them), and no attempt
// sees a file that test code wrote in the cache or beside its binary:
// the build step runs none (its -exec only keeps the linked binary), and
// each attempt's own writes are thrown away with it. The package's test
// variable writes $GOCACHE/fg-planted and a file beside its own binary
// in every process that runs its test code and says whether they were
// there already. As root, every attempt runs the binary the step kept,
// with go test's own arguments for it (-test.paniconexit0, the seed's
// -test.shuffle, the batch's -test.run, the template's -seed), and so
// does package q's test in the same batch: a batch of two packages runs
// both kept binaries.
func TestCheckGoBuildStep(t *testing.T) {
	t.Parallel()
	needTool(t, "go")
	entry := func(pkg, name string) string {
		return `  - path: ` + pkg + `/` + pkg + `_test.go
    name: ` + name + `
    seeds: [1, 2, 3]
    run: [go, test, -count=1, -run, "^{name}$", ./` + pkg + `, "-seed={seed}"]
    wall_budget: 60s
`
	}
	r := newRepo(t, map[string]string{
		"go.mod":         "module example.com/bs\n\ngo 1.21\n",
		"README.md":      "bs\n",
		"flakegate.yaml": goBatchHead + entry("p", "TestProbe") + entry("p", "TestOther") + entry("q", "TestQProbe"),
		"q/q_test.go": `package q

import (
	"flag"
	"os"
	"strings"
	"testing"
)

` + goSeedFlag + `
func TestQProbe(t *testing.T) { t.Log("QARGS " + strings.Join(os.Args, " ")) }
`,
		"p/p.go": "package p\n\n// V is 1.\nfunc V() int { return 1 }\n",
		"p/p_test.go": `package p

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

` + goSeedFlag + `
var planted = plant()

// plant writes a file into the Go cache and says whether it was there.
func plant() string {
	c := os.Getenv("GOCACHE")
	if c == "" {
		c = "/tmp/go-build"
	}
	p := filepath.Join(c, "fg-planted")
	_, err := os.Stat(p)
	werr := os.WriteFile(p, []byte("x"), 0o644)
	beside := filepath.Join(filepath.Dir(os.Args[0]), "fg-planted")
	if _, err := os.Stat(beside); err == nil {
		return "PLANTED-SEEN beside the binary"
	}
	os.WriteFile(beside, []byte("x"), 0o644)
	if err == nil {
		return "PLANTED-SEEN"
	}
	return "PLANTED-NOT-SEEN (write: " + func() string { if werr != nil { return werr.Error() }; return "ok" }() + ")"
}

func TestProbe(t *testing.T) {
	mi, _ := os.ReadFile("/proc/self/mountinfo")
	for _, l := range strings.Split(string(mi), "\n") {
		if strings.Contains(l, " /tmp/go-build ") {
			t.Log("GOCACHE-MOUNT " + l)
		}
	}
	t.Log(planted)
	t.Log("ARGS " + strings.Join(os.Args, " "))
}

func TestOther(t *testing.T) {
	if V() != 1 {
		t.Fatal("no")
	}
}
`,
	})
	r.candidate("docs", map[string]string{"README.md": "bs, docs\n"})
	cr := r.check("--base", "base", "--candidate", "docs")
	if got := strings.Join(cr.labels(), ","); got != "PASS,PASS,PASS,PASS,PASS,PASS,PASS,PASS,PASS" {
		t.Fatalf("labels %s, want nine PASS\n%s", got, cr)
	}
	probes, qprobes := 0, 0
	for i := range cr.summary.Results {
		rec := cr.record(t, i)
		for _, at := range rec.Attempts {
			if strings.Contains(at.OutputTail, "QARGS ") && os.Geteuid() == 0 {
				qprobes++
				args := "QARGS /tmp/go-build/flakegate-bin/sandbox/tree/q/q.test -test.paniconexit0 -test.v=test2json -test.count=1 -test.timeout=0s -test.run=^("
				if !strings.Contains(at.OutputTail, args) || !strings.Contains(at.OutputTail, "-seed="+rec.Seed.String()) {
					t.Errorf("seed %s, %s attempt %d of TestQProbe did not run q's kept binary with go test's arguments (%q):\n%s", rec.Seed, at.Side, at.Index, args, at.OutputTail)
				}
			}
			if !strings.Contains(at.OutputTail, "PLANTED-") {
				continue // TestOther's, TestQProbe's
			}
			probes++
			if !strings.Contains(at.OutputTail, "PLANTED-NOT-SEEN (write: ok)") {
				t.Errorf("seed %s, %s attempt %d saw a file test code wrote in the Go cache, or could not write one:\n%s", rec.Seed, at.Side, at.Index, at.OutputTail)
			}
			if os.Geteuid() != 0 {
				continue // the build step is root's only (gocache/build.go)
			}
			if !strings.Contains(at.OutputTail, "gocache-lower/1") {
				t.Errorf("seed %s, %s attempt %d: its Go cache has no build step's layer:\n%s", rec.Seed, at.Side, at.Index, at.OutputTail)
			}
			for _, b := range transcriptBatches(t, rec.TranscriptPath) {
				if len(b.Argv) < 3 || b.Argv[0] != "go" || b.Argv[1] != "test" || !slices.Contains(b.Argv, "./p") {
					t.Errorf("seed %s: the transcript names a batch's command %q, not its go test command", rec.Seed, b.Argv)
				}
			}
			args := "ARGS /tmp/go-build/flakegate-bin/sandbox/tree/p/p.test -test.paniconexit0 -test.v=test2json -test.count=1 -test.timeout=0s -test.run=^("
			seed := "-seed=" + rec.Seed.String()
			if !strings.Contains(at.OutputTail, args) || !strings.Contains(at.OutputTail, seed) {
				t.Errorf("seed %s, %s attempt %d did not run the kept binary with go test's arguments (%q ... %q):\n%s", rec.Seed, at.Side, at.Index, args, seed, at.OutputTail)
			}
		}
	}
	if probes < 3 || qprobes < 3 && os.Geteuid() == 0 {
		t.Errorf("%d attempts of TestProbe and %d of TestQProbe, want one per seed at least", probes, qprobes)
	}
}
