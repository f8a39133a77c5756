package e2e_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// treesDir is the folder of the check's worktrees of the repository at
// repo: <repo>/.git/flakegate/worktrees, or, where the check put them on
// a tmpfs (a check whose attempts' page cache is swept: no memory
// cgroup), the repository's folder under /dev/shm/flakegate-UID, found by
// the mark that names the repository's git folder.
func treesDir(t *testing.T, repo string) string {
	t.Helper()
	common := filepath.Join(repo, ".git")
	if r, err := filepath.EvalSymlinks(common); err == nil {
		common = r
	}
	marks, _ := filepath.Glob("/dev/shm/flakegate-*/*/repository")
	for _, m := range marks {
		b, err := os.ReadFile(m)
		if err != nil {
			continue
		}
		got := strings.TrimSpace(string(b))
		if r, err := filepath.EvalSymlinks(got); err == nil {
			got = r
		}
		if got == common {
			return filepath.Join(filepath.Dir(m), "worktrees")
		}
	}
	return filepath.Join(repo, ".git", "flakegate", "worktrees")
}
