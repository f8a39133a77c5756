package evidence

import (
	"strings"
	"testing"
)

// TestTestStream: each test's end is reported as its line arrives, in
// pieces or whole: go's top-level pass, fail and skip events (a
// subtest's and an output event's are not a test's end), pytest's verbose
// lines (colours or not); a framework whose stream names no test has no
// reader.
func TestTestStream(t *testing.T) {
	var got []string
	add := func(test, outcome string) { got = append(got, test+" "+outcome) }
	g := NewTestStream(FrameworkGo, add)
	out := `{"Action":"run","Package":"example.com/m/a","Test":"TestA"}
{"Action":"output","Package":"example.com/m/a","Test":"TestA","Output":"--- PASS: TestB (0.00s)\n"}
{"Action":"pass","Package":"example.com/m/a","Test":"TestA/sub","Elapsed":0}
{"Action":"pass","Package":"example.com/m/a","Test":"TestA","Elapsed":0.1}
not an event
{"Action":"fail","Package":"example.com/m/a","Test":"TestC","Elapsed":0.2}
{"Action":"skip","Package":"example.com/m/a","Test":"TestD","Elapsed":0}
{"Action":"pass","Package":"example.com/m/a","Elapsed":0.3}
`
	for i := 0; i < len(out); i += 7 { // in pieces that cut lines
		g.Write([]byte(out[i:min(i+7, len(out))]))
	}
	if want := "a.TestA pass|a.TestC fail|a.TestD skip"; strings.Join(got, "|") != want {
		t.Errorf("go: %q, want %q", strings.Join(got, "|"), want)
	}
	got = nil
	p := NewTestStream(FrameworkPytest, add)
	p.Write([]byte("tests/t.py::test_a PASSED                    [ 33%]\ntests/t.py::test_b \x1b[31mFAILED\x1b[0m [ 66%]\r\n"))
	p.Write([]byte("tests/t.py::TestK::test_c[1-2] SKIPPED (why) [100%]\nPASSED tests/t.py::test_a\n"))
	if want := "tests/t.py::test_a pass|tests/t.py::test_b fail|tests/t.py::TestK::test_c[1-2] skip"; strings.Join(got, "|") != want {
		t.Errorf("pytest: %q, want %q", strings.Join(got, "|"), want)
	}
	if NewTestStream(FrameworkVitest, add) != nil {
		t.Error("vitest has a stream reader")
	}
}
