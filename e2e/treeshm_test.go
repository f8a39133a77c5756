package e2e_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// shmUser is a uid of its own for TestAttack24TreesOnTmpfs: its tmpfs
// folder is planted and removed by the test, so no other test's checks
// may share it.
var shmUser = mode16{name: "nonroot-shm", uid: 61538}

// TestAttack24TreesOnTmpfs: without a memory cgroup (not root here) the
// check keeps its worktrees and a mirror of its Go caches on a tmpfs
// without swap, /dev/shm/flakegate-UID/REPO, where no attempt can change
// what the page cache holds and no sweep is needed.
//   - Another user who makes /dev/shm/flakegate-UID first (a symlink to
//     a folder of their own, or a folder they own) gets nothing: the
//     check keeps its trees on disk, says why, and passes; nothing lands
//     in the attacker's folder.
//   - Once the folder is free, the trees are on the tmpfs, in a folder
//     of mode 0700 that the check's user owns.
//   - When the repository is gone, the next check of another repository
//     removes its trees from the tmpfs.
func TestAttack24TreesOnTmpfs(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("plants another user's folder: needs root")
	}
	needMode(t, shmUser)
	needUsernsOverlay(t, shmUser)
	if b, _ := os.ReadFile("/proc/swaps"); strings.Count(strings.TrimSpace(string(b)), "\n") > 0 {
		t.Skip("swap is on: the trees stay on disk by design")
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs("/dev/shm", &st); err != nil || st.Type != 0x01021994 {
		if os.Getenv("CI") == "true" {
			t.Fatalf("/dev/shm is no tmpfs here")
		}
		t.Skip("/dev/shm is no tmpfs here")
	}
	user := "/dev/shm/flakegate-" + strconv.Itoa(shmUser.uid)
	os.RemoveAll(user)
	t.Cleanup(func() { os.RemoveAll(user) })

	bait := t.TempDir()
	os.Chmod(bait, 0o777)
	for _, plant := range []string{"symlink", "folder"} {
		if plant == "symlink" {
			if err := os.Symlink(bait, user); err != nil {
				t.Fatal(err)
			}
		} else if err := os.Mkdir(user, 0o777); err != nil {
			t.Fatal(err)
		} else {
			os.Chmod(user, 0o777)
			os.Chown(user, 61597, 61597) // the attacker's
		}
		a := newA16(t, shmUser, config16("", ""), libOK)
		a.candidate("first", map[string]string{"README.md": "a harmless patch\n"})
		cr := a.run(t, "first", "")
		if cr.code != 0 {
			t.Fatalf("[%s] the check is not a pass\n%s", plant, cr)
		}
		if !strings.Contains(cr.stderr, "worktrees: on disk, swept from the page cache before every attempt") {
			t.Errorf("[%s] the check does not say its trees stay on disk:\n%s", plant, cr.stderr)
		}
		if _, err := os.Stat(filepath.Join(a.dir, ".git", "flakegate", "worktrees", "candidate-0", "README.md")); err != nil {
			t.Errorf("[%s] no candidate tree on disk: %v", plant, err)
		}
		for _, d := range []string{bait, user} {
			if ents, _ := os.ReadDir(d); len(ents) > 0 {
				t.Errorf("[%s] the check wrote into the planted folder %s: %v", plant, d, ents)
			}
		}
		os.Remove(user)
	}

	a := newA16(t, shmUser, config16("", ""), libOK)
	a.candidate("first", map[string]string{"README.md": "a harmless patch\n"})
	if cr := a.run(t, "first", ""); cr.code != 0 || !strings.Contains(cr.stderr, "worktrees: on a tmpfs without swap") {
		t.Fatalf("the check's trees are not on the tmpfs (exit %d)\n%s", cr.code, cr)
	}
	fi, err := os.Lstat(user)
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 || fi.Sys().(*syscall.Stat_t).Uid != uint32(shmUser.uid) {
		t.Fatalf("%s is not the check's user's own folder of mode 0700: %v %v", user, fi, err)
	}
	trees := treesDir(t, a.dir)
	if !strings.HasPrefix(trees, user+"/") {
		t.Fatalf("the trees are at %s, not under %s", trees, user)
	}
	if _, err := os.Stat(filepath.Join(trees, "candidate-0", "README.md")); err != nil {
		t.Fatalf("no candidate tree on the tmpfs: %v", err)
	}
	// doctor says the same.
	a.grant(t)
	id := strconv.Itoa(shmUser.uid)
	doc := exec.Command("setpriv", "--reuid="+id, "--regid="+id, "--clear-groups", a.bin, "doctor")
	doc.Dir = a.dir
	doc.Env = append(cleanEnv(), "FG_STATE="+a.state, "TMPDIR="+a.tmp, "HOME="+a.home, "XDG_CACHE_HOME="+userCache(t, shmUser.uid), "FLAKEGATE_LEDGER="+a.ledger)
	out, _ := doc.CombinedOutput()
	a.revoke(t)
	if !strings.Contains(string(out), "worktrees") || !strings.Contains(string(out), "on a tmpfs without swap ("+trees+")") {
		t.Errorf("doctor does not say the trees are on the tmpfs:\n%s", out)
	}
	// The repository goes; a check of another one drops its trees.
	os.RemoveAll(a.dir)
	b := newA16(t, shmUser, config16("", ""), libOK)
	b.candidate("first", map[string]string{"README.md": "a harmless patch\n"})
	if cr := b.run(t, "first", ""); cr.code != 0 {
		t.Fatalf("the other repository's check is not a pass\n%s", cr)
	}
	if _, err := os.Stat(filepath.Dir(trees)); err == nil {
		t.Errorf("the trees of a removed repository are still on the tmpfs: %s", filepath.Dir(trees))
	}
}
