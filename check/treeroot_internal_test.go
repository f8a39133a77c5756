package check

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flakegate/flakegate/git"
)

// TestMirrorTree: the Go caches' mirror copies what is new or changed,
// keeps what did not change, removes what the source lost, keeps
// symlinks as links and gives read-only folders their modes last.
func TestMirrorTree(t *testing.T) {
	src, dst := t.TempDir(), filepath.Join(t.TempDir(), "m")
	write := func(rel, body string) {
		p := filepath.Join(src, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o444); err != nil {
			t.Fatal(err)
		}
	}
	write("a/1", "one")
	write("a/2", "two")
	write("ro/x", "x")
	if err := os.Symlink("a/1", filepath.Join(src, "link")); err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Join(src, "ro"), 0o555)
	defer os.Chmod(filepath.Join(src, "ro"), 0o755)
	if err := mirrorTree(src, dst); err != nil {
		t.Fatal(err)
	}
	read := func(rel string) string {
		b, err := os.ReadFile(filepath.Join(dst, rel))
		if err != nil {
			return "<" + err.Error() + ">"
		}
		return string(b)
	}
	if read("a/1") != "one" || read("a/2") != "two" || read("ro/x") != "x" {
		t.Fatalf("mirror holds %q %q %q", read("a/1"), read("a/2"), read("ro/x"))
	}
	if l, err := os.Readlink(filepath.Join(dst, "link")); err != nil || l != "a/1" {
		t.Fatalf("link %q %v", l, err)
	}
	if fi, _ := os.Stat(filepath.Join(dst, "ro")); fi.Mode().Perm() != 0o555 {
		t.Fatalf("ro folder mode %v", fi.Mode())
	}
	// A file that did not change is not copied again: a planted change
	// of the mirror's own bytes at the same size and time stays (so the
	// rule is size and time, as documented), and a change in the source
	// is copied.
	fi, _ := os.Stat(filepath.Join(dst, "a/2"))
	os.Chmod(filepath.Join(dst, "a/2"), 0o644)
	os.WriteFile(filepath.Join(dst, "a/2"), []byte("TWO"), 0o644)
	os.Chtimes(filepath.Join(dst, "a/2"), time.Time{}, fi.ModTime())
	os.Chmod(filepath.Join(src, "a"), 0o755)
	os.Remove(filepath.Join(src, "a/1"))
	write("a/1", "one, again")
	os.Chtimes(filepath.Join(src, "a/1"), time.Time{}, time.Now().Add(time.Hour))
	os.Chmod(filepath.Join(src, "ro"), 0o755)
	os.Remove(filepath.Join(src, "ro/x"))
	if err := mirrorTree(src, dst); err != nil {
		t.Fatal(err)
	}
	if read("a/1") != "one, again" || read("a/2") != "TWO" {
		t.Fatalf("after a change the mirror holds %q %q", read("a/1"), read("a/2"))
	}
	if _, err := os.Lstat(filepath.Join(dst, "ro/x")); err == nil {
		t.Fatalf("a file the source lost is still in the mirror")
	}
	if m, _ := filepath.Glob(filepath.Join(dst, "*", "*.mirror-tmp")); len(m) > 0 {
		t.Fatalf("temporary files left: %v", m)
	}
}

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
	c := &site{git: &git.Client{Dir: dir}, common: filepath.Join(dir, ".git"), baseSHA: run("rev-parse", "HEAD")}
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
