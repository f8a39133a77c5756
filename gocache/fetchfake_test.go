package gocache

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flakegate/flakegate/attempt/sandbox"
)

// fakeRepoAt is a repository whose files differ by commit.
type fakeRepoAt map[string]fakeRepo

func (r fakeRepoAt) ListFiles(ctx context.Context, rev string) ([]string, error) {
	return r[rev].ListFiles(ctx, rev)
}

func (r fakeRepoAt) Show(ctx context.Context, rev, file string) ([]byte, error) {
	return r[rev].Show(ctx, rev, file)
}

// TestFetchWithoutDownload: what Fetch decides before it runs go. A view
// that lacks nothing fetches nothing; without root (no namespace for the
// download's network) or without a module proxy, it says what is missing
// and what to try, once per check; a module the candidate's go.sum adds
// gets a view of its own, holding the base's modules, which the sandbox
// then names.
func TestFetchWithoutDownload(t *testing.T) {
	host, common := t.TempDir(), t.TempDir()
	good := modFixture(t, host, "example.com/good", "v1.0.0", map[string]string{"go.mod": "module example.com/good\n", "a.go": "package good\n"})
	added := "example.com/added v1.2.0 h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="
	base := fakeRepo{files: map[string]string{"go.mod": "module m\n", "go.sum": strings.Join(good, "\n")}}
	cand := fakeRepo{files: map[string]string{"go.mod": "module m\n", "go.sum": strings.Join(append(good, added), "\n")}}
	repo := fakeRepoAt{"base": base, "cand": cand}
	env := []string{"PATH=" + fakeGo(t)}
	open := func(vars map[string]string) (*Caches, *sandbox.Sandbox) {
		vars["GOMODCACHE"] = host
		vars["XDG_CACHE_HOME"] = t.TempDir()
		gc, err := Open(context.Background(), Options{Git: repo, Common: common, Base: "base", Env: env, Get: lookup(vars), Op: "check"})
		if err != nil || gc == nil {
			t.Fatalf("Open: %v %v", gc, err)
		}
		t.Cleanup(gc.Release)
		return gc, &sandbox.Sandbox{GoCache: gc.BuildDir(), GoModCache: gc.ModDir()}
	}

	gc, sb := open(map[string]string{})
	if line, err := gc.Fetch(context.Background(), repo, sb, env, "", "check"); line != "" || err != nil || gc.fetchTried {
		t.Fatalf("nothing missing: %q %v", line, err)
	}
	if line, err := gc.Fetch(context.Background(), repo, sb, env, "base", "check"); line != "" || err != nil {
		t.Fatalf("the base as candidate: %q %v", line, err)
	}

	baseView := gc.ModDir()
	line, err := gc.Fetch(context.Background(), repo, sb, env, "cand", "check")
	if err != nil || !strings.Contains(line, "the module cache lacks 1 module the base's and the candidate's go.sum name (example.com/added@v1.2.0)") ||
		!strings.Contains(line, "flakegate downloads modules only as root") {
		t.Fatalf("non-root: %q %v", line, err)
	}
	if gc.ModDir() == baseView || sb.GoModCache != gc.ModDir() || filepath.Dir(gc.ModDir()) != filepath.Dir(baseView) {
		t.Fatalf("the candidate's view %s (base's %s), the sandbox's %s", gc.ModDir(), baseView, sb.GoModCache)
	}
	if _, err := os.Stat(filepath.Join(gc.ModDir(), "example.com", "good@v1.0.0", "a.go")); err != nil {
		t.Fatalf("the candidate's view lacks the base's module: %v", err)
	}
	if line, err := gc.Fetch(context.Background(), repo, sb, env, "cand", "check"); line != "" || err != nil {
		t.Fatalf("a second try in the same check: %q %v", line, err)
	}

	gc, sb = open(map[string]string{"GOPROXY": "direct"})
	sb.Level.Root = true
	line, err = gc.Fetch(context.Background(), repo, sb, env, "cand", "check")
	if err != nil || !strings.Contains(line, "GOPROXY=direct names no module proxy") || !strings.Contains(line, "try: set GOPROXY") {
		t.Fatalf("no proxy: %q %v", line, err)
	}

	gc, sb = open(map[string]string{})
	sb.Level.Root = true
	gc.lines = append(gc.lines, "-flag v1.0.0 h1:x=")
	line, err = gc.download(context.Background(), *sb, env, []string{"-flag v1.0.0 h1:x="}, false, "check")
	if err != nil || line != "Go modules: the module cache lacks 0 modules the base's go.sum names, none of them a module path and version go could fetch" {
		t.Fatalf("nothing go could fetch: %q %v", line, err)
	}
}

// TestGoErrorLine: go's own complaint, without its sandbox noise.
func TestGoErrorLine(t *testing.T) {
	out := "go: can't start telemetry\ngo: downloading a.example/m v1.0.0\n  go: a.example/m@v1.0.0: 403 Forbidden  \ngo: later\n"
	if got := goErrorLine(out); got != "go: a.example/m@v1.0.0: 403 Forbidden" {
		t.Errorf("%q", got)
	}
	if got := goErrorLine("exit status 1\n"); got != "" {
		t.Errorf("no go line: %q", got)
	}
	if got := strings.Join(firstN([]string{"a", "b", "c", "d", "e"}, 3), ","); got != "a,b,c,2 more" {
		t.Errorf("firstN %q", got)
	}
	if got := oneLineCut("a\n b\tc", 3); got != "a b..." {
		t.Errorf("oneLineCut %q", got)
	}
}
