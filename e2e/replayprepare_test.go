package e2e_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// replayPrepareFiles is a repository whose property needs what only its
// prepare makes (src/gen.sh, from src/gen.in) and that says whether its
// Go build cache is the repository's (the base's package, compiled by
// the fill, holds the constant marker).
func replayPrepareFiles(marker string) map[string]string {
	return map[string]string{
		"flakegate.yaml": `version: 1
retry_cap: 1
prepare:
  run: [cp, src/gen.in, src/gen.sh]
  budget: 2m
properties:
  - path: props/prop.sh
    seeds: [5]
    run: [sh, "{path}", "{seed}"]
    wall_budget: 2m
`,
		"props/prop.sh": `grep -r -a -l -q ` + marker + ` "$GOCACHE" && echo "REPO GO CACHE"
echo "GOMODCACHE=$GOMODCACHE"
. ./src/gen.sh
ok "$1"
`,
		"src/gen.in":  "ok() { echo \"gen.sh says ok\"; return 0; }\n",
		"go.mod":      "module example.com/gen\n\ngo 1.21\n",
		"gen.go":      "package gen\n\n// Marker is in this package's compiled form.\nconst Marker = \"" + marker + "\"\n",
		"gen_test.go": "package gen\n\nimport \"testing\"\n\nfunc TestMarker(t *testing.T) { _ = Marker }\n",
		".gitignore":  "src/gen.sh\n",
		"README.md":   "a property that needs its prepare\n",
	}
}

// runReproduce runs a reproduce line as the check printed it, the
// test's binary being `flakegate`, and returns its exit code and output.
func runReproduce(t *testing.T, line string) (int, string) {
	t.Helper()
	return runReproduceEnv(t, line, nil)
}

// runReproduceEnv is runReproduce with env added to the environment.
func runReproduceEnv(t *testing.T, line string, env []string) (int, string) {
	t.Helper()
	rest, ok := strings.CutPrefix(line, "flakegate ")
	if !ok {
		t.Fatalf("reproduce %q does not start with flakegate", line)
	}
	cmd := exec.Command("sh", "-c", `"$FLAKEGATE" `+rest)
	cmd.Env = append(append(cleanEnv(), env...), "FLAKEGATE="+flakegateBin)
	return runExit(t, cmd)
}

// TestReplayReproducesPrepare: for a property with a prepare, the check's
// result and its reproduce line, run as printed, agree: a PASS replays
// as a pass, a PROPERTY as a fail. The replay runs over the same
// prepared layer (the check's own, or one it builds the same way when the
// check's is gone) and with the same Go caches (the repository's build
// cache, filled from the base; the module cache of the base's go.sum).
func TestReplayReproducesPrepare(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end to end; fills a Go build cache")
	}
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("a prepare needs overlays: run the tests as root")
		}
		t.Skip("a prepare needs overlays: run the tests as root")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go is not installed")
	}
	marker := "fgrepocache" + nonce(t)
	r := newRepo(t, replayPrepareFiles(marker))
	r.candidate("good", map[string]string{"README.md": "a harmless edit\n"})
	r.candidate("bad", map[string]string{"src/gen.in": "ok() { echo \"gen.sh says no\"; return 1; }\n"})

	for _, tc := range []struct {
		tag, label string
		exit       int
		says       string
	}{{"good", "PASS", 0, "replay: pass"}, {"bad", "PROPERTY", 1, "replay: fail"}} {
		cr := r.check("--base", "base", "--candidate", tc.tag)
		if got := strings.Join(cr.labels(), ","); got != tc.label {
			t.Fatalf("%s: labels %s, want %s\n%s", tc.tag, got, tc.label, cr)
		}
		rec := cr.record(t, 0)
		tail := tailOf(t, rec, "candidate", 0)
		if !strings.Contains(tail, "REPO GO CACHE") || !strings.Contains(tail, "GOMODCACHE=/sandbox/gomod") {
			t.Errorf("%s: the check's attempt did not run with the repository's Go caches:\n%s", tc.tag, tail)
		}
		line := cr.summary.Results[0].Reproduce
		code, out := runReproduce(t, line)
		if code != tc.exit || !strings.Contains(out, tc.says) {
			t.Fatalf("%s: the check said %s, its reproduce line exited %d (want %d):\n%s\n%s", tc.tag, tc.label, code, tc.exit, line, out)
		}
		for _, want := range []string{"REPO GO CACHE", "GOMODCACHE=/sandbox/gomod", "replay: prepare: the check's prepared layer"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: the replay's output lacks %q: not what the check ran:\n%s", tc.tag, want, out)
			}
		}
	}

	// Without the check's layer, the replay prepares the candidate's tree
	// itself, the same way, and still agrees.
	if err := os.RemoveAll(filepath.Join(r.dir, ".git", "flakegate", "prepared")); err != nil {
		t.Fatal(err)
	}
	cr := r.check("--base", "base", "--candidate", "good", "--out", t.TempDir())
	os.RemoveAll(filepath.Join(r.dir, ".git", "flakegate", "prepared"))
	code, out := runReproduce(t, cr.summary.Results[0].Reproduce)
	if code != 0 || !strings.Contains(out, "replay: prepare: ran in") || !strings.Contains(out, "gen.sh says ok") {
		t.Fatalf("the replay without the check's layer exited %d:\n%s", code, out)
	}
}
