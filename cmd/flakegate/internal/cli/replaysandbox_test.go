package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestReplayRepoRefusesSharedRepository: replay --repo builds the
// sandbox of the config with check's builder, so a sandbox.ro path that
// reaches the repository is refused (exit 2) before anything runs, as
// check refuses it.
func TestReplayRepoRefusesSharedRepository(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("bwrap is required under CI=true")
		}
		t.Skip("bwrap not installed")
	}
	repo := t.TempDir()
	files := map[string]string{
		"flakegate.yaml": "version: 1\nsandbox:\n  ro: [" + repo + "]\nproperties:\n  - path: prop.sh\n    seeds: [1]\n    run: [sh, \"{path}\"]\n    wall_budget: 5s\n",
		"prop.sh":        "echo ran\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(repo, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "c"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_NOSYSTEM=1", "HOME="+repo)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	for _, args := range [][]string{
		{"replay", "--repo", repo, "--rev", "HEAD", "--property", "prop.sh", "--seed", "1"},
		{"check", "--base", "HEAD", "--candidate", "HEAD", "--out", filepath.Join(t.TempDir(), "out")},
	} {
		t.Run(args[0], func(t *testing.T) {
			t.Chdir(repo)
			out, errOut, code := runCLI(t, "", args...)
			if code != ExitUsage || !strings.Contains(errOut, "sandbox.ro[0]: "+repo+" overlaps") {
				t.Fatalf("exit %d, want %d refusing sandbox.ro[0]\nstdout: %s\nstderr: %s", code, ExitUsage, out, errOut)
			}
			if strings.Contains(out, "ran") {
				t.Errorf("the command ran: %s", out)
			}
		})
	}
}
