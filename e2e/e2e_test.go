package e2e_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/internal/pgtest"
)

// flakegateBin is the binary the end-to-end tests run, built once.
var flakegateBin string

func TestMain(m *testing.M) {
	os.Exit(buildAndRun(m))
}

func buildAndRun(m *testing.M) int {
	flag.Parse()
	if testing.Short() {
		// Every test that runs the binary is end to end and skips under
		// -short: build nothing (a test that runs it anyway fails).
		flakegateBin = filepath.Join(os.TempDir(), "flakegate-not-built-under-short")
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "flakegate-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	defer os.RemoveAll(dir)
	defer removeUserCaches()
	_, self, _, _ := runtime.Caller(0)
	root := filepath.Dir(filepath.Dir(self))
	flakegateBin = filepath.Join(dir, "flakegate")
	args := []string{"build", "-o", flakegateBin}
	// The binary under test is built with the race detector only when
	// asked (FLAKEGATE_E2E_RACE=1): every sandboxed attempt re-executes it
	// as the sandbox helper, and a race-built helper per attempt made this
	// package take over 20 minutes on 2 cores. The check's concurrency is
	// still raced in-process by the CLI's tests (cmd/flakegate/internal/cli).
	if raceEnabled && os.Getenv("FLAKEGATE_E2E_RACE") == "1" {
		args = append(args, "-race")
	}
	cover, collect, err := coverBuild()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	defer collect()
	args = append(args, cover...)
	cmd := exec.Command("go", append(args, "./cmd/flakegate")...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building flakegate: %v\n%s", err, out)
		return 3
	}
	widenParallel()
	return m.Run()
}

// widenParallel lets one more parallel test run than there are cores,
// unless -test.parallel was given. Most of an end-to-end test's time is
// spent waiting on the processes it starts (git, a check's sandboxes,
// budgets running out), so two at a time on two cores left a core idle
// a third of the time. The tests that read the host's state while they
// run (attacks, isolation, mounts, free space, the tmpfs trees) stay
// serial: no parallel test runs beside them.
func widenParallel() {
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		flag.Set("test.parallel", strconv.Itoa(runtime.GOMAXPROCS(0)+1))
	}
}

// repo is a temporary git repository the tests commit into.
type repo struct {
	t     *testing.T
	dir   string
	state string // $FG_STATE of the property scripts
}

func newRepo(t *testing.T, files map[string]string) *repo {
	t.Helper()
	needBwrap(t) // every check runs its attempts in the sandbox
	r := &repo{t: t, dir: filepath.Join(t.TempDir(), "repo"), state: t.TempDir()}
	if err := os.MkdirAll(r.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	r.git("init", "-q", "-b", "main")
	r.commit("base", files)
	r.git("tag", "base")
	return r
}

func (r *repo) git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = r.dir
	cmd.Env = append(os.Environ(),
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com",
		"GIT_CONFIG_NOSYSTEM=1", "HOME="+r.dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// commit writes files ("" deletes one) and commits them.
func (r *repo) commit(msg string, files map[string]string) string {
	r.t.Helper()
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		p := filepath.Join(r.dir, filepath.FromSlash(name))
		if files[name] == "" {
			if err := os.RemoveAll(p); err != nil {
				r.t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			r.t.Fatal(err)
		}
		if target, ok := strings.CutPrefix(files[name], "symlink:"); ok {
			os.Remove(p)
			if err := os.Symlink(target, p); err != nil {
				r.t.Fatal(err)
			}
			continue
		}
		// @FG_STATE@ is the folder the property scripts keep state in,
		// which a config shares with the sandbox (sandbox.rw).
		if err := os.WriteFile(p, []byte(strings.ReplaceAll(files[name], "@FG_STATE@", r.state)), 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
	r.git("add", "-A")
	r.git("commit", "-q", "--allow-empty", "-m", msg)
	return r.git("rev-parse", "HEAD")
}

// candidate commits files on a new branch off base and tags it.
func (r *repo) candidate(tag string, files map[string]string) string {
	r.t.Helper()
	r.git("checkout", "-q", "--detach", "base")
	sha := r.commit(tag, files)
	r.git("tag", tag)
	return sha
}

// checkRun is one run of the binary.
type checkRun struct {
	code           int
	stdout, stderr string
	summary        *flakegate.Summary
	started, ended time.Time // when the process started and ended
}

// check runs `flakegate check --json` plus args in the repo.
func (r *repo) check(args ...string) *checkRun {
	r.t.Helper()
	return r.checkEnv(nil, args...)
}

// checkEnv is check with extra environment variables.
func (r *repo) checkEnv(env []string, args ...string) *checkRun {
	r.t.Helper()
	cmd := exec.Command(flakegateBin, append([]string{"check", "--json"}, args...)...)
	cmd.Dir = r.dir
	cmd.Env = append(append(cleanEnv(), "FG_STATE="+r.state), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	started := time.Now()
	err := cmd.Run()
	cr := &checkRun{stdout: stdout.String(), stderr: stderr.String(), started: started, ended: time.Now()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		cr.code = ee.ExitCode()
	default:
		r.t.Fatalf("running flakegate: %v", err)
	}
	if cr.code <= 1 {
		cr.summary = new(flakegate.Summary)
		if err := json.Unmarshal(stdout.Bytes(), cr.summary); err != nil {
			r.t.Fatalf("exit %d, stdout is not a summary: %v\nstdout:\n%s\nstderr:\n%s", cr.code, err, cr.stdout, cr.stderr)
		}
	}
	return cr
}

// cleanEnv is the test's environment without variables that would point
// flakegate or git elsewhere.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if name == "FLAKEGATE_LEDGER" || name == "GITHUB_STEP_SUMMARY" || strings.HasPrefix(name, "GIT_") {
			continue
		}
		env = append(env, kv)
	}
	// PostgreSQL ledgers authenticate their rows with this key; a test
	// of a ledger without one sets it to "".
	return append(env, pgtest.EnvLedgerKey+"="+pgtest.LedgerKey)
}

func (cr *checkRun) labels() []string {
	var out []string
	for _, r := range cr.summary.Results {
		l := string(r.Label)
		if r.Skipped {
			l += "(skipped)"
		}
		out = append(out, l)
	}
	return out
}

// record reads the run record of result i.
func (cr *checkRun) record(t *testing.T, i int) *flakegate.RunRecord {
	t.Helper()
	raw, err := os.ReadFile(cr.summary.Results[i].Record)
	if err != nil {
		t.Fatal(err)
	}
	var rec flakegate.RunRecord
	if err := json.Unmarshal(raw, &rec); err != nil {
		t.Fatal(err)
	}
	return &rec
}

func (cr *checkRun) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", cr.code, cr.stdout, cr.stderr)
}

// runExit runs cmd and returns its exit code and its output, stdout and
// stderr together; a command that does not start fails the test.
func runExit(t *testing.T, cmd *exec.Cmd) (int, string) {
	t.Helper()
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, string(out)
	case errors.As(err, &ee):
		return ee.ExitCode(), string(out)
	}
	t.Fatalf("running %s: %v", strings.Join(cmd.Args, " "), err)
	return 0, ""
}
