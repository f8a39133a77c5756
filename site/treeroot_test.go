package site

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/flakegate/flakegate/git"
)

// TestOwnFolder: the tmpfs folder of the trees must be the user's own,
// mode 0700, no symlink; anything else keeps the trees on disk.
func TestOwnFolder(t *testing.T) {
	dir := t.TempDir()
	own := filepath.Join(dir, "own")
	os.Mkdir(own, 0o700)
	if why := ownFolder(own); why != "" {
		t.Fatalf("own folder refused: %s", why)
	}
	wide := filepath.Join(dir, "wide")
	os.Mkdir(wide, 0o700)
	os.Chmod(wide, 0o755)
	if why := ownFolder(wide); !strings.Contains(why, "others may reach it") {
		t.Fatalf("a folder of mode 0755: %q", why)
	}
	link := filepath.Join(dir, "link")
	os.Symlink(own, link)
	if why := ownFolder(link); !strings.Contains(why, "not a folder") {
		t.Fatalf("a symlink to the user's folder: %q", why)
	}
	if os.Geteuid() == 0 {
		other := filepath.Join(dir, "other")
		os.Mkdir(other, 0o700)
		os.Chown(other, 61599, 61599)
		if why := ownFolder(other); !strings.Contains(why, "another user") {
			t.Fatalf("another user's folder: %q", why)
		}
	}
}

// TestDropOrphans: a repository's folder on the tmpfs goes when its
// repository is gone; one whose repository is there, or without a mark,
// stays.
func TestDropOrphans(t *testing.T) {
	user, repo := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(repo, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
	for name, common := range map[string]string{"live": repo, "gone": filepath.Join(repo, "no-such")} {
		os.MkdirAll(filepath.Join(user, name, "worktrees", "base-0"), 0o700)
		os.WriteFile(filepath.Join(user, name, repoMark), []byte(common+"\n"), 0o600)
	}
	os.MkdirAll(filepath.Join(user, "unmarked"), 0o700)
	dropOrphans(user)
	for name, want := range map[string]bool{"live": true, "gone": false, "unmarked": true} {
		if _, err := os.Stat(filepath.Join(user, name)); (err == nil) != want {
			t.Errorf("%s: present %v, want %v", name, err == nil, want)
		}
	}
}

// TestCheckoutSizeKept: the base's checkout size is asked of git once
// and kept per base commit; a kept line is what later checks use.
func TestCheckoutSizeKept(t *testing.T) {
	dir := t.TempDir()
	run := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run("init", "-q")
	os.WriteFile(filepath.Join(dir, "a"), []byte("a"), 0o644)
	run("add", "a")
	run("commit", "-qm", "c")
	c := &repo{git: &git.Client{Dir: dir}, common: filepath.Join(dir, ".git"), baseSHA: run("rev-parse", "HEAD")}
	os.MkdirAll(filepath.Join(c.common, "flakegate", "worktrees"), 0o755)
	page := int64(os.Getpagesize())
	if n, err := c.checkoutSize(context.Background()); err != nil || n != page {
		t.Fatalf("size %d, %v; want %d", n, err, page)
	}
	file := filepath.Join(c.common, "flakegate", "worktrees", "sizes")
	b, _ := os.ReadFile(file)
	want := c.baseSHA + " " + strconv.FormatInt(page, 10) + " " + strconv.FormatInt(page, 10)
	if strings.TrimSpace(string(b)) != want {
		t.Fatalf("kept %q, want %q", b, want)
	}
	os.WriteFile(file, []byte(c.baseSHA+" "+strconv.FormatInt(page, 10)+" 12345\n"), 0o600)
	if n, _ := c.checkoutSize(context.Background()); n != 12345 {
		t.Fatalf("the kept size was not used: %d", n)
	}
}
