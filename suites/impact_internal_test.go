package suites

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/impact"
)

// TestGoBudget: the verdicts per package become the packages not run
// again and the extra seeds of the others; a package without a verdict,
// or an excluded test, is counted as the rules say.
func TestGoBudget(t *testing.T) {
	s := &config.Suite{Framework: config.FrameworkGo, Path: "./...", Seeds: []flakegate.Seed{"1", "2", "3"}, Exclude: []string{"TestSkipped"}}
	list := &List{}
	for i := range 10 {
		pkg := fmt.Sprintf("./p%d", i)
		for _, name := range []string{"TestA", "TestB"} {
			list.Tests = append(list.Tests, Test{Pkg: pkg, File: fmt.Sprintf("p%d/p_test.go", i), Name: name})
		}
	}
	list.Tests = append(list.Tests, Test{Pkg: "./p0", File: "p0/p_test.go", Name: "TestSkipped"})
	type testCase struct {
		name                 string
		reach                []string // packages the verdicts call affected
		missing              []string // packages with no verdict
		seconds              map[string]float64
		runs, extra          int
		unaffected, affected int
	}
	run := func(t *testing.T, tc testCase) {
		var vs []impact.Verdict
		for i := range 10 {
			pkg := fmt.Sprintf("./p%d", i)
			if slicesContains(tc.missing, pkg) {
				continue
			}
			vs = append(vs, impact.Verdict{Unit: pkg, Affected: slicesContains(tc.reach, pkg), Why: "because"})
		}
		si, why, err := GoBudget(s, list, vs, tc.seconds)
		if err != nil || why != "" {
			t.Fatalf("%v %q", err, why)
		}
		if si.Summary.Runs != tc.runs || si.Extra != tc.extra || si.Summary.Unaffected != tc.unaffected || si.Summary.Affected != tc.affected {
			t.Errorf("runs %d extra %d unaffected %d affected %d; want %d %d %d %d", si.Summary.Runs, si.Extra, si.Summary.Unaffected,
				si.Summary.Affected, tc.runs, tc.extra, tc.unaffected, tc.affected)
		}
		if len(si.Unaffected)+len(si.Summary.Reached) != 10 || si.Summary.UnaffectedUnits+si.Summary.AffectedUnits != 10 || si.Unaffected["./p0"] == slicesContains(append(tc.reach, tc.missing...), "./p0") {
			t.Errorf("unaffected %v, reached %v", si.Unaffected, si.Summary.Reached)
		}
	}
	for _, tc := range []testCase{
		{name: "one package of ten", reach: []string{"./p9"}, runs: 12, extra: 9, unaffected: 18, affected: 2},
		{name: "four of ten", reach: []string{"./p0", "./p1", "./p2", "./p3"}, runs: 7, extra: 4, unaffected: 12, affected: 8},
		{name: "a package without a verdict is affected", missing: []string{"./p5"}, runs: 12, extra: 9, unaffected: 18, affected: 2},
		{name: "none", runs: 0, extra: 0, unaffected: 20, affected: 0},
		{name: "all", reach: []string{"./p0", "./p1", "./p2", "./p3", "./p4", "./p5", "./p6", "./p7", "./p8", "./p9"}, runs: 3, extra: 0, affected: 20},
		{name: "a slow package gets what the suite affords", reach: []string{"./p9"},
			seconds: map[string]float64{"./p9": 10, "./p0": 1, "./p1": 1, "./p2": 1, "./p3": 1, "./p4": 1, "./p5": 1, "./p6": 1, "./p7": 1, "./p8": 1},
			runs:    5, extra: 2, unaffected: 18, affected: 2},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func slicesContains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// TestFilePlan: a suite decided by test file: the gated files each once,
// an unaffected file's tests not run again, and the process's time
// shared by the gated tests.
func TestFilePlan(t *testing.T) {
	s := &config.Suite{Framework: config.FrameworkPytest, Path: ".", Seeds: []flakegate.Seed{"1", "2"}, Exclude: []string{"test_x"}}
	list := &List{Tests: []Test{{File: "a.py", Name: "test_x"}, {File: "a.py", Name: "test_a"}, {File: "b.py", Name: "test_b"}, {File: "a.py", Name: "test_c"}}}
	files, gated, first := GatedFiles(s, list)
	if !slices.Equal(files, []string{"a.py", "b.py"}) || gated != 3 || first == nil || first.Name != "test_a" {
		t.Fatalf("gated files %q %d %+v", files, gated, first)
	}
	if _, _, none := GatedFiles(s, &List{}); none != nil {
		t.Error("an empty list has a first test")
	}
	for _, total := range []time.Duration{0, 10 * time.Second} {
		si, why, err := FilePlan(s, list, []impact.Verdict{{Unit: "a.py", Affected: false}, {Unit: "b.py", Affected: true, Why: "b.py changed"}}, total, gated)
		if err != nil || why != "" {
			t.Fatalf("%v %q", err, why)
		}
		if !si.Unaffected["a.py"] || si.Unaffected["b.py"] || si.UnitOf(list.Tests[2]) != "b.py" || si.Summary.Unit != "test file" ||
			si.Summary.AffectedUnits != 1 || si.Summary.UnaffectedUnits != 1 || len(si.Summary.Reached) != 1 || si.Summary.Reached[0].Why != "b.py changed" {
			t.Errorf("total %v: %+v", total, si)
		}
	}
}

// TestGoListKey: a go suite's listing is named by the base, the path,
// the toolchain and the environment; another framework's is not kept
// here, nor one with no go on the attempts' PATH.
func TestGoListKey(t *testing.T) {
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	s := &config.Suite{Framework: config.FrameworkGo, Path: "./..."}
	k := GoListKey(s, "base1", env)
	if k == "" {
		t.Skip("no go on PATH")
	}
	if len(k) != 32 || k == GoListKey(s, "base2", env) || k == GoListKey(&config.Suite{Framework: config.FrameworkGo, Path: "./a"}, "base1", env) {
		t.Errorf("key %q", k)
	}
	if GoListKey(&config.Suite{Framework: config.FrameworkPytest}, "base1", env) != "" || GoListKey(s, "base1", []string{"PATH=/nonexistent"}) != "" {
		t.Error("a listing is kept that cannot be named")
	}
	if got := ListPath("/c", k); got != filepath.Join("/c", "flakegate", "suitelist", k+".json") {
		t.Errorf("ListPath %s", got)
	}
}

// TestGoListingKept: the base's go listing is kept as printed and read
// back as the same tree; it is named by the listing's key, the tree's
// folder and the prepared layer, and a kept file that is not a whole
// listing is not read (the base is listed again).
func TestGoListingKept(t *testing.T) {
	common := t.TempDir()
	file := GoListingPath(common, "k1", "/w/base-0", "")
	for _, other := range []string{GoListingPath(common, "k2", "/w/base-0", ""), GoListingPath(common, "k1", "/w/base-1", ""), GoListingPath(common, "k1", "/w/base-0", "/l/1")} {
		if other == file {
			t.Fatalf("two listings share the file %s", file)
		}
	}
	if _, ok := ReadGoListing(file); ok {
		t.Fatal("a listing read where none is kept")
	}
	l := &impact.GoListing{
		Env:  []byte(`{"GOMOD":"/w/base-0/go.mod","GOVERSION":"go1.26"}`),
		List: []byte(`{"ImportPath":"example.com/m/a","Name":"a","Dir":"/w/base-0/a","GoFiles":["a.go"]}` + "\n"),
	}
	WriteGoListing(file, l)
	got, ok := ReadGoListing(file)
	if !ok {
		t.Fatal("the kept listing is not read")
	}
	want, err := l.Tree()
	if err != nil {
		t.Fatal(err)
	}
	if got.Root != "/w/base-0" || fmt.Sprint(got.Packages()) != fmt.Sprint(want.Packages()) {
		t.Fatalf("read back root %q packages %v, want %q %v", got.Root, got.Packages(), want.Root, want.Packages())
	}
	if !got.Whole() {
		t.Error("a listing without errors is not whole")
	}
	broken := &impact.GoListing{Env: l.Env, List: []byte(`{"ImportPath":"example.com/m/a","Name":"a","Dir":"/w/base-0/a","Error":{"Err":"no required module provides package x"}}` + "\n")}
	if bt, err := broken.Tree(); err != nil || bt.Whole() {
		t.Errorf("a listing with a package error reads as whole (%v)", err)
	}
	for _, bad := range []string{"", "{", `{"env":"e30=","list":"e30="}`, `{"list":"e30="}`} {
		if err := os.WriteFile(file, []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, ok := ReadGoListing(file); ok {
			t.Errorf("a kept file %q read as a listing", bad)
		}
	}
}

// TestImpactKeptAge: writing a kept session or go listing removes the
// ones of its folder unused for ListMaxAge, and only those.
func TestImpactKeptAge(t *testing.T) {
	common := t.TempDir()
	old, recent := SessionPath(common, "old"), SessionPath(common, "recent")
	for _, f := range []string{old, recent} {
		WriteSession(f, &KeptSession{Session: &impact.PytestSession{}})
	}
	long := time.Now().Add(-ListMaxAge - time.Hour)
	if err := os.Chtimes(old, long, long); err != nil {
		t.Fatal(err)
	}
	l := &impact.GoListing{Env: []byte(`{"GOMOD":"/w/go.mod"}`), List: []byte{}}
	WriteGoListing(GoListingPath(common, "k", "/w", ""), l)
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("a session unused for %v is still kept (%v)", ListMaxAge, err)
	}
	if _, err := os.Stat(recent); err != nil {
		t.Errorf("a recent session was removed: %v", err)
	}
	if _, ok := ReadGoListing(GoListingPath(common, "k", "/w", "")); !ok {
		t.Error("the listing just kept is not read")
	}
}
