package grade

import (
	"maps"
	"strings"
	"testing"
)

// TestChangedGo: a test whose own source, or a helper, type or variable
// it reaches in any test file of the package changes is changed; the
// others are not; a new init, TestMain, blank import or package clause
// changes every test; a file that does not parse makes every test
// changed; a new test beside the old ones with a new import changes none
// of them.
func TestChangedGo(t *testing.T) {
	base := map[string][]byte{
		"a_test.go": []byte("package a\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) { check(t, 1) }\n\nfunc TestB(t *testing.T) {\n\tif Value(2) != 2 {\n\t\tt.Fatal(\"x\")\n\t}\n}\n\nfunc TestC(t *testing.T) { _ = cases }\n"),
		"h_test.go": []byte("package a\n\nimport \"testing\"\n\nfunc check(t *testing.T, i int) { deep(i) }\n\nfunc deep(i int) int { return i }\n\nvar cases = []int{1, 2}\n"),
	}
	names := []string{"TestA", "TestB", "TestC"}
	edit := func(file, old, new string) map[string][]byte {
		c := maps.Clone(base)
		c[file] = []byte(strings.Replace(string(c[file]), old, new, 1))
		return c
	}
	for _, tc := range []struct {
		name string
		cand map[string][]byte
		want string
	}{
		{"nothing", base, ""},
		{"own body", edit("a_test.go", "Value(2) != 2", "Value(2) != 3"), "TestB"},
		{"a helper two calls away, in another file", edit("h_test.go", "return i", "return i + 1"), "TestA"},
		{"a variable", edit("h_test.go", "{1, 2}", "{1, 2, 3}"), "TestC"},
		{"a new test and a new import", edit("a_test.go", "import \"testing\"\n", "import (\n\t\"strings\"\n\t\"testing\"\n)\n\nfunc TestNew(t *testing.T) { _ = strings.ToUpper(\"x\") }\n"), ""},
		{"an init", edit("h_test.go", "var cases", "func init() { cases = nil }\n\nvar cases"), "TestA TestB TestC"},
		{"a TestMain", edit("h_test.go", "var cases", "func TestMain(m *testing.M) {}\n\nvar cases"), "TestA TestB TestC"},
		{"a blank import", edit("h_test.go", "import \"testing\"", "import (\n\t\"testing\"\n\t_ \"net/http/pprof\"\n)"), "TestA TestB TestC"},
		{"another package clause", edit("h_test.go", "package a", "package a_test"), "TestA TestB TestC"},
		{"does not parse", edit("h_test.go", "func deep", "func deep("), "TestA TestB TestC"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := changedList(ChangedGo(base, tc.cand, names), names); got != tc.want {
				t.Errorf("changed %q, want %q", got, tc.want)
			}
		})
	}
}

// changedList is the names changed says are changed, in order.
func changedList(changed map[string]bool, names []string) string {
	var out []string
	for _, n := range names {
		if changed[n] {
			out = append(out, n)
		}
	}
	return strings.Join(out, " ")
}

const pyBase = `import pytest

from calc import clamp


def helper(x):
    return clamp(x, 0, 10)


@pytest.fixture
def ten():
    return 10


def test_inside():
    assert helper(5) == 5


@pytest.mark.parametrize("x", [1, 2])
def test_param(x, ten):
    assert clamp(x, 0, ten) == x


class TestClamp:
    limit = 10

    def setup_method(self):
        self.lo = 0

    def test_low(self):
        assert clamp(-1, self.lo, self.limit) == 0

    def test_high(self):
        assert clamp(11, self.lo, self.limit) == 10
`

// TestChangedPy: a pytest test whose own source (decorators included),
// or a helper or fixture it names changes is changed; a class's setup or
// attribute changes every test of the class; module code, an autouse
// fixture or pytestmark changes every test; a test appended with a new
// import changes none of the old ones.
func TestChangedPy(t *testing.T) {
	names := []string{"test_inside", "test_param[1]", "test_param[2]", "TestClamp::test_low", "TestClamp::test_high"}
	for _, tc := range []struct {
		name, old, new, want string
	}{
		{"nothing", "", "", ""},
		{"own body", "helper(5) == 5", "helper(5) >= 0", "test_inside"},
		{"a helper", "return clamp(x, 0, 10)", "return x", "test_inside"},
		{"a fixture it names", "return 10", "return 11", "test_param[1] test_param[2]"},
		{"a decorator", "[1, 2]", "[1, 2, 3]", "test_param[1] test_param[2]"},
		{"a method", "clamp(11, self.lo, self.limit) == 10", "True", "TestClamp::test_high"},
		{"the class's setup", "self.lo = 0", "self.lo = -5", "TestClamp::test_low TestClamp::test_high"},
		{"the class's attribute", "limit = 10", "limit = 12", "TestClamp::test_low TestClamp::test_high"},
		{"a test appended with an import", "from calc import clamp\n", "from calc import clamp\nfrom calc import wrap\n", ""},
		{"module code", "from calc import clamp\n", "from calc import clamp\nimport calc\ncalc.clamp = lambda x, lo, hi: x\n", "test_inside test_param[1] test_param[2] TestClamp::test_low TestClamp::test_high"},
		{"an autouse fixture", "@pytest.fixture\ndef ten", "@pytest.fixture(autouse=True)\ndef patch():\n    pass\n\n\n@pytest.fixture\ndef ten", "test_inside test_param[1] test_param[2] TestClamp::test_low TestClamp::test_high"},
		{"pytestmark", "import pytest\n", "import pytest\npytestmark = pytest.mark.skip\n", "test_inside test_param[1] test_param[2] TestClamp::test_low TestClamp::test_high"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cand := strings.Replace(pyBase, tc.old, tc.new, 1)
			if tc.name == "a test appended with an import" {
				cand += "\n\ndef test_wrap():\n    assert wrap(11, 0, 10) == 1\n"
			}
			if got := changedList(ChangedPy([]byte(pyBase), []byte(cand), names), names); got != tc.want {
				t.Errorf("changed %q, want %q", got, tc.want)
			}
		})
	}
	if got := changedList(ChangedPy([]byte(pyBase), []byte(pyBase), []string{"test_made"}), []string{"test_made"}); got != "test_made" {
		t.Errorf("a test no unit defines: changed %q, want it changed", got)
	}
}

const jsBase = `import { test, expect, describe } from "vitest";
import { add } from "../src/calc.js";

const two = 2;

test("adds", () => {
  expect(add(1, 1)).toBe(two);
});

describe("math", () => {
  it("adds twice", () => {
    expect(add(add(1, 1), 1)).toBe(3);
  });
});
`

// TestChangedJS: a js test whose own lines change is changed; code
// outside every test (a helper constant, a hook) changes every test; an
// import that binds a name a test uses changes that test; a test
// appended with a new import changes none; test.each makes every test
// changed (its titles are not read).
func TestChangedJS(t *testing.T) {
	names := []string{"adds", "math adds twice"}
	for _, tc := range []struct {
		name, old, new, want string
	}{
		{"nothing", "", "", ""},
		{"own body", "toBe(3)", "toBe(4)", "math adds twice"},
		{"a constant outside", "const two = 2;", "const two = 3;", "adds math adds twice"},
		{"an import a test uses", `import { add } from "../src/calc.js";`, `import { add } from "../src/other.js";`, "adds math adds twice"},
		{"a test appended with an import", `import { add } from "../src/calc.js";`, "import { add } from \"../src/calc.js\";\nimport { half } from \"../src/half.js\";", ""},
		{"test.each", "describe(\"math\"", "test.each([1])(\"n %i\", () => {});\n\ndescribe(\"math\"", "adds math adds twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cand := strings.Replace(jsBase, tc.old, tc.new, 1)
			if tc.name == "a test appended with an import" {
				cand += "\ntest(\"halves\", () => {\n  expect(half(4)).toBe(2);\n});\n"
			}
			if got := changedList(ChangedJS([]byte(jsBase), []byte(cand), names), names); got != tc.want {
				t.Errorf("changed %q, want %q", got, tc.want)
			}
		})
	}
}
