package suites

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/flakegate/flakegate/config"
)

// TestSuiteListKept: a go suite's listing reads back as it was written,
// and every field of List is either kept or named here as pytest's
// alone: a new field must be kept too (or the kept listing would lose it).
func TestSuiteListKept(t *testing.T) {
	list := &List{
		Tests:    []Test{{Pkg: "./a", File: "a/a_test.go", Name: "TestA"}, {Pkg: ".", File: "x_test.go", Name: "TestX"}},
		PkgTests: map[string][]string{"./a": {"TestA", "ExampleA"}, ".": {"TestX"}},
		Rapid:    map[string]bool{"./a": true},
		NotRun:   NotRunSet{NotRunBench: {N: 4, Some: []string{`"./a BenchmarkA"`}}},
	}
	file := filepath.Join(t.TempDir(), "suitelist", "k.json")
	WriteList(file, list)
	got, ok := ReadList(file)
	if !ok || !reflect.DeepEqual(got, list) {
		t.Fatalf("read back %+v, %v; want %+v", got, ok, list)
	}
	kept := map[string]bool{"Tests": true, "PkgTests": true, "Rapid": true, "NotRun": true, "Python": false, "Hypothesis": false, "Unnamed": false, "UnnamedSome": false, "Skips": false, "SkipPlan": false,
		"Key": false} // Key is the kept file's own name, set when it is read
	typ := reflect.TypeOf(List{})
	for i := range typ.NumField() {
		if _, ok := kept[typ.Field(i).Name]; !ok {
			t.Errorf("List.%s is new: keep it in listFile (cache.go), or name it here if only pytest's listing sets it", typ.Field(i).Name)
		}
	}
	if _, ok := ReadList(filepath.Join(t.TempDir(), "none.json")); ok {
		t.Fatal("a missing kept listing reads as one")
	}
}

// TestParseMarks: the mark plugin's lines name a listed node id after
// "flakegate-skipped " or "flakegate-xfail "; a test's own output, an
// unlisted id and pytest's other lines are not skips.
func TestParseMarks(t *testing.T) {
	tests := []Test{{File: "t/test_a.py", Name: "test_skip"}, {File: "t/test_a.py", Name: "test_if[a b]"},
		{File: "t/test_a.py", Name: "test_never"}, {File: "t/test_a.py", Name: "test_runs"}, {File: "t/test_a.py", Name: "TestK::test_m"}}
	out := "t/test_a.py::test_skip\nt/test_a.py::test_runs\n\n5 tests collected in 0.01s\n" +
		"flakegate-skipped t/test_a.py::test_skip\n" +
		"flakegate-skipped t/test_a.py::test_if[a b]\r\n" +
		"flakegate-xfail t/test_a.py::test_never\n" +
		" flakegate-skipped t/test_a.py::TestK::test_m\n" +
		"flakegate-skippedt/test_a.py::test_runs\n" +
		"flakegate-skipped t/test_other.py::test_x\n" +
		"flakegate-skipped \n"
	got := parseMarks([]byte(out), tests)
	want := map[string]string{"t/test_a.py::test_skip": "skipped", "t/test_a.py::test_if[a b]": "skipped", "t/test_a.py::test_never": "xfail"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	list := &List{Tests: tests, Skips: got}
	s := &config.Suite{Exclude: []string{"test_runs"}}
	var gated []string
	for _, x := range tests {
		if list.Gated(s, x) {
			gated = append(gated, x.Name)
		}
	}
	if !reflect.DeepEqual(gated, []string{"TestK::test_m"}) {
		t.Fatalf("gated %v, want only TestK::test_m (test_runs is excluded)", gated)
	}
}
