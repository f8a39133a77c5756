package suites

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/config"
)

// collectOut is what `pytest --collect-only -q` prints: the node ids,
// an empty line, the count.
const collectOut = "tests/test_a.py::test_one\r\n" +
	"tests/test_a.py::TestK::test_m[x-1]\n" +
	"tests/test_a.py::test_one\n" +
	"tests/helper_test.py::test_h\n" +
	"other/test_o.py::test_out_of_scope\n" +
	"tests/test_a.py:: test_space\n" +
	"tests/test_a.py::-dash\n" +
	"tests/test_a.py::" + "\x01ctl\n" +
	"tests/conftest.py::test_c\n" +
	"tests/test_a.py::test_" + "LONG" + "\n" +
	"no node id\n" +
	"\n" +
	"tests/test_a.py::after_the_empty_line\n" +
	"7 tests collected in 0.01s\n"

// TestCollectPytest: the node ids before the first empty line, in the
// suite's scope, each once; one no triple can name is counted and left
// out; with marks, pytest's own mark evaluation says which are skipped.
func TestCollectPytest(t *testing.T) {
	long := strings.Repeat("n", config.MaxNameLength+1)
	f := &fakeRun{outs: map[string]string{
		"pytest": strings.Replace(collectOut, "test_LONG", long, 1),
		"marks":  "flakegate-xfail tests/helper_test.py::test_h\nflakegate-skipped tests/test_a.py::nope\n",
	}}
	s := &config.Suite{Framework: config.FrameworkPytest, Path: "tests", PythonPath: []string{"src"}}
	list, err := f.lister(t.TempDir(), true).CollectPytest(context.Background(), s, "/usr/bin/python3", true)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, x := range list.Tests {
		ids = append(ids, x.File+"::"+x.Name)
	}
	want := []string{"tests/test_a.py::test_one", "tests/test_a.py::TestK::test_m[x-1]", "tests/helper_test.py::test_h"}
	if !reflect.DeepEqual(ids, want) {
		t.Errorf("tests %q, want %q", ids, want)
	}
	if list.Unnamed != 4 || len(list.UnnamedSome) != 3 || list.UnnamedSome[0] != "tests/test_a.py:: test_space" {
		t.Errorf("unnamed %d %q", list.Unnamed, list.UnnamedSome)
	}
	if !reflect.DeepEqual(list.Skips, map[string]string{"tests/helper_test.py::test_h": "xfail"}) || list.SkipPlan != "" {
		t.Errorf("skips %v plan %q", list.Skips, list.SkipPlan)
	}
	if list.Python != "/usr/bin/python3" || !list.Hypothesis {
		t.Errorf("python %q hypothesis %v", list.Python, list.Hypothesis)
	}
	if list.Gated(s, list.Tests[2]) || !list.Gated(s, list.Tests[0]) {
		t.Error("an xfail test is gated, or a listed one is not")
	}
	// A candidate's listing asks no marks; a failed mark run is said, not an error.
	f.ran = nil
	if _, err := f.lister(t.TempDir(), false).CollectPytest(context.Background(), s, "/usr/bin/python3", false); err != nil || len(f.ran) != 1 {
		t.Errorf("without marks: %v, ran %q", err, f.ran)
	}
	f.fail = map[string]attempt.Outcome{"marks": {Result: attempt.Errored, Reason: "exit 4"}}
	list, err = f.lister(t.TempDir(), true).CollectPytest(context.Background(), s, "/usr/bin/python3", false)
	if err != nil || list.Skips != nil || !strings.HasPrefix(list.SkipPlan, "pytest's mark evaluation: ") {
		t.Errorf("failed marks: %v, skips %v, plan %q", err, list.Skips, list.SkipPlan)
	}
}

// TestCollectPytestFails: a collection that fails is the suite's error;
// pytest's exit 5 (no tests) is an empty list.
func TestCollectPytestFails(t *testing.T) {
	s := &config.Suite{Framework: config.FrameworkPytest, Path: "."}
	f := &fakeRun{outs: map[string]string{"pytest": "E   ImportError: no module x\n"}, fail: map[string]attempt.Outcome{"pytest": {Result: attempt.Fail, ExitCode: 2}}}
	if _, err := f.lister(t.TempDir(), true).CollectPytest(context.Background(), s, "python3", false); err == nil || !strings.Contains(err.Error(), "pytest --collect-only failed in the base tree") || !strings.Contains(err.Error(), "ImportError") {
		t.Errorf("error %v", err)
	}
	f = &fakeRun{outs: map[string]string{"pytest": "\nno tests ran\n"}, fail: map[string]attempt.Outcome{"pytest": {Result: attempt.Fail, ExitCode: 5}}}
	if list, err := f.lister(t.TempDir(), true).CollectPytest(context.Background(), s, "python3", false); err != nil || len(list.Tests) != 0 {
		t.Errorf("exit 5: %+v %v", list, err)
	}
}

// TestPytestProbe: the probe's first word is the interpreter, a second
// "hypothesis" says it has Hypothesis; no interpreter is the suite's error.
func TestPytestProbe(t *testing.T) {
	for _, tc := range []struct {
		out        string
		fail       bool
		python     string
		hypothesis bool
	}{
		{out: "/usr/bin/python3 hypothesis\n", python: "/usr/bin/python3", hypothesis: true},
		{out: "/usr/local/bin/python3\n", python: "/usr/local/bin/python3"},
		{out: "python3\n", fail: true},
		{out: "", fail: true},
	} {
		f := &fakeRun{outs: map[string]string{"sh -c": tc.out}}
		python, hyp, err := f.lister(t.TempDir(), true).PytestProbe(context.Background())
		if (err != nil) != tc.fail || python != tc.python || hyp != tc.hypothesis {
			t.Errorf("%q: %q %v %v", tc.out, python, hyp, err)
		}
	}
}

// TestPytestArgv: the suite's pythonpath comes first as env, the cache
// and pytest-randomly are off, node ids are from the root.
func TestPytestArgv(t *testing.T) {
	got := strings.Join(PytestArgv(&config.Suite{PythonPath: []string{"src", "lib"}}, "/usr/bin/python3"), " ")
	if want := "env PYTHONPATH=src:lib /usr/bin/python3 -m pytest --rootdir=. -p no:cacheprovider -p no:randomly"; got != want {
		t.Errorf("%s\nwant %s", got, want)
	}
	if got := PytestArgv(&config.Suite{}, "py")[0]; got != "py" {
		t.Errorf("no pythonpath: starts with %q", got)
	}
	if Rank(flakegate.Seed("1"), "a::b") == Rank(flakegate.Seed("2"), "a::b") || Rank("1", "a::b") != Rank("1", "a::b") {
		t.Error("Rank is not a function of the seed and the node id")
	}
}

// TestPytestListKey: the probe's JSON names the listing; a probe that
// fails, or prints no JSON, names none (it is not kept).
func TestPytestListKey(t *testing.T) {
	s := &config.Suite{Framework: config.FrameworkPytest, Path: "tests"}
	key := func(out string, fail bool, env ...string) string {
		f := &fakeRun{outs: map[string]string{"fingerprint": out}}
		if fail {
			f.fail = map[string]attempt.Outcome{"fingerprint": {Result: attempt.Fail}}
		}
		k, err := PytestListKey(context.Background(), f.lister(t.TempDir(), true), s, "tree1", "/usr/bin/python3", false, env)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	a := key(`{"python": "/usr/bin/python3"}`, false)
	if len(a) != 32 || a != key(`{"python": "/usr/bin/python3"}`, false) {
		t.Errorf("key %q is not 32 hex digits, or not stable", a)
	}
	if a == key(`{"python": "/usr/bin/python3", "dists": ["x==1"]}`, false) || a == key(`{"python": "/usr/bin/python3"}`, false, "A=1") {
		t.Error("another probe or environment names the same listing")
	}
	if key("not json", false) != "" || key(`{}`, true) != "" {
		t.Error("a failed probe names a listing")
	}
}
