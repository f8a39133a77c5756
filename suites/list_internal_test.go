package suites

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/config"
)

// fakeRun answers a Lister's commands from canned outputs, by the
// command's first words; it records what ran.
type fakeRun struct {
	outs map[string]string // "go list", "go test", "sh -c", "pytest", "marks", "fingerprint"
	fail map[string]attempt.Outcome
	ran  []string
}

func (f *fakeRun) key(argv []string) string {
	j := strings.Join(argv, " ")
	switch {
	case strings.HasPrefix(j, "go list"):
		return "go list"
	case strings.HasPrefix(j, "go test"):
		return "go test"
	case strings.HasPrefix(j, "sh -c"):
		return "sh -c"
	case strings.Contains(j, "MARKS = "):
		return "marks"
	case strings.Contains(j, "--collect-only"):
		return "pytest"
	case strings.Contains(j, "importlib.metadata"):
		return "fingerprint"
	}
	return j
}

func (f *fakeRun) run(_ context.Context, argv []string) (attempt.Outcome, []byte, error) {
	k := f.key(argv)
	f.ran = append(f.ran, k)
	if o, ok := f.fail[k]; ok {
		return o, []byte(f.outs[k]), nil
	}
	out, ok := f.outs[k]
	if !ok {
		return attempt.Outcome{}, nil, errors.New("unexpected command: " + strings.Join(argv, " "))
	}
	return attempt.Outcome{Result: attempt.Pass}, []byte(out), nil
}

func (f *fakeRun) lister(dir string, marks bool) *Lister {
	return &Lister{Dir: dir, Run: f.run, Marks: marks,
		Fail: func(format string, args ...any) error { return fmt.Errorf("suite: "+format, args...) }}
}

func goListEvents(pkg string, names ...string) string {
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, `{"Action":"output","Package":%q,"Output":%q}`+"\n", pkg, n+"\n")
	}
	fmt.Fprintf(&b, `{"Action":"output","Package":%q,"Output":"ok  \t%s\t0.01s\n"}`+"\n", pkg, pkg)
	return b.String()
}

// TestListGo: go list's packages of the module, go test -json -list's
// names, each test's file from the declarations; what go test does not
// run as a test (a benchmark, an example without output) is noted, a
// name the code printed is not a test, and rapid is seen in an import.
func TestListGo(t *testing.T) {
	dir := pyTree(t, map[string]string{
		"go.mod":       "module example.com/m // the module\n\ngo 1.22\n",
		"a/a_test.go":  "package a\nimport \"testing\"\nfunc TestA(t *testing.T) {}\nfunc BenchmarkA(b *testing.B) {}\nfunc ExampleA() {}\nfunc ExampleB() {}\n// Output:\n",
		"a/x_test.go":  "package a_test\nimport (\"testing\"; \"pgregory.net/rapid\")\nfunc TestX(t *testing.T) { rapid.Check(t, nil) }\nfunc Testlower(t *testing.T) {}\nfunc FuzzF(f *testing.F) {}\n",
		"root_test.go": "package m\nimport \"testing\"\nfunc TestRoot(t *testing.T) {}\n",
	})
	f := &fakeRun{outs: map[string]string{
		"go list": "example.com/m\t/sandbox/tree\troot_test.go\t\n" +
			"example.com/m/a\t/sandbox/tree/a\ta_test.go\tx_test.go\n" +
			"example.com/m/none\t/sandbox/tree/none\t\t\n" +
			"other.org/dep\t/x\tdep_test.go\t\n",
		"go test": goListEvents("example.com/m", "TestRoot") +
			goListEvents("example.com/m/a", "TestA", "BenchmarkA", "ExampleB", "TestX", "FuzzF", "Testlower", "TestPrinted", "TestA") +
			"not json\n" + `{"Action":"output","Package":"example.com/m/a","Test":"TestA","Output":"TestZ\n"}` + "\n",
	}}
	s := &config.Suite{Framework: config.FrameworkGo, Path: "./..."}
	list, err := f.lister(dir, true).List(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, x := range list.Tests {
		ids = append(ids, x.Pkg+" "+x.File+" "+x.Name)
	}
	want := []string{". root_test.go TestRoot", "./a a/a_test.go TestA", "./a a/a_test.go ExampleB", "./a a/x_test.go TestX", "./a a/x_test.go FuzzF"}
	if !reflect.DeepEqual(ids, want) {
		t.Errorf("tests\n%q\nwant\n%q", ids, want)
	}
	if got := list.PkgTests["./a"]; len(got) != 8 || got[0] != "TestA" {
		t.Errorf("./a's list as printed: %q", got)
	}
	if !list.Rapid["./a"] || list.Rapid["."] {
		t.Errorf("rapid %v", list.Rapid)
	}
	if b := list.NotRun[NotRunBench]; b == nil || b.N != 1 || b.Some[0] != `"./a BenchmarkA"` {
		t.Errorf("benchmarks %+v", b)
	}
	if e := list.NotRun[NotRunExample]; e == nil || e.N != 1 || e.Some[0] != `"./a ExampleA"` {
		t.Errorf("examples %+v", e)
	}
	if !reflect.DeepEqual(f.ran, []string{"go list", "go test"}) {
		t.Errorf("ran %q", f.ran)
	}
}

// TestListGoFails: each way a go listing cannot be made is the suite's
// error, with what the command said.
func TestListGoFails(t *testing.T) {
	s := &config.Suite{Framework: config.FrameworkGo, Path: "./..."}
	mod := map[string]string{"go.mod": "module example.com/m\n", "a/a_test.go": "package a\nfunc TestA(\n"}
	for _, tc := range []struct {
		name  string
		files map[string]string
		f     *fakeRun
		want  string
	}{
		{"no go.mod", map[string]string{"x.go": "package x\n"}, &fakeRun{}, "needs the module's go.mod"},
		{"go list fails", mod, &fakeRun{outs: map[string]string{"go list": "pattern ./...: no Go files\n"}, fail: map[string]attempt.Outcome{"go list": {Result: attempt.Fail, Reason: "exit 1"}}}, "go list ./... failed (fail exit 1): pattern"},
		{"a test file that does not parse", mod, &fakeRun{outs: map[string]string{"go list": "example.com/m/a\t/t/a\ta_test.go\t\n"}}, "cannot parse a/a_test.go"},
		{"go test -list fails", map[string]string{"go.mod": "module example.com/m\n", "a/a_test.go": "package a\n"},
			&fakeRun{outs: map[string]string{"go list": "example.com/m/a\t/t/a\ta_test.go\t\n", "go test": "build failed\n"}, fail: map[string]attempt.Outcome{"go test": {Result: attempt.Fail}}},
			"go test -list failed in the base tree"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.f.lister(pyTree(t, tc.files), true).List(context.Background(), s)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
	// No package of the module has a test file: an empty list, and no go test run.
	f := &fakeRun{outs: map[string]string{"go list": "example.com/m\t/t\t\t\n"}}
	list, err := f.lister(pyTree(t, map[string]string{"go.mod": "module example.com/m\n"}), true).List(context.Background(), s)
	if err != nil || len(list.Tests) != 0 || len(f.ran) != 1 {
		t.Fatalf("%+v %v, ran %q", list, err, f.ran)
	}
}

// TestGoTestKind: the prefix alone, or followed by anything but a
// lower-case letter, as go test decides it.
func TestGoTestKind(t *testing.T) {
	for name, want := range map[string]bool{"Test": true, "TestA": true, "Test_a": true, "Test1": true, "Testa": false, "TestÄ": true, "Testé": false, "Tes": false, "XTest": false} {
		if got := GoTestKind(name, "Test"); got != want {
			t.Errorf("GoTestKind(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestGoModulePath: the module line, quoted or not, a comment after it.
func TestGoModulePath(t *testing.T) {
	for body, want := range map[string]string{
		"module example.com/m\n":                "example.com/m",
		"// x\nmodule \"example.com/q\" // c\n": "example.com/q",
		"go 1.22\nmodule\texample.com/t\n":      "example.com/t",
		"modules example.com/no\ngo 1.22\n":     "",
		"moduleexample.com/no\n":                "",
	} {
		dir := pyTree(t, map[string]string{"go.mod": body})
		got, err := GoModulePath(filepath.Join(dir, "go.mod"))
		if got != want || (want == "") != (err != nil) {
			t.Errorf("%q: %q %v, want %q", body, got, err, want)
		}
	}
	if _, err := GoModulePath(filepath.Join(t.TempDir(), "go.mod")); err == nil {
		t.Error("no go.mod is no error")
	}
}

// TestShortIDAndLastLines: a long id is cut and quoted; the end of an
// output is its last lines joined.
func TestShortIDAndLastLines(t *testing.T) {
	if got := ShortID("a\tb"); got != `"a\tb"` {
		t.Errorf("ShortID %s", got)
	}
	if got := ShortID(strings.Repeat("x", 100)); len(got) != 82 || !strings.HasSuffix(got, `..."`) {
		t.Errorf("ShortID of 100 bytes: %s", got)
	}
	if got := LastLines([]byte("a\nb\nc\n\n"), 2); got != "b | c" {
		t.Errorf("LastLines %q", got)
	}
}

// TestFresh: the candidate's tests its triples do not grade are those
// the base does not list and those the patch changes; a go test moved
// to another file of its package is still the base's, a pytest test in
// another file is not; an excluded test is never one.
func TestFresh(t *testing.T) {
	base := &List{Tests: []Test{{Pkg: "./p", File: "p/a_test.go", Name: "TestA"}, {Pkg: "./p", File: "p/a_test.go", Name: "TestB"},
		{File: "t/test_a.py", Name: "test_a"}}}
	cand := &List{Tests: []Test{{Pkg: "./p", File: "p/b_test.go", Name: "TestA"}, {Pkg: "./p", File: "p/a_test.go", Name: "TestB"},
		{Pkg: "./p", File: "p/a_test.go", Name: "TestNew"}, {Pkg: "./p", File: "p/a_test.go", Name: "TestSlowNew"}}}
	changed := func(t Test) bool { return t.Name == "TestB" }
	goSuite := &config.Suite{Framework: config.FrameworkGo, Exclude: []string{"TestSlow*"}}
	var got []string
	for _, ft := range Fresh(goSuite, base, cand, changed) {
		got = append(got, ft.File+"::"+ft.Name)
	}
	if want := []string{"p/a_test.go::TestB", "p/a_test.go::TestNew"}; !reflect.DeepEqual(got, want) {
		t.Errorf("go: %v, want %v", got, want)
	}
	py := &List{Tests: []Test{{File: "t/test_a.py", Name: "test_a"}, {File: "t/test_b.py", Name: "test_a"}}}
	fresh := Fresh(&config.Suite{Framework: config.FrameworkPytest}, base, py, func(Test) bool { return false })
	if len(fresh) != 1 || fresh[0].File != "t/test_b.py" {
		t.Errorf("pytest: %+v", fresh)
	}
	if fresh := Fresh(goSuite, base, base, func(Test) bool { return false }); fresh != nil {
		t.Errorf("the base's own list: %+v", fresh)
	}
}
