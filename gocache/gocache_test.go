package gocache

import (
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/evidence"
)

// modFixture writes module mod@ver into the module cache host (its
// files and its go.mod in cache/download) and returns its go.sum lines.
func modFixture(t *testing.T, host, mod, ver string, files map[string]string) []string {
	t.Helper()
	emod, _ := escapeModule(mod)
	dir := filepath.Join(host, filepath.FromSlash(emod)+"@"+ver)
	var names []string
	var datas [][]byte
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o444); err != nil {
			t.Fatal(err)
		}
		names = append(names, mod+"@"+ver+"/"+name)
		datas = append(datas, []byte(body))
	}
	dl := filepath.Join(host, "cache", "download", filepath.FromSlash(emod), "@v")
	os.MkdirAll(dl, 0o755)
	os.WriteFile(filepath.Join(dl, ver+".mod"), []byte(files["go.mod"]), 0o444)
	return []string{
		mod + " " + ver + " " + hash1(names, datas),
		mod + " " + ver + "/go.mod " + hash1([]string{"go.mod"}, [][]byte{[]byte(files["go.mod"])}),
	}
}

// TestFillModView: the view holds exactly the modules go.sum names whose
// bytes match their hashes; a module the runner's cache holds with other
// bytes, with a symlink, or that go.sum does not name is left out.
func TestFillModView(t *testing.T) {
	host, view := t.TempDir(), t.TempDir()
	good := modFixture(t, host, "example.com/Good", "v1.2.0", map[string]string{"go.mod": "module example.com/Good\n", "a.go": "package good\n", "sub/b.go": "package sub\n"})
	tampered := modFixture(t, host, "example.com/tampered", "v1.0.0", map[string]string{"go.mod": "module example.com/tampered\n", "a.go": "package tampered\n"})
	os.Chmod(filepath.Join(host, "example.com/tampered@v1.0.0/a.go"), 0o644)
	os.WriteFile(filepath.Join(host, "example.com/tampered@v1.0.0/a.go"), []byte("package tampered // changed\n"), 0o644)
	linked := modFixture(t, host, "example.com/linked", "v1.0.0", map[string]string{"go.mod": "module example.com/linked\n"})
	os.Symlink("/etc/passwd", filepath.Join(host, "example.com/linked@v1.0.0/passwd"))
	modFixture(t, host, "private.example/unnamed", "v1.0.0", map[string]string{"go.mod": "module private.example/unnamed\n", "token.go": "package unnamed\n"})
	bogus := []string{"../escape v1.0.0 h1:AAAA", "example.com/x ../../v1 h1:AAAA"}

	lines := goSumLines([][]byte{[]byte(strings.Join(append(append(append(good, tampered...), linked...), bogus...), "\n"))})
	named, found, err := fillModView(view, []string{host}, lines)
	if err != nil {
		t.Fatal(err)
	}
	if named != 3 || found != 1 {
		t.Errorf("named %d, found %d; want 3 and 1", named, found)
	}
	var got []string
	filepath.Walk(view, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			rel, _ := filepath.Rel(view, p)
			got = append(got, filepath.ToSlash(rel))
		}
		return nil
	})
	want := strings.Join([]string{
		"cache/download/example.com/!good/@v/v1.2.0.mod",
		"cache/download/example.com/!good/@v/v1.2.0.ziphash",
		"cache/download/example.com/linked/@v/v1.0.0.mod",
		"cache/download/example.com/tampered/@v/v1.0.0.mod",
		"example.com/!good@v1.2.0/a.go",
		"example.com/!good@v1.2.0/go.mod",
		"example.com/!good@v1.2.0/sub/b.go",
	}, "\n")
	if strings.Join(got, "\n") != want {
		t.Errorf("the view holds\n%s\nwant\n%s", strings.Join(got, "\n"), want)
	}
	if b, _ := os.ReadFile(filepath.Join(view, "cache/download/example.com/!good/@v/v1.2.0.ziphash")); string(b) != strings.Fields(good[0])[2] {
		t.Errorf("ziphash %q", b)
	}
	// A second fill finds the module there and copies nothing again.
	if named, found, err := fillModView(view, nil, lines); err != nil || named != 3 || found != 1 {
		t.Errorf("again: %d %d %v", named, found, err)
	}
}

// TestSuiteFillRuns: the fill runs each go suite's pattern with its
// excluded names as one anchored -skip pattern, and its key changes
// with the suites, so a config that adds one fills again.
func TestSuiteFillRuns(t *testing.T) {
	suites := []config.Suite{
		{Path: "./...", Framework: config.FrameworkGo, WallBudget: time.Minute, Exclude: []string{"TestSlow*", "TestA?c", "TestSub/x", "Test.Dot"}},
		{Path: "tests", Framework: config.FrameworkPytest},
	}
	runs := suiteFillRuns(suites)
	if len(runs) != 1 || runs[0].pattern != "./..." || runs[0].budget != time.Minute {
		t.Fatalf("runs %+v", runs)
	}
	re := regexp.MustCompile(runs[0].skip)
	for name, want := range map[string]bool{"TestSlowX": true, "TestSlow": true, "TestAbc": true, "TestAbbc": false, "TestSub": false, "Test.Dot": true, "TestXDot": false, "XTestSlow": false} {
		if re.MatchString(name) != want {
			t.Errorf("-skip %q on %s: got %v, want %v", runs[0].skip, name, !want, want)
		}
	}
	gc := &Caches{base: "abc"}
	if gc.FillKey() != "abc" {
		t.Fatalf("key without suites %q", gc.FillKey())
	}
	gc.runs = runs
	k1 := gc.FillKey()
	gc.runs = suiteFillRuns(suites[:0])
	if k1 == "abc" || !strings.HasPrefix(k1, "abc suites ") || gc.FillKey() != "abc" {
		t.Fatalf("keys %q %q", k1, gc.FillKey())
	}
	// A fill that found only some of the base's modules has a key of
	// its own: a later check that finds them all fills again.
	gc.named, gc.found = 2, 1
	if k := gc.FillKey(); k != "abc modules 1/2" {
		t.Fatalf("key with a module missing %q", k)
	}
}

// TestGoSkips: the fill's go test -json events name a top-level test
// that ended skipped; a skipped subtest, a package without tests (a skip
// with no test), another action and a line that is no event do not; the
// record reads back as written, and a fill that wrote none reads as
// unknown.
func TestGoSkips(t *testing.T) {
	out := `{"Action":"run","Package":"m/a","Test":"TestA"}
{"Action":"skip","Package":"m/a","Test":"TestA"}
{"Action":"skip","Package":"m/a","Test":"TestB/x"}
{"Action":"pass","Package":"m/a","Test":"TestB"}
{"Action":"skip","Package":"m/empty"}
{"Action":"output","Package":"m/a","Test":"TestC","Output":"{\"Action\":\"skip\"}\n"}
not json
{"Action":"skip","Package":"m","Test":"TestRoot"}
`
	events := evidence.NewGoJSON()
	events.Write([]byte(out))
	got := goSkips(events)
	if want := []string{"m\tTestRoot\n", "m/a\tTestA\n"}; !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	gc := &Caches{dir: t.TempDir()}
	if _, ok := gc.BaseSkipped("k"); ok {
		t.Fatal("no record reads as one")
	}
	if err := os.WriteFile(gc.skippedFile("k"), []byte(strings.Join(got, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	m, ok := gc.BaseSkipped("k")
	if !ok || !maps.Equal(m, map[string]bool{"m/a\x00TestA": true, "m\x00TestRoot": true}) {
		t.Fatalf("read back %v, %v", m, ok)
	}
}

// TestFilled: a fill is known by its whole key, one line of the
// "filled" list: the base's key does not stand for the suites' fill,
// nor a key for a longer one; UseSuites gives the fill its own key.
func TestFilled(t *testing.T) {
	gc := &Caches{base: "abc", dir: t.TempDir()}
	if gc.Filled(gc.FillKey()) {
		t.Fatal("filled without a list")
	}
	os.WriteFile(filepath.Join(gc.dir, "filled"), []byte("abc\nabcd suites 1\n"), 0o600)
	if !gc.Filled("abc") || gc.Filled("ab") || gc.Filled("abc suites 1") {
		t.Fatal("filled by another key")
	}
	gc.UseSuites([]config.Suite{{Path: "./...", Framework: config.FrameworkGo}}, false)
	if k := gc.FillKey(); !strings.HasPrefix(k, "abc suites ") || gc.Filled(k) || gc.BaseKey() != "abc" {
		t.Fatalf("the suites' key %q", k)
	}
}
