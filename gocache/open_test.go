package gocache

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/attempt/sandbox"
)

// fakeRepo is a repository's files at one commit, in memory.
type fakeRepo struct {
	files map[string]string
	err   error
}

func (r fakeRepo) ListFiles(ctx context.Context, rev string) ([]string, error) {
	if r.err != nil {
		return nil, r.err
	}
	var out []string
	for f := range r.files {
		out = append(out, f)
	}
	slices.Sort(out)
	return out, nil
}

func (r fakeRepo) Show(ctx context.Context, rev, file string) ([]byte, error) {
	b, ok := r.files[file]
	if !ok {
		return nil, &flakegate.Error{Code: flakegate.ENOTFOUND, Op: "git", Path: file, Message: "not found"}
	}
	return []byte(b), nil
}

// lookup looks a variable up in a map, as flakegate's environment.
func lookup(vars map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	}
}

// fakeGo is a PATH holding an executable file named go: what Open
// identifies the toolchain by (it runs nothing).
func fakeGo(t *testing.T) string {
	t.Helper()
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "go"), []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// TestOpen: the caches are the repository's, under its git common dir,
// never the runner's module cache; the view holds what the runner's
// cache has with go.sum's hash, the key of a fill says how many were
// found, and a base without a Go module or an environment without go
// has none.
func TestOpen(t *testing.T) {
	host, common, user := t.TempDir(), t.TempDir(), t.TempDir()
	good := modFixture(t, host, "example.com/good", "v1.0.0", map[string]string{"go.mod": "module example.com/good\n", "a.go": "package good\n"})
	absent := []string{"example.com/absent v1.0.0 h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", "example.com/absent v1.0.0/go.mod h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="}
	repo := fakeRepo{files: map[string]string{
		"go.mod":               "module example.com/m\n",
		"go.sum":               strings.Join(good, "\n") + "\n",
		"tools/go.mod":         "module example.com/m/tools\n",
		"tools/go.sum":         strings.Join(absent, "\n") + "\n",
		"testdata/x/go.mod":    "module x\n",
		"main.go":              "package main\n",
		"vendor/v/go.mod":      "module v\n",
		"_skipped/go.mod":      "module s\n",
		"internal/.hid/go.mod": "module h\n",
	}}
	o := Options{Git: repo, Common: common, Base: "0123456789abcdef", Env: []string{"PATH=" + fakeGo(t)},
		Get: lookup(map[string]string{"GOMODCACHE": host, "XDG_CACHE_HOME": user, "GOPROXY": "off"}), Op: "check"}
	gc, err := Open(context.Background(), o)
	if err != nil || gc == nil {
		t.Fatalf("Open: %v %v", gc, err)
	}
	defer gc.Release()
	if !slices.Equal(gc.modules, []string{".", "tools"}) {
		t.Errorf("modules %q", gc.modules)
	}
	for _, d := range []string{gc.BuildDir(), gc.ModDir()} {
		if !strings.HasPrefix(d, filepath.Join(common, "flakegate")+"/") || strings.HasPrefix(d, host) {
			t.Errorf("%s is not the repository's own", d)
		}
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			t.Errorf("%s: %v", d, err)
		}
	}
	if filepath.Base(gc.BuildDir()) != "cache" || filepath.Dir(filepath.Dir(gc.BuildDir())) != filepath.Join(common, "flakegate", "gocache") {
		t.Errorf("build cache %s", gc.BuildDir())
	}
	if _, err := os.Stat(filepath.Join(gc.ModDir(), "example.com", "good@v1.0.0", "a.go")); err != nil {
		t.Errorf("the verified module is not in the view: %v", err)
	}
	if gc.named != 2 || gc.found != 1 || gc.FillKey() != "0123456789abcdef modules 1/2" || gc.Base() != "0123456789abcdef" {
		t.Errorf("named %d found %d key %q", gc.named, gc.found, gc.FillKey())
	}
	if d := gc.Describe(true); !strings.Contains(d, "built from the base 0123456789ab") || !strings.Contains(d, "1 of the 2 modules") {
		t.Errorf("describe %q", d)
	}
	if d := gc.Describe(false); !strings.Contains(d, "a cold build cache") {
		t.Errorf("describe, cold %q", d)
	}
	if gc.std == "" || !strings.HasPrefix(gc.std, filepath.Join(user, "flakegate", "gostd")+"/") {
		t.Errorf("standard library layer %q", gc.std)
	}
	if gc.route.why == "" {
		t.Errorf("GOPROXY=off leaves the download a way out: %+v", gc.route)
	}
	// The same toolchain and environment is the same cache; another
	// environment is another.
	again, err := Open(context.Background(), o)
	if err != nil || again.BuildDir() != gc.BuildDir() || again.ModDir() != gc.ModDir() {
		t.Fatalf("again: %v %v", again, err)
	}
	again.Release()
	o2 := o
	o2.Env = append(slices.Clone(o.Env), "GOFLAGS=-tags=x")
	other, err := Open(context.Background(), o2)
	if err != nil || other.BuildDir() == gc.BuildDir() || other.ModDir() != gc.ModDir() {
		t.Fatalf("another environment: %v %v", other, err)
	}
	other.Release()

	for name, o := range map[string]Options{
		"no go on PATH": {Git: repo, Common: common, Base: "b", Env: []string{"PATH=" + t.TempDir()}, Get: lookup(nil), Op: "check"},
		"no Go module":  {Git: fakeRepo{files: map[string]string{"main.py": ""}}, Common: common, Base: "b", Env: o.Env, Get: lookup(nil), Op: "check"},
	} {
		if gc, err := Open(context.Background(), o); gc != nil || err != nil {
			t.Errorf("%s: %v %v", name, gc, err)
		}
	}
	broken := errors.New("git broke")
	if _, err := Open(context.Background(), Options{Git: fakeRepo{err: broken}, Common: common, Env: o.Env, Get: lookup(nil)}); !errors.Is(err, broken) {
		t.Errorf("a git error: %v", err)
	}
	// A nil Caches is none.
	var none *Caches
	none.Release()
	if line, err := none.Fill(context.Background(), sandbox.Sandbox{}, nil, "", "check"); line != "" || err != nil {
		t.Errorf("nil fill: %q %v", line, err)
	}
	if _, ok := none.BaseSkipped("k"); ok || !strings.Contains(none.Describe(true), "none") {
		t.Error("a nil Caches is not none")
	}
}

// TestBaseGoModules: go's own ./... skips testdata, vendor and folders
// starting with _ or .; the root module is ".".
func TestBaseGoModules(t *testing.T) {
	for files, want := range map[string]string{
		"go.mod":                              ".",
		"a/go.mod b/c/go.mod x.go":            "a b/c",
		"testdata/go.mod a/testdata/b/go.mod": "",
		"vendor/m/go.mod _x/go.mod .y/go.mod": "",
		"a/go.mod.bak ago.mod a/_b/go.mod":    "",
		"go.mod sub/go.mod sub/.git/go.mod":   ". sub",
	} {
		r := fakeRepo{files: map[string]string{}}
		for _, f := range strings.Fields(files) {
			r.files[f] = ""
		}
		got, err := baseGoModules(context.Background(), r, "b")
		slices.Sort(got)
		if err != nil || strings.Join(got, " ") != want {
			t.Errorf("%s: %q %v, want %q", files, got, err, want)
		}
	}
}

// TestGoSumLines: only well-formed lines, each once, spaces made one,
// sorted; a go.sum that is missing is no error, another error is.
func TestGoSumLines(t *testing.T) {
	sums := [][]byte{
		[]byte("b.example/m v1.0.0 h1:x=\na.example/m  v1.0.0/go.mod\th1:y=\n\n// comment\nc.example/m v1.0.0 sha256:z\nd.example/m v1.0.0\n"),
		[]byte("b.example/m v1.0.0 h1:x=\r\ne.example/m v1.0.0 h1:w= extra\n"),
	}
	got := goSumLines(sums)
	want := []string{"a.example/m v1.0.0/go.mod h1:y=", "b.example/m v1.0.0 h1:x="}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	r := fakeRepo{files: map[string]string{"go.sum": "b.example/m v1.0.0 h1:x=\n"}}
	if got, err := goSumLinesAt(context.Background(), r, "b", []string{".", "nosum"}); err != nil || !slices.Equal(got, want[1:]) {
		t.Errorf("at: %q %v", got, err)
	}
}

// TestEscapeModule: the module cache's spelling of a path, and no path
// that could leave the cache.
func TestEscapeModule(t *testing.T) {
	for in, want := range map[string]string{
		"github.com/Azure/go-autorest": "github.com/!azure/go-autorest",
		"v1.2.3-rc.1+incompatible":     "v1.2.3-rc.1+incompatible",
		"example.com/a~b_c":            "example.com/a~b_c",
		"":                             "",
		"/abs":                         "",
		"a/../b":                       "",
		"a//b":                         "",
		"a/./b":                        "",
		"a/":                           "",
		"a b":                          "",
		"a\\b":                         "",
		"é.example":                    "",
	} {
		got, ok := escapeModule(in)
		if got != want || ok != (want != "") {
			t.Errorf("%q: %q %v, want %q", in, got, ok, want)
		}
	}
}

// TestHash1: go's own h1 of a go.mod (pgregory.net/rapid v1.3.0's, as
// this repository's go.sum names it); a name with a newline has none.
func TestHash1(t *testing.T) {
	if got := hash1([]string{"go.mod"}, [][]byte{[]byte("module pgregory.net/rapid\n\ngo 1.23\n")}); got != "h1:dPlE4OBBxgXPqkP79flB6sJL1dx5azpI7HQ9MY9Z7uk=" {
		t.Errorf("hash %q", got)
	}
	a := hash1([]string{"m@v/b", "m@v/a"}, [][]byte{[]byte("2"), []byte("1")})
	if b := hash1([]string{"m@v/a", "m@v/b"}, [][]byte{[]byte("1"), []byte("2")}); a != b {
		t.Errorf("the order of the files changes the hash: %q %q", a, b)
	}
	if got := hash1([]string{"a\nb"}, [][]byte{nil}); got != "" {
		t.Errorf("a name with a newline: %q", got)
	}
}

// TestMissingModLines: a line is missing while the view lacks its
// module's folder (or its go.mod, for a /go.mod line).
func TestMissingModLines(t *testing.T) {
	host, view := t.TempDir(), t.TempDir()
	lines := modFixture(t, host, "example.com/M", "v1.0.0", map[string]string{"go.mod": "module example.com/M\n"})
	bogus := "../x v1.0.0 h1:x"
	if got := missingModLines(view, append(slices.Clone(lines), bogus)); !slices.Equal(got, lines) {
		t.Fatalf("empty view: %q", got)
	}
	if _, _, err := fillModView(view, []string{host}, lines); err != nil {
		t.Fatal(err)
	}
	if got := missingModLines(view, lines); len(got) != 0 {
		t.Fatalf("filled view: %q", got)
	}
}

// TestCollectGoCaches: the newest few by last use stay, an old one and
// those beyond the few go, but never the one in use (keep) nor one
// another check holds.
func TestCollectGoCaches(t *testing.T) {
	root := t.TempDir()
	now := time.Now()
	mk := func(name string, age time.Duration) string {
		d := filepath.Join(root, name)
		os.MkdirAll(filepath.Join(d, "sub"), 0o755)
		os.WriteFile(filepath.Join(d, "sub", "f"), []byte("x"), 0o444)
		os.Chmod(filepath.Join(d, "sub"), 0o555) // a module folder is read-only
		os.Chtimes(d, now.Add(-age), now.Add(-age))
		return d
	}
	keep := mk("keep", 100*24*time.Hour)
	mk("new1", time.Hour)
	mk("new2", 2*time.Hour)
	mk("new3", 3*time.Hour)
	mk("new4", 4*time.Hour)
	mk("old", 20*24*time.Hour)
	held := mk("held", 30*24*time.Hour)
	f, err := holdShared(held + ".lock")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	collectGoCaches(root, keep)
	var left []string
	ents, _ := os.ReadDir(root)
	for _, e := range ents {
		if e.IsDir() {
			left = append(left, e.Name())
		}
	}
	if want := []string{"held", "keep", "new1", "new2", "new3"}; !slices.Equal(left, want) {
		t.Errorf("left %q, want %q", left, want)
	}
	for _, gone := range []string{"new4", "old"} {
		if _, err := os.Stat(filepath.Join(root, gone+".lock")); err == nil {
			t.Errorf("the lock of the removed %s is left", gone)
		}
	}
}
