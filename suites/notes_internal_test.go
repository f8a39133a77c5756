package suites

import (
	"reflect"
	"testing"
)

// TestNotes: the lines a check says of what a suite does not gate, in
// their order and words.
func TestNotes(t *testing.T) {
	l := &List{Unnamed: 1, UnnamedSome: []string{"t.py::\x01"},
		Tests:    []Test{{File: "t.py", Name: "test_a"}, {File: "t.py", Name: "test_b"}},
		Skips:    map[string]string{"t.py::test_b": "xfail"},
		SkipPlan: "pytest's mark evaluation: error",
		NotRun:   NotRunSet{NotRunBench: {N: 2, Some: []string{`"./a BenchmarkA"`, `"./a BenchmarkB"`}}, NotRunExample: {N: 1, Some: []string{`"./a ExampleA"`}}}}
	want := []string{
		`suites[3]: 1 listed test is not gated: a name longer than 512 bytes or with a control character cannot be a triple's ("t.py::\x01")`,
		"suites[3]: cannot tell which tests the base skips (pytest's mark evaluation: error): a test that skips itself is INCOMPLETE in every check; name it in exclude:",
		`suites[3]: 1 listed test is not gated: the base skips it or expects it to fail, so no run of it passes ("t.py::test_b" xfail)`,
		`suites[3]: 2 functions are not gated: benchmarks (go test runs them only with -bench) ("./a BenchmarkA", "./a BenchmarkB")`,
		`suites[3]: 1 function is not gated: examples without an output comment (go test compiles them and runs none) ("./a ExampleA")`,
	}
	if got := Notes(3, l); !reflect.DeepEqual(got, want) {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
	l = &List{Unnamed: 2, UnnamedSome: []string{"a", "b"}, Tests: []Test{{File: "t.py", Name: "x"}, {File: "t.py", Name: "y"}}, Skips: map[string]string{"t.py::x": "skipped", "t.py::y": "skipped"}}
	want = []string{
		`suites[0]: 2 listed tests are not gated: a name longer than 512 bytes or with a control character cannot be a triple's ("a", "b")`,
		`suites[0]: 2 listed tests are not gated: the base skips them or expects them to fail, so no run of them passes ("t.py::x" skipped, "t.py::y" skipped)`,
	}
	if got := Notes(0, l); !reflect.DeepEqual(got, want) {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
	if got := Notes(0, &List{}); got != nil {
		t.Errorf("an empty list says %q", got)
	}
}
