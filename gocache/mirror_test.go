package gocache

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/flakegate/flakegate/attempt/sandbox"
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

// TestMirror: the sandbox's caches point at their mirrors under shm
// only when they fit in the room given; the mirrors of older caches go.
func TestMirror(t *testing.T) {
	common, shm := t.TempDir(), t.TempDir()
	build := filepath.Join(common, "gocache", "KEY", "cache")
	mod := filepath.Join(common, "gomod", "DIGEST")
	for _, f := range []string{filepath.Join(build, "00", "a-d"), filepath.Join(mod, "m@v1", "go.mod")} {
		os.MkdirAll(filepath.Dir(f), 0o755)
		os.WriteFile(f, []byte("x"), 0o444)
	}
	os.MkdirAll(filepath.Join(shm, "gocache", "OLDKEY"), 0o755)
	sb := &sandbox.Sandbox{GoCache: build, GoModCache: mod}
	if fits, err := Mirror(sb, shm, int64(os.Getpagesize())); fits || err != nil || sb.GoCache != build || sb.GoModCache != mod {
		t.Fatalf("two pages in one: %v %v %+v", fits, err, sb)
	}
	if fits, err := Mirror(sb, shm, int64(2*os.Getpagesize())); !fits || err != nil {
		t.Fatalf("two pages in two: %v %v", fits, err)
	}
	if sb.GoCache != filepath.Join(shm, "gocache", "KEY") || sb.GoModCache != filepath.Join(shm, "gomod", "DIGEST") {
		t.Fatalf("mirrors %s %s", sb.GoCache, sb.GoModCache)
	}
	if b, err := os.ReadFile(filepath.Join(sb.GoModCache, "m@v1", "go.mod")); err != nil || string(b) != "x" {
		t.Fatalf("mirrored module %q %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(shm, "gocache", "OLDKEY")); err == nil {
		t.Errorf("an older cache's mirror is left")
	}
}
