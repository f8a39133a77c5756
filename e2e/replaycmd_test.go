package e2e_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/check"
	fgconfig "github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/replay"
)

// TestReplayRefusesWhatCheckRefuses: a replay builds its sandbox with
// check's builder, so a sandbox block whose shared paths reach the gate's
// own state (the repository, its git folder, the ledger) or name an rw
// folder that does not exist is refused by both, with the same message.
// Both stop before bwrap runs, so a stand-in bwrap path is enough.
func TestReplayRefusesWhatCheckRefuses(t *testing.T) {
	t.Parallel()
	repo := filepath.Join(t.TempDir(), "repo")
	ledger := t.TempDir()
	outside, shared := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(repo, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		cmd.Env = append(cleanEnv(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_NOSYSTEM=1", "HOME="+repo)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q", "-b", "main")
	common := filepath.Join(repo, ".git")
	errStore := errors.New("the shared paths passed: the check went on to open its store")

	type testCase struct {
		name   string
		ro, rw []string
		refuse string // the message both give; "" when neither refuses
	}
	run := func(t *testing.T, tc testCase) {
		yaml := "version: 1\nsandbox:\n"
		for _, l := range []struct {
			key   string
			paths []string
		}{{"ro", tc.ro}, {"rw", tc.rw}} {
			if len(l.paths) > 0 {
				yaml += "  " + l.key + ": [" + strings.Join(l.paths, ", ") + "]\n"
			}
		}
		yaml += "properties:\n  - path: prop.sh\n    seeds: [1]\n    run: [sh, \"{path}\"]\n    wall_budget: 5s\n"
		if err := os.WriteFile(filepath.Join(repo, "prop.sh"), []byte("true\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(repo, "flakegate.yaml"), []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		git("add", "-A")
		git("commit", "-q", "--allow-empty", "-m", tc.name)

		_, checkErr := check.Run(t.Context(), check.Options{Dir: repo, Base: "HEAD", OutDir: filepath.Join(t.TempDir(), "out"),
			LedgerPath: ledger, Env: cleanEnv(), Bwrap: "/bin/false",
			OpenStore: func(context.Context, string) (flakegate.Store, error) { return nil, errStore }})
		cfg, err := fgconfig.Load([]byte(yaml), "flakegate.yaml")
		if err != nil {
			t.Fatal(err)
		}
		// The replay's checkout is a folder of its own, as --repo makes it.
		_, replayErr := replay.New(t.Context(), replay.Options{Dir: t.TempDir(), Argv: []string{"true"},
			Sandbox: cfg.Sandbox, ConfigPath: "flakegate.yaml", Repo: repo, LedgerPath: ledger, Env: cleanEnv(), Bwrap: "/bin/false"})

		if tc.refuse == "" {
			if !errors.Is(checkErr, errStore) {
				t.Errorf("check refused: %v", checkErr)
			}
			if replayErr != nil && (strings.Contains(replayErr.Error(), "overlaps") || strings.Contains(replayErr.Error(), "not a folder")) {
				t.Errorf("replay refused the shared paths: %v", replayErr)
			}
			return
		}
		for _, side := range []struct {
			name string
			err  error
		}{{"check", checkErr}, {"replay", replayErr}} {
			if flakegate.ErrorCode(side.err) != flakegate.EINVALID || !strings.Contains(side.err.Error(), tc.refuse) {
				t.Errorf("%s: %v, want EINVALID saying %q", side.name, side.err, tc.refuse)
			}
		}
	}
	for _, tc := range []testCase{
		{name: "ro is the repository", ro: []string{repo}, refuse: "sandbox.ro[0]: " + repo + " overlaps"},
		{name: "ro inside the repository", ro: []string{filepath.Join(repo, "sub")}, refuse: "sandbox.ro[0]: " + filepath.Join(repo, "sub") + " overlaps"},
		{name: "ro is the git folder", ro: []string{outside, common}, refuse: "sandbox.ro[1]: " + common + " overlaps"},
		{name: "rw holds the repository", rw: []string{filepath.Dir(repo)}, refuse: "sandbox.rw[0]: " + filepath.Dir(repo) + " overlaps"},
		{name: "rw is the ledger", rw: []string{ledger}, refuse: "sandbox.rw[0]: " + ledger + " overlaps"},
		{name: "rw is no folder", rw: []string{filepath.Join(outside, "missing")}, refuse: "sandbox.rw[0]: " + filepath.Join(outside, "missing") + " is not a folder"},
		{name: "a folder of its own is shared", ro: []string{outside}, rw: []string{shared}},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}
