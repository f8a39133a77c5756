package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/internal/golden"
)

// The goldens of what people read: the default (not --json) output of a
// real check, of freeze list, and of errors. Refresh them with
// `go test ./cmd/flakegate/internal/cli -run Golden -update` and read the diff.

// checkRepo is a small repository whose candidate earns one label per
// property, each decided without timing luck: PASS, PROPERTY, INCOMPLETE
// (a crash), BUDGET (a hang), FIXTURE and CONTAMINATED.
var checkRepoBase = map[string]string{
	"flakegate.yaml": `version: 1
retry_cap: 1
workers: 1
properties:
  - {path: props/pass.sh, fixture: fixtures/words.txt, seeds: [1], run: [sh, "{path}", "{seed}"], wall_budget: 10s}
  - {path: props/sorted.sh, fixture: fixtures/words.txt, seeds: [7], run: [sh, "{path}", "{seed}"], wall_budget: 10s}
  - {path: props/crash.sh, fixture: fixtures/words.txt, seeds: [5], run: [sh, "{path}", "{seed}"], wall_budget: 10s}
  - {path: props/hang.sh, fixture: fixtures/words.txt, seeds: [3], run: [sh, "{path}", "{seed}"], wall_budget: 1s}
  - {path: props/limits.sh, fixture: fixtures/limits.txt, seeds: [9], run: [sh, "{path}", "{seed}"], wall_budget: 10s}
  - {path: props/oracle.sh, fixture: fixtures/words.txt, seeds: [11], run: [sh, "{path}", "{seed}"], wall_budget: 10s}
`,
	"pytest.ini":          "",
	"src/lib.sh":          "sorted=yes\ncrash=no\nhang=no\noracle=kept\n",
	"fixtures/words.txt":  "alpha\nbeta\n",
	"fixtures/limits.txt": "10\n",
	"props/pass.sh":       "exit 0\n",
	"props/sorted.sh":     ". ./src/lib.sh\n[ \"$sorted\" = yes ] || { echo \"seed $1: not sorted\"; exit 1; }\n",
	"props/crash.sh":      ". ./src/lib.sh\n[ \"$crash\" = yes ] && exit 3\nexit 0\n",
	"props/hang.sh":       ". ./src/lib.sh\n[ \"$hang\" = yes ] && sleep 30\nexit 0\n",
	"props/limits.sh":     "exit 0\n",
	"props/oracle.sh":     ". ./src/lib.sh\n[ \"$oracle\" = kept ] || exit 1\n",
}

var checkRepoCandidate = map[string]string{
	"src/lib.sh":          "sorted=no\ncrash=yes\nhang=yes\noracle=gone\n",
	"fixtures/limits.txt": "20\n",
	"props/oracle.sh":     "exit 0 # the candidate edits its own oracle\n",
}

// commitFiles writes files into dir and commits them.
func commitFiles(t *testing.T, dir, msg string, files map[string]string) string {
	t.Helper()
	for name, body := range files {
		writeFile(t, filepath.Join(dir, name), []byte(body))
	}
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", msg)
	return gitIn(t, dir, "rev-parse", "HEAD")
}

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// normalizer replaces what changes from run to run (folders, commit
// hashes, durations) with fixed words.
type normalizer struct{ pairs []string }

func (n *normalizer) add(old, new string) {
	n.pairs = append(n.pairs, old, new)
	if real, err := filepath.EvalSymlinks(old); err == nil && real != old {
		n.pairs = append(n.pairs, real, new)
	}
}

var durationRe = regexp.MustCompile(`\b\d+(\.\d+)?(ms|s)\b`)

// treesRe is the line that says how attempt trees are kept fresh: an
// overlay where the machine allows one (root), else reset and clean.
var treesRe = regexp.MustCompile(`(?m)^note: attempt trees: .*$`)

// sweptRe is the line of a check that removed overlay folders a killed
// check left in the shared temporary folder (another test's, here).
var sweptRe = regexp.MustCompile(`(?m)^note: (removed \d+ overlay folders|sandbox:) .*\n`)

func (n *normalizer) apply(s string) string {
	// At one position the pair added first wins: add a full hash before
	// its prefix, a folder before its parent.
	r := strings.NewReplacer(n.pairs...)
	s = treesRe.ReplaceAllString(sweptRe.ReplaceAllString(r.Replace(s), ""), "note: attempt trees: MODE")
	return durationRe.ReplaceAllString(s, "T")
}

func TestCheckTextGolden(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a real check")
	}
	dir := t.TempDir()
	repo := filepath.Join(dir, "repo")
	out := filepath.Join(dir, "out")
	gitIn(t, dir, "init", "-q", "-b", "main", repo)
	base := commitFiles(t, repo, "base", checkRepoBase)
	cand := commitFiles(t, repo, "candidate", checkRepoCandidate)

	r := fg(t, repo, "check", "--base", "main~1", "--out", out)
	if r.code != ExitReject {
		t.Fatalf("exit %d, want %d (a reject)\nstdout: %s\nstderr: %s", r.code, ExitReject, r.out, r.errOut)
	}
	var n normalizer
	n.add(out, "$OUT")
	n.add(repo, "$REPO")
	n.add(base, "$BASE")
	n.add(cand, "$CANDIDATE")
	n.add(base[:12], "$BASE")
	n.add(cand[:12], "$CANDIDATE")
	golden.Assert(t, "check-text-stdout.golden", []byte(n.apply(r.out)))
	golden.Assert(t, "check-text-stderr.golden", []byte(n.apply(r.errOut)))
}

// TestErrorGolden pins the Error:/Try: lines of representative failures
// and their exit codes.
func TestErrorGolden(t *testing.T) {
	dir := t.TempDir()
	repo := filepath.Join(dir, "repo")
	gitIn(t, dir, "init", "-q", "-b", "main", repo)
	head := commitFiles(t, repo, "no config", map[string]string{"README": "no gate here\n"})
	writeFile(t, filepath.Join(dir, "garbage.json"), []byte(`{"seed": 14`))
	if err := os.Mkdir(filepath.Join(dir, "records"), 0o755); err != nil {
		t.Fatal(err)
	}
	var n normalizer
	n.add(dir, "$TMP")
	n.add(head, "$HEAD")
	n.add(head[:12], "$HEAD")

	var b strings.Builder
	for _, args := range [][]string{
		{"check", "--base", "HEAD"},                   // no flakegate.yaml at the base
		{"check", "--base", "no-such-branch"},         // unknown revision
		{"check", "--base", "HEAD", "--retries", "3"}, // bad flag
		{"frobnicate"}, // unknown command
		{"verify", filepath.Join(dir, "missing.json")}, // unreadable record
		{"verify", filepath.Join(dir, "garbage.json")}, // not a record
		{"classify", filepath.Join(dir, "records")},    // a folder
		{"freeze", "grant", "--record", filepath.Join(dir, "missing.json"), "--owner", "alice", "--ledger", filepath.Join(dir, "ledger")},
		{"freeze", "grant", "--record", filepath.Join(dir, "garbage.json"), "--owner", "", "--ledger", filepath.Join(dir, "ledger")},
		{"report", "--junit", "j.xml"},
		{"replay", "--workdir", repo, "--seed", "1", "--expect-fixture-sha256", "abc"},
	} {
		r := fg(t, repo, args...)
		if r.code != ExitUsage || r.out != "" {
			t.Errorf("flakegate %s: exit %d, stdout %q; want exit %d and nothing on stdout", strings.Join(args, " "), r.code, r.out, ExitUsage)
		}
		b.WriteString("$ flakegate " + n.apply(shellLine(args)) + "\n")
		b.WriteString(n.apply(r.errOut))
		fmt.Fprintf(&b, "exit %d\n\n", r.code)
	}
	golden.Assert(t, "errors.golden", []byte(b.String()))
}

// shellLine writes args as a shell would need them: an empty one quoted.
func shellLine(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if a == "" {
			a = "''"
		}
		q[i] = a
	}
	return strings.Join(q, " ")
}

// TestCheckJSONReproduceOnStderr: with --json stdout is the summary, and
// stderr still carries the command that replays each reject.
func TestCheckJSONReproduceOnStderr(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a real check")
	}
	dir := t.TempDir()
	repo := filepath.Join(dir, "repo")
	gitIn(t, dir, "init", "-q", "-b", "main", repo)
	commitFiles(t, repo, "base", checkRepoBase)
	commitFiles(t, repo, "candidate", checkRepoCandidate)
	r := fg(t, repo, "check", "--base", "main~1", "--out", filepath.Join(dir, "out"), "--json")
	if r.code != ExitReject {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.code, r.out, r.errOut)
	}
	var sum flakegate.Summary
	if err := json.Unmarshal([]byte(r.out), &sum); err != nil {
		t.Fatalf("stdout is not one summary: %v\n%s", err, r.out)
	}
	n := 0
	for _, res := range sum.Results {
		if res.Label == flakegate.Pass {
			continue
		}
		n++
		want := "reproduce " + res.ID() + " seed " + res.Seed.String() + " (" + string(res.Label) + "): " + res.Reproduce + "\n"
		if res.Reproduce == "" || !strings.Contains(r.errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.errOut)
		}
	}
	if n == 0 {
		t.Fatal("no reject to reproduce")
	}
}
