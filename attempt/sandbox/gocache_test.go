package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flakegate/flakegate/attempt"
)

// cacheOwner gives a cache's files to the identity the attempts run as,
// as the fill (which runs as that identity) leaves them.
func cacheOwner(t *testing.T, dir string) {
	t.Helper()
	if os.Geteuid() != 0 {
		return
	}
	uid, gid, ok := dropIdentity()
	if !ok {
		return
	}
	filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err == nil {
			err = os.Lchown(p, uid, gid)
		}
		return err
	})
}

// TestGoCacheLayer: an attempt's Go build cache shows the repository's
// cache (read-only) under a throwaway layer: what one attempt writes
// there is seen by neither the next attempt nor the cache.
func TestGoCacheLayer(t *testing.T) {
	bwrap := needBwrap(t)
	cache := t.TempDir()
	if err := os.MkdirAll(filepath.Join(cache, "ab"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cache, "ab", "entry-d"), []byte("cache entry\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cacheOwner(t, cache)
	old := time.Now().Add(-48 * time.Hour)
	os.Chtimes(filepath.Join(cache, "ab", "entry-d"), old, old)
	tree := t.TempDir()
	env := []string{"PATH=/usr/bin:/bin", "GOCACHE=" + SandboxGoCache}
	sb := open(t, Sandbox{Bwrap: bwrap, Tree: tree, Home: "/root", Limits: testLimits, GoCache: cache})
	if err := sb.Probe(context.Background(), filepath.Dir(tree), env, true); err != nil {
		t.Fatal(err)
	}
	if sb.GoCache != cache {
		t.Fatalf("no warm cache: %v", sb.Level.Missing)
	}
	sb.Tree = tree
	script := `c=$GOCACHE
[ -e $c/marker ] && echo LEAK
cat $c/ab/entry-d || exit 5
touch $c/ab/entry-d || exit 6
echo new > $c/ab/new-d || exit 7
echo m > $c/marker || exit 8
rm $c/ab/entry-d || exit 9
echo done`
	for i := 0; i < 2; i++ {
		out := attempt.Run(context.Background(), attempt.Command{Argv: []string{"sh", "-c", script}, Dir: tree, Env: env, Sandbox: sb, WallBudget: time.Minute, NoTestMarkers: []string{}})
		if out.Result != attempt.Pass || strings.Contains(out.Tail, "LEAK") || !strings.Contains(out.Tail, "cache entry") {
			t.Fatalf("attempt %d: %s %s\n%s", i, out.Result, out.Reason, out.Tail)
		}
	}
	if _, err := os.Stat(filepath.Join(cache, "marker")); err == nil {
		t.Fatal("an attempt wrote the repository's cache")
	}
	if b, err := os.ReadFile(filepath.Join(cache, "ab", "entry-d")); err != nil || string(b) != "cache entry\n" {
		t.Fatalf("the cache's entry: %q %v", b, err)
	}
	if fi, _ := os.Stat(filepath.Join(cache, "ab", "entry-d")); !fi.ModTime().Equal(old) {
		t.Fatal("an attempt touched the cache's entry")
	}

	// The fill writes the cache itself; the next attempt reads what it
	// wrote, and writes nothing there.
	fill := *sb
	fill.FillGoCache = true
	out := attempt.Run(context.Background(), attempt.Command{Argv: []string{"sh", "-c", "echo filled > $GOCACHE/ab/fill-d"}, Dir: tree, Env: env, Sandbox: &fill, WallBudget: time.Minute, NoTestMarkers: []string{}})
	if out.Result != attempt.Pass {
		t.Fatalf("fill: %s %s\n%s", out.Result, out.Reason, out.Tail)
	}
	if b, err := os.ReadFile(filepath.Join(cache, "ab", "fill-d")); err != nil || string(b) != "filled\n" {
		t.Fatalf("the fill did not write the cache: %q %v", b, err)
	}
	out = attempt.Run(context.Background(), attempt.Command{Argv: []string{"sh", "-c", "cat $GOCACHE/ab/fill-d && echo again > $GOCACHE/ab/fill-d"}, Dir: tree, Env: env, Sandbox: sb, WallBudget: time.Minute, NoTestMarkers: []string{}})
	if out.Result != attempt.Pass || !strings.Contains(out.Tail, "filled") {
		t.Fatalf("after the fill: %s %s\n%s", out.Result, out.Reason, out.Tail)
	}
	if b, _ := os.ReadFile(filepath.Join(cache, "ab", "fill-d")); string(b) != "filled\n" {
		t.Fatalf("an attempt after the fill wrote the cache: %q", b)
	}
}

// TestGoModCacheView: the attempt's GOMODCACHE is the folder it is given,
// read-only; the host's own module cache and build cache are hidden even
// where a shared toolchain folder holds them.
func TestGoModCacheView(t *testing.T) {
	bwrap := needBwrap(t)
	tool := t.TempDir()
	for _, d := range []string{"bin", "pkg/mod/secret.example@v1", "cache/go-build/00"} {
		os.MkdirAll(filepath.Join(tool, d), 0o755)
	}
	os.WriteFile(filepath.Join(tool, "pkg/mod/secret.example@v1/token.txt"), []byte("host-module-token\n"), 0o644)
	os.WriteFile(filepath.Join(tool, "cache/go-build/00/x-d"), []byte("host-build-entry\n"), 0o644)
	os.Chmod(tool, 0o755)
	mod := t.TempDir()
	os.MkdirAll(filepath.Join(mod, "ok.example@v1"), 0o755)
	os.WriteFile(filepath.Join(mod, "ok.example@v1", "ok.txt"), []byte("named-module\n"), 0o644)
	os.Chmod(mod, 0o755)
	src := []string{"PATH=" + filepath.Join(tool, "bin") + ":/usr/bin:/bin", "GOMODCACHE=" + filepath.Join(tool, "pkg/mod"), "GOCACHE=" + filepath.Join(tool, "cache/go-build")}
	tree := t.TempDir()
	sb := open(t, Sandbox{Bwrap: bwrap, Home: "/root", Limits: testLimits, GoModCache: mod})
	env := AttemptEnv(EnvSpec{Src: src, Sandbox: sb})
	if err := sb.Probe(context.Background(), filepath.Dir(tree), env, true); err != nil {
		t.Fatal(err)
	}
	sb.Tree = tree
	script := `echo "mod=$GOMODCACHE"
cat $GOMODCACHE/ok.example@v1/ok.txt
touch $GOMODCACHE/ok.example@v1/ok.txt 2>/dev/null && echo WROTE
cat ` + tool + `/pkg/mod/secret.example@v1/token.txt ` + tool + `/cache/go-build/00/x-d 2>/dev/null
ls -R ` + tool + ` 2>&1`
	out := attempt.Run(context.Background(), attempt.Command{Argv: []string{"sh", "-c", script}, Dir: tree, Env: env, Sandbox: sb, WallBudget: time.Minute, NoTestMarkers: []string{}})
	if !strings.Contains(out.Tail, "mod="+SandboxGoModCache) || !strings.Contains(out.Tail, "named-module") {
		t.Fatalf("the module cache is not the one given: %s %s\n%s", out.Result, out.Reason, out.Tail)
	}
	for _, leak := range []string{"WROTE", "host-module-token", "host-build-entry", "secret.example", "x-d"} {
		if strings.Contains(out.Tail, leak) {
			t.Errorf("the attempt reached %q:\n%s", leak, out.Tail)
		}
	}
}
