package suites

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flakegate/flakegate/config"
)

func readSuiteJS(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "suitejs", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func testIDs(tests []Test) string {
	var ids []string
	for _, st := range tests {
		ids = append(ids, st.File+"::"+st.Name)
	}
	return strings.Join(ids, ",")
}

// TestParseVitestList: the real `vitest list --json=F` of a project
// (testdata/suitejs/README.md): every collected test but the skipped and
// todo ones, its file relative to the folder vitest ran in, its name the
// full name vitest's -t and JSON report use (titles joined by spaces).
func TestParseVitestList(t *testing.T) {
	got, err := parseVitestList(readSuiteJS(t, "vitest-list.json"), "/tmp/jsx/v")
	if err != nil {
		t.Fatal(err)
	}
	want := "tests/a.test.js::one,tests/a.test.js::two,tests/a.test.js::grp three,tests/a.test.js::grp in four," +
		"tests/a.test.js::grp each 1,tests/a.test.js::grp each 2,tests/b.test.js::b1"
	if testIDs(got) != want {
		t.Fatalf("got  %s\nwant %s", testIDs(got), want)
	}
	if _, err := parseVitestList(readSuiteJS(t, "vitest-list.json"), "/elsewhere"); err == nil || !strings.Contains(err.Error(), "outside the tree") {
		t.Errorf("another root: %v", err)
	}
	for _, bad := range []string{"", "{", `{"name": "x"}`, `[{"name": "x"}]`, `[{"name": "x", "file": "/r/a.test.js", "projectName": "web"}]`} {
		if _, err := parseVitestList([]byte(bad), "/r"); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// TestParseJestList: the real JSON report of a jest run whose name
// pattern matches no test: every test by file and full name, describe
// titles included, each test.each case a test of its own; a file that
// fails to run is an error, never an empty list.
func TestParseJestList(t *testing.T) {
	// jest's report says pending of a test.skip and a test.todo as of a
	// test the pattern left out: the source of tests/a.test.js names them.
	source := func(file string) string {
		if file == "tests/a.test.js" {
			return string(readSuiteJS(t, "jest-a.test.js"))
		}
		return ""
	}
	got, err := parseJestList(readSuiteJS(t, "jest-list.json"), "/tmp/jsx/j", source)
	if err != nil {
		t.Fatal(err)
	}
	want := "tests/a.test.js::one,tests/a.test.js::two,tests/a.test.js::grp three,tests/a.test.js::grp in four," +
		"tests/a.test.js::grp each 1,tests/a.test.js::grp each 2,tests/b.test.js::b1"
	if testIDs(got) != want {
		t.Fatalf("got  %s\nwant %s", testIDs(got), want)
	}
	none := func(string) string { return "" }
	if all, _ := parseJestList(readSuiteJS(t, "jest-list.json"), "/tmp/jsx/j", none); len(all) != 9 {
		t.Errorf("without the source: %s", testIDs(all))
	}
	_, err = parseJestList(readSuiteJS(t, "jest-list-broken.json"), "/tmp/jsx/jb", none)
	if err == nil || !strings.Contains(err.Error(), "tests/c.test.js failed to run: ● Test suite failed to run") {
		t.Errorf("a file that does not parse: %v", err)
	}
	for _, bad := range []string{"", "[]", `{"testResults": []}`, `{"numTotalTests": 1, "testResults": [{"name": "../x.test.js"}]}`} {
		if _, err := parseJestList([]byte(bad), "/r", none); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// TestJSSuiteScope: the graded candidate takes a js suite's test files
// from the base: the frameworks' default test patterns under its path.
func TestJSSuiteScope(t *testing.T) {
	s := &config.Suite{Framework: config.FrameworkJest, Path: "web"}
	for rel, want := range map[string]bool{
		"web/a.test.js": true, "web/x/b.spec.tsx": true, "web/__tests__/c.js": true, "web/a.test.mjs": true,
		"web/a.js": false, "web/a.test.json": false, "other/a.test.js": false, "web.test.js": false,
	} {
		if got := InScope(s, rel); got != want {
			t.Errorf("%s: %v, want %v", rel, got, want)
		}
	}
	if !InScope(&config.Suite{Framework: config.FrameworkVitest, Path: "."}, "__tests__/a.ts") {
		t.Error("the root's __tests__")
	}
}

// TestJestSkips: the titles a jest file skips or leaves todo, read from
// its tokens: a call in a comment or a string, or a member call, is none.
func TestJestSkips(t *testing.T) {
	tests, describes := jestSkips(`test.skip("a", () => {});
it.todo('b');
xit("c", () => {});
xtest(` + "`d`" + `, () => {});
describe.skip("D", () => {});
xdescribe("E", () => {});
// test.skip("no comment")
const s = 'test.skip("no string")';
obj.test.skip("no member");
test("kept", () => {});
test.skip(name, () => {});
`)
	if strings.Join(sortedKeys(tests), ",") != "a,b,c,d" || strings.Join(sortedKeys(describes), ",") != "D,E" {
		t.Fatalf("tests %v, describes %v", tests, describes)
	}
}

func sortedKeys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
