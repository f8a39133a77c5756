package gocache

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestGoStdRoot: the layer lives in the user's cache folder, only at an
// absolute path, never at / itself.
func TestGoStdRoot(t *testing.T) {
	for vars, want := range map[[2]string]string{
		{"/x/cache", "/home/u"}:  "/x/cache/flakegate/gostd",
		{"rel/cache", "/home/u"}: "/home/u/.cache/flakegate/gostd",
		{"", "/home/u"}:          "/home/u/.cache/flakegate/gostd",
		{"", "/"}:                "",
		{"", "home"}:             "",
		{"", ""}:                 "",
	} {
		got := goStdRoot(lookup(map[string]string{"XDG_CACHE_HOME": vars[0], "HOME": vars[1]}))
		if got != want {
			t.Errorf("XDG_CACHE_HOME=%q HOME=%q: %q, want %q", vars[0], vars[1], got, want)
		}
	}
}

// TestGoStdEnv: the layer's key is what can change how go compiles the
// standard library: go's and cgo's variables and the C toolchain, never
// where the caches are, nor anything else.
func TestGoStdEnv(t *testing.T) {
	got := goStdEnv([]string{"PATH=/usr/bin", "GOFLAGS=-x", "GOCACHE=/c", "GOMODCACHE=/m", "GOPATH=/p", "CGO_ENABLED=0", "CC=clang",
		"HOME=/h", "GOARCH=amd64", "CXX=c++", "AR=ar", "PKG_CONFIG=pkgconf", "TOKEN=s"})
	want := []string{"AR=ar", "CC=clang", "CGO_ENABLED=0", "CXX=c++", "GOARCH=amd64", "GOFLAGS=-x", "PKG_CONFIG=pkgconf"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestCopyCacheEntries: the layer's entries the repository's cache lacks
// are copied with their times; an entry it has and its own trim stamp
// stay its own.
func TestCopyCacheEntries(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	old := time.Now().Add(-48 * time.Hour).Truncate(time.Second)
	for rel, body := range map[string]string{"00/a-d": "layer a", "01/b-d": "layer b", "trim.txt": "layer trim"} {
		p := filepath.Join(src, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(body), 0o644)
		os.Chtimes(p, old, old)
	}
	os.Symlink("00/a-d", filepath.Join(src, "link"))
	os.MkdirAll(filepath.Join(dst, "01"), 0o755)
	os.WriteFile(filepath.Join(dst, "01", "b-d"), []byte("own b"), 0o644)
	os.WriteFile(filepath.Join(dst, "trim.txt"), []byte("own trim"), 0o644)
	if err := copyCacheEntries(src, dst); err != nil {
		t.Fatal(err)
	}
	for rel, want := range map[string]string{"00/a-d": "layer a", "01/b-d": "own b", "trim.txt": "own trim"} {
		if b, _ := os.ReadFile(filepath.Join(dst, rel)); string(b) != want {
			t.Errorf("%s holds %q, want %q", rel, b, want)
		}
	}
	if fi, err := os.Stat(filepath.Join(dst, "00/a-d")); err != nil || !fi.ModTime().Equal(old) {
		t.Errorf("copied entry's time: %v %v", fi.ModTime(), err)
	}
	if _, err := os.Lstat(filepath.Join(dst, "link")); err == nil {
		t.Errorf("a link in the layer was copied")
	}
	if m, _ := filepath.Glob(filepath.Join(dst, "*", "*.fgcopy")); len(m) > 0 {
		t.Errorf("temporary files left: %v", m)
	}
}

// TestStampUsed: an entry older than goUsedInterval gets the time now,
// so that no attempt's go stamps it (a write under its overlay); a
// fresher one keeps its time.
func TestStampUsed(t *testing.T) {
	dir := t.TempDir()
	oldT, fresh := time.Now().Add(-2*time.Hour), time.Now().Add(-time.Minute).Truncate(time.Second)
	os.MkdirAll(filepath.Join(dir, "00"), 0o755)
	os.WriteFile(filepath.Join(dir, "00", "old"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "00", "fresh"), nil, 0o644)
	os.Chtimes(filepath.Join(dir, "00", "old"), oldT, oldT)
	os.Chtimes(filepath.Join(dir, "00", "fresh"), fresh, fresh)
	stampUsed(dir)
	if fi, _ := os.Stat(filepath.Join(dir, "00", "old")); time.Since(fi.ModTime()) > time.Minute {
		t.Errorf("an old entry keeps %v", fi.ModTime())
	}
	if fi, _ := os.Stat(filepath.Join(dir, "00", "fresh")); !fi.ModTime().Equal(fresh) {
		t.Errorf("a fresh entry got %v", fi.ModTime())
	}
}
