package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestReplayRepo replays a seed of a named property at a commit, in a
// checkout of its own, with the command of the config at --config-rev.
func TestReplayRepo(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end; run without -short")
	}
	repo := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_NOSYSTEM=1", "HOME="+repo)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	commit := func(files map[string]string) string {
		t.Helper()
		for name, content := range files {
			p := filepath.Join(repo, name)
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		git("add", "-A")
		git("commit", "-q", "-m", "c")
		return git("rev-parse", "HEAD")
	}
	cfg := func(marker string) string {
		return `version: 1
properties:
  - path: prop.sh
    name: ` + marker + `
    seeds: [1]
    run: [sh, "{path}", "{name}", "{seed}"]
    wall_budget: 5s
    pass_marker: "^ok [0-9]+$"
`
	}
	git("init", "-q", "-b", "main")
	// The base: the property checks that the value file says "good".
	base := commit(map[string]string{
		"flakegate.yaml": cfg("alpha"),
		"prop.sh":        "grep -q good value.txt || { echo \"bad value for $1 seed $2\"; exit 1; }\necho \"ok $2\"\n",
		"value.txt":      "good\n",
	})
	bad := commit(map[string]string{"value.txt": "broken\n"})
	// The working tree moves on: the replay never reads it.
	commit(map[string]string{"value.txt": "good\n", "flakegate.yaml": strings.Replace(cfg("alpha"), "sh,", "false,", 1)})

	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		out    string
		errOut string
	}{
		{"base passes", []string{"--rev", base, "--property", "prop.sh", "--name", "alpha", "--seed", "7"}, 0, "ok 7", "replay: pass"},
		{"bad commit fails", []string{"--rev", bad, "--config-rev", base, "--property", "prop.sh", "--name", "alpha", "--seed", "7"}, 1, "bad value for alpha seed 7", "replay: fail"},
		{"the newest config's command is not used", []string{"--rev", bad, "--config-rev", base, "--property", "./prop.sh", "--name", "alpha", "--seed", "3"}, 1, "", "command from " + base[:12]},
		{"unknown test", []string{"--rev", base, "--property", "prop.sh", "--name", "beta", "--seed", "1"}, 2, "", "no property prop.sh::beta"},
		{"unknown revision", []string{"--rev", "nosuchrev", "--property", "prop.sh", "--seed", "1"}, 2, "", "nosuchrev"},
		{"a command is not allowed", []string{"--rev", base, "--property", "prop.sh", "--seed", "1", "--", "true"}, 2, "", "config gives the command"},
		{"no seed", []string{"--rev", base, "--property", "prop.sh"}, 2, "", "--seed are required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runCLI(t, "", append([]string{"replay", "--repo", repo}, tc.args...)...)
			if code != tc.code || !strings.Contains(out, tc.out) || !strings.Contains(errOut, tc.errOut) {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, out, errOut)
			}
		})
	}
	if out := git("worktree", "list"); strings.Count(out, "\n") != 0 {
		t.Errorf("replay left worktrees behind:\n%s", out)
	}
}
