package cli

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/filestore"
	"github.com/flakegate/flakegate/internal/golden"
	"github.com/flakegate/flakegate/storetest"
)

// The freeze tests run flakegate as real processes: the test binary re-execs
// itself into TestFreezeHelperProcess, which runs Main with the arguments
// after "--". With FLAKEGATE_FREEZE_LOOP=N it runs them N times in one
// process and prints one exit code per line.

const (
	helperEnv = "FLAKEGATE_FREEZE_HELPER"
	loopEnv   = "FLAKEGATE_FREEZE_LOOP"
)

func TestFreezeHelperProcess(t *testing.T) {
	if os.Getenv(helperEnv) != "1" {
		t.Skip("not a helper process")
	}
	args := os.Args
	for i, a := range args {
		if a == "--" {
			args = args[i+1:]
			break
		}
	}
	n, _ := strconv.Atoi(os.Getenv(loopEnv))
	if n < 1 {
		os.Exit(Main(args, os.Stdin, os.Stdout, os.Stderr))
	}
	for range n {
		fmt.Println(Main(args, os.Stdin, &bytes.Buffer{}, os.Stderr))
	}
	os.Exit(0)
}

// flakegateCmd returns the process that runs flakegate with args in dir.
func flakegateCmd(dir string, env []string, args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestFreezeHelperProcess$", "--"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), helperEnv+"=1", "FLAKEGATE_LEDGER=")
	cmd.Env = append(cmd.Env, env...)
	return cmd
}

type result struct {
	out, errOut string
	code        int
}

// fg runs flakegate as a process in dir and waits for it.
func fg(t *testing.T, dir string, args ...string) result {
	t.Helper()
	cmd := flakegateCmd(dir, nil, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run flakegate %v: %v", args, err)
	}
	return result{out.String(), errOut.String(), code}
}

// fgIn runs flakegate in this process, for tests that name the ledger
// with --ledger and need no working directory of their own.
func fgIn(t *testing.T, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Main(args, strings.NewReader(""), &out, &errOut)
	return result{out.String(), errOut.String(), code}
}

func wantExit(t *testing.T, r result, code int, args ...string) {
	t.Helper()
	if r.code != code {
		t.Fatalf("flakegate %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, code, r.out, r.errOut)
	}
}

const (
	frozenProperty = "tests/props/test_retry_budget.py"
	fixtureDigest  = "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"
)

// propertyBytes is the property file; its sha256 is the record's
// property_sha256.
var propertyBytes = []byte("def test_retry_budget(): pass\n")

func propertySHA() string {
	sum := sha256.Sum256(propertyBytes)
	return hex.EncodeToString(sum[:])
}

// runRecord returns a SCHEDULER record for seed, changed by the key/value
// pairs in change (JSON value text).
func runRecord(seed, runID string, change ...string) []byte {
	rec := map[string]json.RawMessage{
		"run_id": json.RawMessage(strconv.Quote(runID)), "seed": json.RawMessage(seed),
		"property_path": json.RawMessage(strconv.Quote(frozenProperty)), "property_sha256": json.RawMessage(strconv.Quote(propertySHA())),
		"fixture_sha256": json.RawMessage(strconv.Quote(fixtureDigest)), "base_fixture_sha256": json.RawMessage(strconv.Quote(fixtureDigest)),
		"diff_paths": json.RawMessage(`["src/retry.py"]`), "candidate_result": json.RawMessage(`"fail"`),
		"base_seed_result": json.RawMessage(`"pass"`), "retry_results": json.RawMessage(`["fail","pass"]`),
		"retry_cap": json.RawMessage(`2`), "budget_ok": json.RawMessage(`true`), "transcript_complete": json.RawMessage(`true`),
	}
	for i := 0; i+1 < len(change); i += 2 {
		rec[change[i]] = json.RawMessage(change[i+1])
	}
	b, _ := json.MarshalIndent(rec, "", "  ")
	return append(b, '\n')
}

func writeFile(t *testing.T, path string, data []byte) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// gitRepo makes a repository holding the property file.
func gitRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, frozenProperty), propertyBytes)
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

func auditEvents(t *testing.T, ledgerDir string) []flakegate.AuditEvent {
	t.Helper()
	s, err := filestore.Open(ledgerDir)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := s.AuditLines(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := flakegate.VerifyAuditChain(lines); err != nil {
		t.Fatalf("audit chain: %v", err)
	}
	var es []flakegate.AuditEvent
	for _, l := range lines {
		e, err := flakegate.ParseAuditLine(l)
		if err != nil {
			t.Fatal(err)
		}
		es = append(es, e)
	}
	return es
}

func actionList(es []flakegate.AuditEvent) string {
	var out []string
	for _, e := range es {
		out = append(out, fmt.Sprintf("%s:%d", e.Action, e.RunsLeft))
	}
	return strings.Join(out, " ")
}

// TestFreezeLifecycle: a SCHEDULER record is granted in a real repository
// (default ledger under .git/flakegate), skipped N times counting down,
// deleted at zero, and then not skippable.
func TestFreezeLifecycle(t *testing.T) {
	repo := gitRepo(t)
	rec := writeFile(t, filepath.Join(t.TempDir(), "run.json"), runRecord("1402", "run-1"))
	triple := []string{"--property", frozenProperty, "--seed", "1402", "--fixture-sha256", fixtureDigest}

	r := fg(t, repo, "freeze", "grant", "--record", rec, "--owner", "alice", "--runs", "3")
	wantExit(t, r, 0, "freeze grant")
	if !strings.Contains(r.out, "seed 1402") || !strings.Contains(r.out, "for 3 runs (owner alice") {
		t.Fatalf("grant printed %q", r.out)
	}
	r = fg(t, repo, "freeze", "list", "--json")
	wantExit(t, r, 0, "freeze list --json")
	var entries []map[string]any
	if err := json.Unmarshal([]byte(r.out), &entries); err != nil || len(entries) != 1 {
		t.Fatalf("freeze list --json: %v\n%s", err, r.out)
	}
	wantSHA, _ := flakegate.RecordSHA256(runRecord("1402", "run-1"))
	for key, want := range map[string]any{"property_path": frozenProperty, "seed": 1402.0, "fixture_sha256": fixtureDigest,
		"expires_after_runs": 3.0, "owner": "alice", "record_sha256": wantSHA, "label": "SCHEDULER"} {
		if entries[0][key] != want {
			t.Fatalf("freeze list --json: %s is %v, want %v", key, entries[0][key], want)
		}
	}
	// The other seed of the property is not frozen.
	other := []string{"freeze", "consume", "--property", frozenProperty, "--seed", "1403", "--fixture-sha256", fixtureDigest}
	wantExit(t, fg(t, repo, other...), 1, other...)
	// The property digest comes from the working tree, here in a subfolder.
	sub := filepath.Join(repo, "tests")
	for left := 2; left >= 0; left-- {
		r = fg(t, sub, append([]string{"freeze", "consume"}, triple...)...)
		wantExit(t, r, 0, "freeze consume")
		if !strings.Contains(r.out, fmt.Sprintf("runs left: %d", left)) {
			t.Fatalf("consume printed %q, want %d runs left", r.out, left)
		}
	}
	r = fg(t, repo, append([]string{"freeze", "consume", "--json"}, triple...)...)
	wantExit(t, r, 1, "freeze consume after expiry")
	var d flakegate.SkipDecision
	if err := json.Unmarshal([]byte(r.out), &d); err != nil || d.Skipped || d.Voided {
		t.Fatalf("consume --json: %+v, %v", d, err)
	}
	r = fg(t, repo, "freeze", "list")
	wantExit(t, r, 0, "freeze list")
	if strings.TrimSpace(r.out) != "no freezes" {
		t.Fatalf("freeze list after expiry: %q", r.out)
	}
	wantExit(t, fg(t, repo, "freeze", "verify"), 0, "freeze verify")
	es := auditEvents(t, filepath.Join(repo, ".git", "flakegate"))
	if got, want := actionList(es), "grant:3 skip:2 skip:1 skip:0 expire:0"; got != want {
		t.Fatalf("audit log: %s, want %s", got, want)
	}
}

// TestFreezeVoids: a changed property file or a tampered stored record voids
// the freeze (exit 1, a void event); a changed fixture no longer matches.
func TestFreezeVoids(t *testing.T) {
	type testCase struct {
		name  string
		args  []string // consume flags after the triple's
		setup func(t *testing.T, ledger string, sha string)
		seed  string // "" = 1402
		fix   string // "" = fixtureDigest
		void  bool
		out   string
	}
	run := func(t *testing.T, tc testCase) {
		ledger := t.TempDir()
		raw := runRecord("1402", "run-1")
		sha, _ := flakegate.RecordSHA256(raw)
		rec := writeFile(t, filepath.Join(t.TempDir(), "run.json"), raw)
		wantExit(t, fgIn(t, "freeze", "grant", "--ledger", ledger, "--record", rec, "--owner", "alice"), 0, "grant")
		tc.setup(t, ledger, sha)
		seed, fix := "1402", fixtureDigest
		if tc.seed != "" {
			seed = tc.seed
		}
		if tc.fix != "" {
			fix = tc.fix
		}
		args := append([]string{"freeze", "consume", "--ledger", ledger, "--property", frozenProperty, "--seed", seed, "--fixture-sha256", fix}, tc.args...)
		r := fgIn(t, args...)
		wantExit(t, r, 1, args...)
		if !strings.Contains(r.out, tc.out) {
			t.Fatalf("consume printed %q, want %q", r.out, tc.out)
		}
		es := auditEvents(t, ledger)
		last := es[len(es)-1]
		if tc.void != (last.Action == flakegate.ActionVoid) {
			t.Fatalf("audit log: %s (void wanted: %v)", actionList(es), tc.void)
		}
		r = fgIn(t, "freeze", "list", "--ledger", ledger)
		if tc.void != strings.Contains(r.out, "no freezes") {
			t.Fatalf("freeze list after the consume: %q", r.out)
		}
	}
	prop := []string{"--property-sha256", propertySHA()}
	for _, tc := range []testCase{
		{"tampered record", prop, func(t *testing.T, ledger, sha string) {
			writeFile(t, filepath.Join(ledger, "records", sha+".json"), runRecord("1402", "run-1", "retry_results", `["pass"]`))
		}, "", "", true, "now hashes to"},
		{"record removed", prop, func(t *testing.T, ledger, sha string) {
			os.Remove(filepath.Join(ledger, "records", sha+".json"))
		}, "", "", true, "is missing"},
		{"property changed", []string{"--property-sha256", strings.Repeat("0", 64)}, func(*testing.T, string, string) {}, "", "", true, "the property file changed"},
		{"fixture changed", prop, func(*testing.T, string, string) {}, "", strings.Repeat("e", 64), false, "no freeze for this triple"},
		{"other seed", prop, func(*testing.T, string, string) {}, "1403", "", false, "no freeze for this triple"},
		{"a string seed", prop, func(*testing.T, string, string) {}, "nightly-1402", "", false, "no freeze for this triple"},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestFreezeVerifyCatchesHandEdits: extending a freeze or changing its
// owner by hand is caught by verify (exit 1), voided, and then verify
// passes again.
func TestFreezeVerifyCatchesHandEdits(t *testing.T) {
	type testCase struct {
		name, old, new, out string
	}
	run := func(t *testing.T, tc testCase) {
		ledger := t.TempDir()
		rec := writeFile(t, filepath.Join(t.TempDir(), "run.json"), runRecord("1402", "run-1"))
		wantExit(t, fgIn(t, "freeze", "grant", "--ledger", ledger, "--record", rec, "--owner", "alice", "--runs", "5"), 0, "grant")
		path := filepath.Join(ledger, filestore.LedgerFile)
		raw, _ := os.ReadFile(path)
		edited := strings.Replace(string(raw), tc.old, tc.new, 1)
		if edited == string(raw) {
			t.Fatalf("%q not in ledger.json:\n%s", tc.old, raw)
		}
		writeFile(t, path, []byte(edited))
		r := fgIn(t, "freeze", "verify", "--ledger", ledger)
		wantExit(t, r, 1, "freeze verify")
		if !strings.Contains(r.out, "void ") || !strings.Contains(r.out, tc.out) {
			t.Fatalf("verify printed %q, want a void with %q", r.out, tc.out)
		}
		wantExit(t, fgIn(t, "freeze", "verify", "--ledger", ledger), 0, "freeze verify again")
		if es := auditEvents(t, ledger); len(es) != 2 || es[1].Action != flakegate.ActionVoid || !strings.Contains(es[1].Reason, tc.out) {
			t.Fatalf("audit log: %s, want grant then void", actionList(es))
		}
	}
	for _, tc := range []testCase{
		{"extended", `"expires_after_runs": 5`, `"expires_after_runs": 100`, "expires_after_runs is 100 in the ledger but 5 in the audit log"},
		{"owner changed", `"owner": "alice"`, `"owner": "mallory"`, "owner is mallory in the ledger but alice in the audit log"},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestFreezeBadInput: each bad input gets a clear message and exit code,
// and nothing on disk changes (bytes compared before and after).
func TestFreezeBadInput(t *testing.T) {
	type testCase struct {
		name   string
		edit   func(ledgerJSON string) string // nil keeps the valid ledger
		args   []string                       // after "freeze SUB --ledger DIR"
		code   int
		errOut string // part of stderr
	}
	dir := t.TempDir()
	good := writeFile(t, filepath.Join(dir, "good.json"), runRecord("1402", "run-1"))
	property := writeFile(t, filepath.Join(dir, "property.json"), runRecord("1402", "run-2", "base_seed_result", `"fail"`))
	garbage := writeFile(t, filepath.Join(dir, "garbage.json"), []byte("{\"seed\": 14"))
	triple := []string{"--property", frozenProperty, "--seed", "1402", "--fixture-sha256", fixtureDigest}
	run := func(t *testing.T, tc testCase) {
		ledger := t.TempDir()
		var out, errOut bytes.Buffer
		if code := Main([]string{"freeze", "grant", "--ledger", ledger, "--record", good, "--owner", "alice", "--runs", "4"}, strings.NewReader(""), &out, &errOut); code != 0 {
			t.Fatalf("grant: exit %d: %s", code, errOut.String())
		}
		if tc.edit != nil {
			path := filepath.Join(ledger, filestore.LedgerFile)
			raw, _ := os.ReadFile(path)
			edited := tc.edit(string(raw))
			if edited == string(raw) {
				t.Fatal("the edit changed nothing")
			}
			writeFile(t, path, []byte(edited))
		}
		before := storetest.SnapshotDir(t, ledger)
		args := append([]string{"freeze", tc.args[0], "--ledger", ledger}, tc.args[1:]...)
		out.Reset()
		errOut.Reset()
		code := Main(args, strings.NewReader(""), &out, &errOut)
		if code != tc.code {
			t.Fatalf("flakegate %v: exit %d, want %d\nstdout: %s\nstderr: %s", args, code, tc.code, out.String(), errOut.String())
		}
		if !strings.Contains(errOut.String(), tc.errOut) || !strings.Contains(errOut.String(), "\nTry: ") {
			t.Fatalf("stderr %q, want %q and a Try: line", errOut.String(), tc.errOut)
		}
		if strings.Contains(errOut.String(), "goroutine ") || strings.Contains(errOut.String(), "panic") {
			t.Fatalf("a stack trace: %s", errOut.String())
		}
		after := storetest.SnapshotDir(t, ledger)
		if len(after) != len(before) {
			t.Fatalf("files changed: %d before, %d after", len(before), len(after))
		}
		for name, b := range before {
			if after[name] != b {
				t.Fatalf("%s changed:\nbefore %q\nafter  %q", name, b, after[name])
			}
		}
	}
	notJSON := func(string) string { return "this is { not json\n" }
	negative := func(s string) string {
		return strings.Replace(s, `"expires_after_runs": 4`, `"expires_after_runs": -4`, 1)
	}
	consume := append([]string{"consume", "--property-sha256", propertySHA()}, triple...)
	for _, tc := range []testCase{
		{"ledger not json: list", notJSON, []string{"list"}, 2, "ledger.json: not valid JSON at line 1"},
		{"ledger not json: grant", notJSON, []string{"grant", "--record", good, "--owner", "bob", "--replace"}, 2, "not valid JSON"},
		{"ledger not json: consume", notJSON, consume, 2, "not valid JSON"},
		{"ledger not json: revoke", notJSON, append([]string{"revoke", "--by", "bob"}, triple...), 2, "not valid JSON"},
		{"ledger not json: verify", notJSON, []string{"verify"}, 2, "not valid JSON"},
		{"negative count: consume", negative, consume, 2, "expires_after_runs is -4; runs left cannot be negative"},
		{"negative count: grant", negative, []string{"grant", "--record", good, "--owner", "bob", "--replace"}, 2, "runs left cannot be negative"},
		{"negative count: verify", negative, []string{"verify"}, 2, "runs left cannot be negative"},
		{"record path missing", nil, []string{"grant", "--record", filepath.Join(dir, "nope.json"), "--owner", "bob"}, 2, "no such record file"},
		{"record is PROPERTY", nil, []string{"grant", "--record", property, "--owner", "bob", "--replace"}, 1, "the record classifies PROPERTY"},
		{"record not json", nil, []string{"grant", "--record", garbage, "--owner", "bob", "--replace"}, 1, "classifies INCOMPLETE"},
		{"empty owner", nil, []string{"grant", "--record", good, "--owner", " ", "--replace"}, 2, "the owner is empty"},
		{"zero runs", nil, []string{"grant", "--record", good, "--owner", "bob", "--runs", "0", "--replace"}, 2, "runs is 0"},
		{"runs above the maximum", nil, []string{"grant", "--record", good, "--owner", "bob", "--runs", "101", "--replace"}, 2, "1 to 100 runs"},
		{"second freeze", nil, []string{"grant", "--record", good, "--owner", "bob"}, 2, "already has a freeze"},
		{"no record flag", nil, []string{"grant", "--owner", "bob"}, 2, "no record given"},
		// The domain's hints name no flag; the command adds its own.
		{"empty owner hint", nil, []string{"grant", "--record", good, "--owner", "", "--replace"}, 2, "Try: name the reviewer who answers for the freeze: --owner NAME"},
		{"runs hint", nil, []string{"grant", "--record", good, "--owner", "bob", "--runs", "0"}, 2, "Try: pass --runs N with 1 <= N <= 100"},
		{"second freeze hint", nil, []string{"grant", "--record", good, "--owner", "bob"}, 2, "Try: pass --replace to write the new freeze over it"},
		{"bad seed", nil, []string{"consume", "--property", frozenProperty, "--seed", "1 2", "--fixture-sha256", "f"}, 2, "seed"},
		{"missing fixture", nil, []string{"consume", "--property", frozenProperty, "--seed", "1402"}, 2, "--fixture-sha256 is required"},
		{"revoke without by", nil, append([]string{"revoke"}, triple...), 2, "--by is required"},
		{"revoke unknown", nil, []string{"revoke", "--by", "bob", "--property", frozenProperty, "--seed", "7", "--fixture-sha256", "f"}, 2, "no freeze for"},
		{"stray argument", nil, []string{"list", "extra"}, 2, "Error:"},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// readExitCodes reads the helper's loop output: one exit code per line.
func readExitCodes(t *testing.T, out string) []int {
	t.Helper()
	var codes []int
	for _, f := range strings.Fields(out) {
		n, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("helper output %q", out)
		}
		codes = append(codes, n)
	}
	return codes
}

// TestFreezeConcurrentConsume: 8 processes consume one freeze of 100 runs,
// 50 times each: exactly 100 skips succeed and the freeze is gone.
func TestFreezeConcurrentConsume(t *testing.T) {
	const procs, tries, runs = 8, 50, 100
	ledger := t.TempDir()
	rec := writeFile(t, filepath.Join(t.TempDir(), "run.json"), runRecord("1402", "run-1"))
	wantExit(t, fg(t, ".", "freeze", "grant", "--ledger", ledger, "--record", rec, "--owner", "alice", "--runs", strconv.Itoa(runs)), 0, "grant")
	args := []string{"freeze", "consume", "--ledger", ledger, "--property", frozenProperty, "--seed", "1402",
		"--fixture-sha256", fixtureDigest, "--property-sha256", propertySHA()}
	outs := make([]string, procs)
	errs := make([]error, procs)
	var wg sync.WaitGroup
	for i := range procs {
		wg.Go(func() {
			cmd := flakegateCmd(".", []string{fmt.Sprintf("%s=%d", loopEnv, tries), "USER=proc-" + strconv.Itoa(i)}, args...)
			var out, errOut bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errOut
			if err := cmd.Run(); err != nil {
				errs[i] = fmt.Errorf("process %d: %v: %s", i, err, errOut.String())
			}
			outs[i] = out.String()
		})
	}
	wg.Wait()
	skipped := 0
	for i := range procs {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		codes := readExitCodes(t, outs[i])
		if len(codes) != tries {
			t.Fatalf("process %d ran %d consumes, want %d", i, len(codes), tries)
		}
		for _, c := range codes {
			switch c {
			case 0:
				skipped++
			case 1:
			default:
				t.Fatalf("process %d: a consume exited %d", i, c)
			}
		}
	}
	if skipped != runs {
		t.Fatalf("%d skips succeeded, want exactly %d", skipped, runs)
	}
	es := auditEvents(t, ledger)
	skips := 0
	for _, e := range es {
		if e.Action == flakegate.ActionSkip {
			skips++
		}
	}
	if skips != runs || es[len(es)-1].Action != flakegate.ActionExpire || es[len(es)-2].RunsLeft != 0 {
		t.Fatalf("audit log: %d skips, ends %s; want %d skips then expire", skips, actionList(es[len(es)-2:]), runs)
	}
	r := fg(t, ".", "freeze", "list", "--json", "--ledger", ledger)
	if strings.TrimSpace(r.out) != "[]" {
		t.Fatalf("freeze list: %s, want no entry (0 runs left)", r.out)
	}
	wantExit(t, fg(t, ".", "freeze", "verify", "--ledger", ledger), 0, "freeze verify")
}

// TestFreezeCrashSafety kills grant and consume processes with SIGKILL at
// random moments; after every kill the ledger parses, verify passes, and
// every stored record hashes to its name.
func TestFreezeCrashSafety(t *testing.T) {
	cycles := 200
	if testing.Short() {
		cycles = 20
	}
	ledger := t.TempDir()
	dir := t.TempDir()
	var records []string
	for i := range 4 {
		records = append(records, writeFile(t, filepath.Join(dir, fmt.Sprintf("run-%d.json", i)), runRecord("1402", fmt.Sprintf("run-%d", i))))
	}
	consume := []string{"freeze", "consume", "--ledger", ledger, "--property", frozenProperty, "--seed", "1402",
		"--fixture-sha256", fixtureDigest, "--property-sha256", propertySHA()}
	rng := rand.New(rand.NewPCG(1, 2))
	killed := 0
	for i := range cycles {
		args := consume
		loops := "30"
		if i%2 == 0 {
			args = []string{"freeze", "grant", "--ledger", ledger, "--replace", "--owner", "alice",
				"--record", records[rng.IntN(len(records))], "--runs", strconv.Itoa(1 + rng.IntN(40))}
			loops = "10"
		}
		cmd := flakegateCmd(".", []string{loopEnv + "=" + loops}, args...)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Once the first call is done the process is busy in the loop;
		// the kill lands anywhere in the calls after it.
		bufio.NewReader(stdout).ReadString('\n')
		time.Sleep(time.Duration(rng.IntN(20_000)) * time.Microsecond)
		if cmd.Process.Signal(syscall.SIGKILL) == nil {
			killed++
		}
		io.Copy(io.Discard, stdout)
		cmd.Wait()
		checkLedgerIntact(t, ledger, i)
	}
	t.Logf("%d cycles, %d processes killed", cycles, killed)
	es := auditEvents(t, ledger)
	if len(es) == 0 {
		t.Fatal("no process got as far as a grant; the kills came too early to test anything")
	}
}

func checkLedgerIntact(t *testing.T, ledger string, cycle int) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(ledger, filestore.LedgerFile))
	if err == nil && !json.Valid(raw) {
		t.Fatalf("cycle %d: ledger.json does not parse:\n%s", cycle, raw)
	}
	var out, errOut bytes.Buffer
	if code := Main([]string{"freeze", "verify", "--ledger", ledger}, strings.NewReader(""), &out, &errOut); code != 0 {
		t.Fatalf("cycle %d: freeze verify exit %d\n%s%s", cycle, code, out.String(), errOut.String())
	}
	s, err := filestore.Open(ledger)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := s.ListFreezes(context.Background())
	if err != nil {
		t.Fatalf("cycle %d: %v", cycle, err)
	}
	for _, f := range fs {
		if err := f.Validate(); err != nil {
			t.Fatalf("cycle %d: a half-written entry: %v", cycle, err)
		}
	}
	err = s.EachRecord(context.Background(), func(sha string, raw []byte) error {
		if got, err := flakegate.RecordSHA256(raw); err != nil || got != sha {
			return fmt.Errorf("record %s hashes to %s (%v)", sha, got, err)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("cycle %d: %v", cycle, err)
	}
}

// TestFreezeListGolden pins what `freeze list` prints, as text and JSON.
func TestFreezeListGolden(t *testing.T) {
	ledger := t.TempDir()
	s, err := filestore.Open(ledger)
	if err != nil {
		t.Fatal(err)
	}
	a := storetest.Freeze("1402", 20)
	b := storetest.Freeze(`"nightly-3"`, 5)
	b.Owner = "Zoë <zoe@example.com>"
	for _, f := range []flakegate.Freeze{a, b} {
		if err := s.Grant(context.Background(), f, false); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ golden, flag string }{{"freeze-list.golden", ""}, {"freeze-list-json.golden", "--json"}} {
		args := []string{"freeze", "list", "--ledger", ledger}
		if tc.flag != "" {
			args = append(args, tc.flag)
		}
		r := fgIn(t, args...)
		wantExit(t, r, 0, args...)
		golden.Assert(t, tc.golden, []byte(r.out))
	}
	r := fgIn(t, "freeze", "list", "--ledger", t.TempDir(), "--json")
	if r.code != 0 || strings.TrimSpace(r.out) != "[]" {
		t.Fatalf("an empty ledger lists as %q (exit %d), want []", r.out, r.code)
	}
	r = fgIn(t, "freeze", "list", "--ledger", t.TempDir())
	if r.code != 0 || r.out != "no freezes\n" {
		t.Fatalf("an empty ledger lists as %q (exit %d), want \"no freezes\"", r.out, r.code)
	}
}
