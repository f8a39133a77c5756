package suites

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/impact"
)

func sorted(s *config.Suite, slots []Slot) []string {
	sort.SliceStable(slots, func(a, b int) bool { return Less(s, slots[a], slots[b]) })
	var got []string
	for _, sl := range slots {
		got = append(got, string(sl.Seed)+" "+sl.Pkg+" "+sl.Name)
	}
	return got
}

// TestLess: listed seeds first in the suite's order, then drawn ones by
// value; within a seed, go by package then name, pytest by Rank, vitest
// and jest as listed.
func TestLess(t *testing.T) {
	seeds := []flakegate.Seed{"9", "3"}
	goSuite := &config.Suite{Framework: config.FrameworkGo, Seeds: seeds}
	got := sorted(goSuite, []Slot{{Seed: "77", Pkg: "./a", Name: "TestA"}, {Seed: "3", Pkg: "./b", Name: "TestA"}, {Seed: "3", Pkg: "./a", Name: "TestZ"},
		{Seed: "12", Pkg: "./a", Name: "TestA"}, {Seed: "9", Pkg: "./a", Name: "TestB"}, {Seed: "3", Pkg: "./a", Name: "TestB"}})
	want := []string{"9 ./a TestB", "3 ./a TestB", "3 ./a TestZ", "3 ./b TestA", "12 ./a TestA", "77 ./a TestA"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("go: %q\nwant %q", got, want)
	}
	js := &config.Suite{Framework: config.FrameworkVitest, Seeds: seeds}
	got = sorted(js, []Slot{{Seed: "3", Name: "z"}, {Seed: "9", Name: "y"}, {Seed: "3", Name: "a"}})
	if want := []string{"9  y", "3  z", "3  a"}; !reflect.DeepEqual(got, want) {
		t.Errorf("vitest: %q, want %q", got, want)
	}
	py := &config.Suite{Framework: config.FrameworkPytest, Seeds: seeds}
	var slots []Slot
	for _, n := range []string{"t.py::a", "t.py::b", "t.py::c", "t.py::d"} {
		slots = append(slots, Slot{Seed: "3", Name: n, Label: n})
	}
	sort.SliceStable(slots, func(a, b int) bool { return Less(py, slots[a], slots[b]) })
	for i := 1; i < len(slots); i++ {
		if Rank("3", slots[i-1].Label) > Rank("3", slots[i].Label) {
			t.Errorf("pytest: %q before %q", slots[i-1].Label, slots[i].Label)
		}
	}
}

// TestOrders: each triple's order record: go's package, flags and its
// listed names' digest; vitest's and jest's file; pytest's node ids of
// the seed in run order.
func TestOrders(t *testing.T) {
	l := &List{PkgTests: map[string][]string{"./a": {"TestA", "TestB"}}, Rapid: map[string]bool{"./a": true}, Hypothesis: true,
		Tests: []Test{{File: "a.test.js", Name: "x"}, {File: "a.test.js", Name: "y"}, {File: "b.test.js", Name: "z"}}}
	o := Orders(&config.Suite{Framework: config.FrameworkGo}, l, []Slot{{Seed: "5", Pkg: "./a", Name: "TestA"}})[0]
	if o.Package != "./a" || !reflect.DeepEqual(o.Flags, []string{"-shuffle=5", "-rapid.seed=5"}) || o.Tests != 2 || o.TestsSHA256 != flakegate.SHA256Hex([]byte("TestA\nTestB")) {
		t.Errorf("go %+v", o)
	}
	o = Orders(&config.Suite{Framework: config.FrameworkJest}, l, []Slot{{Seed: "5", Path: "a.test.js", Name: "x"}})[0]
	if o.File != "a.test.js" || !reflect.DeepEqual(o.Flags, []string{"--randomize", "--seed=5"}) || o.Tests != 2 || o.TestsSHA256 != flakegate.SHA256Hex([]byte("x\ny")) {
		t.Errorf("jest %+v", o)
	}
	ords := Orders(&config.Suite{Framework: config.FrameworkPytest}, l, []Slot{{Seed: "5", Label: "t::b"}, {Seed: "6", Label: "t::a"}, {Seed: "5", Label: "t::a"}})
	if !reflect.DeepEqual(ords[0].Flags, []string{"--hypothesis-seed=5"}) || ords[0].Tests != 2 || ords[0].TestsSHA256 != flakegate.SHA256Hex([]byte("t::b\nt::a")) || ords[1].Tests != 1 || ords[2] == ords[0] {
		t.Errorf("pytest %+v %+v", ords[0], ords[1])
	}
}

// TestRunOrder: a go suite's triples run by seed (the suite's listed
// seeds first), then package, then name, whatever order they came in;
// each one's order is its package's, and equal slots keep their places.
func TestRunOrder(t *testing.T) {
	s := &config.Suite{Framework: config.FrameworkGo, Seeds: []flakegate.Seed{"9"}}
	l := &List{PkgTests: map[string][]string{"./a": {"TestA", "TestB"}, "./b": {"TestC"}}, Rapid: map[string]bool{}}
	slots := []Slot{{Seed: "1", Pkg: "./b", Name: "TestC"}, {Seed: "9", Pkg: "./a", Name: "TestB"}, {Seed: "1", Pkg: "./a", Name: "TestA"},
		{Seed: "9", Pkg: "./a", Name: "TestA"}, {Seed: "1", Pkg: "./a", Name: "TestA", Label: "second"}}
	run, orders := RunOrder(s, l, slots)
	if !reflect.DeepEqual(run, []int{3, 1, 2, 4, 0}) {
		t.Fatalf("run order %v", run)
	}
	for k, o := range orders {
		sl := slots[run[k]]
		if o.Package != sl.Pkg || o.Seed != sl.Seed || o.Tests != len(l.PkgTests[sl.Pkg]) {
			t.Errorf("order %d (%+v): %+v", k, sl, o)
		}
	}
	if run, orders := RunOrder(s, l, nil); len(run) != 0 || len(orders) != 0 {
		t.Errorf("no slots: %v %v", run, orders)
	}
}

// TestProperty: a suite test's property carries the suite's seeds and
// budget, the config's prepare and probe runs, and its framework's run.
func TestProperty(t *testing.T) {
	cfg := &config.Config{FlakeProbeRuns: 7, Properties: make([]config.Property, 2)}
	l := &List{Rapid: map[string]bool{"./a": true}, Python: "/usr/bin/python3", Hypothesis: true}
	for _, tc := range []struct {
		s    *config.Suite
		t    Test
		want string
	}{
		{&config.Suite{Framework: config.FrameworkGo}, Test{Pkg: "./a", File: "a/a_test.go", Name: "TestA"}, "go test -shuffle={seed} -run ^{name}$ ./a -rapid.seed={seed}"},
		{&config.Suite{Framework: config.FrameworkGo}, Test{Pkg: "./b", File: "b/b_test.go", Name: "TestB"}, "go test -shuffle={seed} -run ^{name}$ ./b"},
		{&config.Suite{Framework: config.FrameworkPytest}, Test{File: "t.py", Name: "test_a"}, "/usr/bin/python3 -m pytest --rootdir=. -p no:cacheprovider -p no:randomly {path}::{name} --hypothesis-seed={seed}"},
		{&config.Suite{Framework: config.FrameworkJest}, Test{File: "a.test.js", Name: "x y"}, "node node_modules/jest/bin/jest.js --ci --randomize --seed={seed} {path} -t ^{name}$"},
		{&config.Suite{Framework: config.FrameworkVitest}, Test{File: "a.test.js", Name: "x"}, "node node_modules/vitest/vitest.mjs run --sequence.shuffle --sequence.seed={seed} {path} -t ^{name}$"},
	} {
		tc.s.Seeds, tc.s.RandomSeeds = []flakegate.Seed{"1"}, 2
		p := Property(cfg, tc.s, tc.t, l, "fx")
		if got := strings.Join(p.Run, " "); got != tc.want {
			t.Errorf("%s: %s\nwant %s", tc.s.Framework, got, tc.want)
		}
		if p.Path != tc.t.File || p.Name != tc.t.Name || p.Index != 2 || p.FlakeProbeRuns != 7 || p.Fixture != "fx" || !p.Batch || p.Suite != tc.s || p.RandomSeeds != 2 {
			t.Errorf("%s: %+v", tc.s.Framework, p)
		}
	}
}

// TestInScopeGoPytest: a go suite's *_test.go files under its packages,
// a pytest suite's test_*.py and *_test.py under its path.
func TestInScopeGoPytest(t *testing.T) {
	for _, tc := range []struct {
		fw, path, rel string
		want          bool
	}{
		{config.FrameworkGo, "./...", "a_test.go", true},
		{config.FrameworkGo, "./...", "a/b/c_test.go", true},
		{config.FrameworkGo, "./a/...", "a/b/c_test.go", true},
		{config.FrameworkGo, "./a/...", "ab/c_test.go", false},
		{config.FrameworkGo, "./a", "a/c_test.go", true},
		{config.FrameworkGo, "./a", "a/b/c_test.go", false},
		{config.FrameworkGo, ".", "c_test.go", true},
		{config.FrameworkGo, "./...", "a/c.go", false},
		{config.FrameworkPytest, ".", "t/test_a.py", true},
		{config.FrameworkPytest, "tests", "tests/a_test.py", true},
		{config.FrameworkPytest, "tests", "other/test_a.py", false},
		{config.FrameworkPytest, "tests", "tests/conftest.py", false},
		{config.FrameworkPytest, "tests", "tests/test_a.txt", false},
		{"other", ".", "test_a.py", false},
	} {
		if got := InScope(&config.Suite{Framework: tc.fw, Path: tc.path}, tc.rel); got != tc.want {
			t.Errorf("%s %s %s: %v", tc.fw, tc.path, tc.rel, got)
		}
	}
}

// TestListJS: a vitest or jest suite's listing needs the runner in the
// tree or in the prepared layer; the report's tests under the suite's
// path are its list.
func TestListJS(t *testing.T) {
	dir := pyTree(t, map[string]string{"node_modules/vitest/vitest.mjs": ""})
	report := `[{"name":"g one","file":"/sb/t/src/a.test.ts"},{"name":"top","file":"/sb/t/other/b.test.ts"}]`
	var argvs []string
	l := &Lister{Dir: dir, Fail: (&fakeRun{}).lister("", false).Fail,
		RunReport: func(_ context.Context, argv []string, flag string) (attempt.Outcome, []byte, []byte, string, error) {
			argvs = append(argvs, strings.Join(argv, " ")+" "+flag)
			return attempt.Outcome{Result: attempt.Pass}, nil, []byte(report), "/sb/t", nil
		}}
	list, err := l.List(context.Background(), &config.Suite{Framework: config.FrameworkVitest, Path: "src"})
	if err != nil || len(list.Tests) != 1 || list.Tests[0] != (Test{File: "src/a.test.ts", Name: "g one"}) {
		t.Fatalf("%+v %v", list, err)
	}
	if want := "node node_modules/vitest/vitest.mjs list src --json="; argvs[0] != want {
		t.Errorf("argv %q, want %q", argvs[0], want)
	}
	// jest: in the prepared layer only; its report lists nothing here.
	layer := pyTree(t, map[string]string{"tree/node_modules/jest/bin/jest.js": ""})
	l.Prepared = func(context.Context) (string, error) { return layer, nil }
	report = `{"numTotalTests":0,"testResults":[]}`
	if _, err := l.List(context.Background(), &config.Suite{Framework: config.FrameworkJest, Path: "."}); err != nil {
		t.Fatal(err)
	}
	if want := "node node_modules/jest/bin/jest.js --ci --json --passWithNoTests -t (?!) --outputFile="; argvs[1] != want {
		t.Errorf("argv %q, want %q", argvs[1], want)
	}
	os.Remove(filepath.Join(layer, "tree/node_modules/jest/bin/jest.js"))
	if _, err := l.List(context.Background(), &config.Suite{Framework: config.FrameworkJest, Path: "."}); err == nil || !strings.Contains(err.Error(), "make the prepare install jest") {
		t.Errorf("no runner: %v", err)
	}
	l.Prepared = nil
	if _, err := l.List(context.Background(), &config.Suite{Framework: config.FrameworkJest, Path: "."}); err == nil || !strings.Contains(err.Error(), "add a top-level prepare") {
		t.Errorf("no runner, no prepare: %v", err)
	}
	l.RunReport = nil
	if _, err := l.List(context.Background(), &config.Suite{Framework: config.FrameworkVitest, Path: "."}); err == nil || !strings.Contains(err.Error(), "cannot be listed here yet") {
		t.Errorf("no RunReport: %v", err)
	}
}

// TestSessionKept: a kept session reads back; one that is not whole is
// none; its file is named by the listing's key.
func TestSessionKept(t *testing.T) {
	common := t.TempDir()
	file := SessionPath(common, "k1")
	if file == SessionPath(common, "k2") || filepath.Dir(file) != filepath.Join(common, "flakegate", "impact") {
		t.Fatalf("path %s", file)
	}
	if _, ok := ReadSession(file); ok {
		t.Fatal("no file reads as a session")
	}
	k := &KeptSession{Session: &impact.PytestSession{Read: map[string]bool{}, Listed: map[string]bool{}, Modules: map[string]bool{}}, Seconds: 1.5}
	WriteSession(file, k)
	got, ok := ReadSession(file)
	if !ok || got.Seconds != 1.5 {
		t.Fatalf("read back %+v %v", got, ok)
	}
	os.WriteFile(file, []byte(`{"session":{},"seconds":1}`), 0o600)
	if _, ok := ReadSession(file); ok {
		t.Error("a session without its maps reads as whole")
	}
}
