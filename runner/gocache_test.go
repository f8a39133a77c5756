package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestGoCacheLayer: an attempt's Go build cache shows the host's cache
// (read-only, as the identity's) under a throwaway layer: what one
// attempt writes there is seen by neither the next attempt nor the host.
func TestGoCacheLayer(t *testing.T) {
	bwrap := needBwrap(t)
	host := t.TempDir()
	if h := os.Getenv("FG_HOSTCACHE"); h != "" {
		host = h
	}
	if err := os.MkdirAll(filepath.Join(host, "ab"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(host, "ab", "entry-d"), []byte("host entry\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-48 * time.Hour)
	os.Chtimes(filepath.Join(host, "ab", "entry-d"), old, old)
	tree := t.TempDir()
	env := []string{"PATH=/usr/bin:/bin", "GOCACHE=" + SandboxGoCache}
	sb := &Sandbox{Bwrap: bwrap, Tree: tree, Home: "/root", Limits: testLimits, HostGoCache: host}
	if err := sb.Probe(context.Background(), filepath.Dir(tree), env, true); err != nil {
		t.Fatal(err)
	}
	if sb.HostGoCache != host {
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
		out := Run(context.Background(), Command{Argv: []string{"sh", "-c", script}, Dir: tree, Env: env, Sandbox: sb, WallBudget: time.Minute, NoTestMarkers: []string{}})
		if out.Result != Pass || strings.Contains(out.Tail, "LEAK") || !strings.Contains(out.Tail, "host entry") {
			t.Fatalf("attempt %d: %s %s\n%s", i, out.Result, out.Reason, out.Tail)
		}
	}
	if _, err := os.Stat(filepath.Join(host, "marker")); err == nil {
		t.Fatal("an attempt wrote the host's cache")
	}
	if b, err := os.ReadFile(filepath.Join(host, "ab", "entry-d")); err != nil || string(b) != "host entry\n" {
		t.Fatalf("the host's entry: %q %v", b, err)
	}
	if fi, _ := os.Stat(filepath.Join(host, "ab", "entry-d")); !fi.ModTime().Equal(old) {
		t.Fatal("an attempt touched the host's entry")
	}
}
