package discover

import (
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"pgregory.net/rapid"
)

// found runs Find on files and returns "framework path::name" lines.
func found(t *testing.T, files map[string]string) ([]string, *Result) {
	t.Helper()
	fsys := fstest.MapFS{}
	for p, body := range files {
		fsys[p] = &fstest.MapFile{Data: []byte(body), Mode: 0o644}
	}
	res, err := Find(fsys)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tc := range res.Tests {
		out = append(out, tc.Framework+" "+tc.Path+"::"+tc.Name)
	}
	return out, res
}

func TestFind(t *testing.T) {
	type testCase struct {
		name  string
		files map[string]string
		want  []string
	}
	run := func(t *testing.T, tc testCase) {
		got, _ := found(t, tc.files)
		if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("found\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
		}
	}
	goMod := "module example.com/m\n\ngo 1.22\n"
	for _, tc := range []testCase{
		{"go: rapid tests, a plain test, a decoy in a string and a comment", map[string]string{
			"go.mod": goMod,
			"sched/sched_test.go": `package sched

import (
	"testing"

	"pgregory.net/rapid"
)

func TestA(t *testing.T) { rapid.Check(t, func(t *rapid.T) {}) }

func TestB(t *testing.T) { t.Run("x", rapid.MakeCheck(func(t *rapid.T) {})) }

func TestPlain(t *testing.T) {
	_ = "rapid.Check(t, nil)"
	// rapid.Check(t, func(t *rapid.T) {})
}

func Testlower(t *testing.T) { rapid.Check(t, func(t *rapid.T) {}) }

func helper(t *testing.T) { rapid.Check(t, func(t *rapid.T) {}) }
`}, []string{GoRapid + " sched/sched_test.go::TestA", GoRapid + " sched/sched_test.go::TestB"}},
		{"go: an aliased import and a dot import", map[string]string{
			"go.mod":    goMod,
			"a_test.go": "package a\nimport (\n\tT \"testing\"\n\tr \"pgregory.net/rapid\"\n)\nfunc TestAlias(t *T.T) { r.Check(t, func(*r.T) {}) }\nfunc TestOther(t *T.T) { rapid.Check(t, nil) }\n",
			"b_test.go": "package a\nimport (\n\t\"testing\"\n\t. \"pgregory.net/rapid\"\n)\nfunc TestDot(t *testing.T) { Check(t, func(*T) {}) }\n",
		}, []string{GoRapid + " a_test.go::TestAlias", GoRapid + " b_test.go::TestDot"}},
		{"go: no rapid import, a nested module is skipped", map[string]string{
			"go.mod":             goMod,
			"x_test.go":          "package x\nimport \"testing\"\nfunc TestX(t *testing.T) { rapid.Check(t, nil) }\n",
			"sub/go.mod":         "module example.com/sub\n",
			"sub/y_test.go":      "package y\nimport (\"testing\"; \"pgregory.net/rapid\")\nfunc TestY(t *testing.T) { rapid.Check(t, nil) }\n",
			"vendor/v/v_test.go": "package v\nimport (\"testing\"; \"pgregory.net/rapid\")\nfunc TestV(t *testing.T) { rapid.Check(t, nil) }\n",
		}, nil},
		{"pytest: @given in its spellings, a class, a state machine, decoys", map[string]string{
			"tests/test_props.py": `import hypothesis
from hypothesis import given as g, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule

DOC = """
@given(st.integers())
def test_in_a_string(x): pass
"""

@g(st.integers())
def test_alias(x):
    assert x == x

@hypothesis.given(st.integers())
@hypothesis.settings(max_examples=5)
def test_module(x):
    pass

# @g(st.integers())
def test_commented(x):
    pass

def test_plain():
    pass

@g(st.integers())
def helper(x):
    pass

class TestGroup:
    @g(st.integers())
    def test_method(self, x):
        pass

class Helpers:
    @g(st.integers())
    def test_unreachable(self, x):
        pass

class Counter(RuleBasedStateMachine):
    @rule()
    def step(self):
        pass

class Deeper(Counter):
    pass

TestCounter = Counter.TestCase
TestDeeper = Deeper.TestCase
NotATest = Counter.TestCase
`,
			"tests/helpers.py":    "from hypothesis import given\n@given()\ndef test_not_collected(): pass\n",
			"tests/sm_test.py":    "from hypothesis import stateful as sf\nclass M(sf.RuleBasedStateMachine):\n    pass\nTestM = M.TestCase\n",
			".venv/lib/test_x.py": "from hypothesis import given\n@given()\ndef test_venv(): pass\n",
		}, []string{
			PytestHypothesis + " tests/sm_test.py::TestM",
			PytestHypothesis + " tests/test_props.py::test_alias",
			PytestHypothesis + " tests/test_props.py::test_module",
			PytestHypothesis + " tests/test_props.py::TestGroup::test_method",
			PytestHypothesis + " tests/test_props.py::TestCounter",
			PytestHypothesis + " tests/test_props.py::TestDeeper",
		}},
		{"vitest: fc.assert in test and it, describe names, decoys", map[string]string{
			"package.json": `{"devDependencies": {"vitest": "^2.0.0", "fast-check": "^3.0.0"}}`,
			"src/sort.test.ts": "import { describe, it, test, expect } from 'vitest'\n" +
				"import fc from 'fast-check'\n" +
				"const re = /fc.assert(/g\n" +
				"test('plain', () => { expect(1).toBe(1) })\n" +
				"test('in a string', () => { const s = \"fc.assert(x)\"; const u = `fc.assert(${s})` })\n" +
				"test('in a comment', () => { /* fc.assert(p) */ // fc.assert(p)\n })\n" +
				"describe('sort', () => {\n" +
				"  it('keeps length', () => { fc.assert(fc.property(fc.array(fc.integer()), (xs) => xs.length >= 0)) })\n" +
				"  describe(\"deep\", () => { test(`orders`, () => { fc.assert(fc.property(fc.integer(), () => true)) }) })\n" +
				"})\n" +
				"test('top', async () => { await fc.assert(fc.asyncProperty(fc.nat(), async () => true)) })\n",
			"src/named.spec.js": "const { assert: check, property, integer } = require('fast-check')\n" +
				"it('named', () => { check(property(integer(), () => true)) })\n",
			"src/lib.js":                  "import fc from 'fast-check'\ntest('not a test file', () => fc.assert(p))\n",
			"node_modules/x/a.test.js":    "import fc from 'fast-check'\ntest('dep', () => fc.assert(p))\n",
			"src/other.test.js":           "import { fc } from './mine'\ntest('not fast-check', () => fc.assert(p))\n",
			"src/star.test.mjs":           "import * as f from 'fast-check'\ntest('star', () => f.assert(f.property(f.nat(), () => true)))\n",
			"src/__tests__/regex.test.js": "import fc from 'fast-check'\nconst x = 4 / 2 / 1\ntest('after division', () => fc.assert(p))\n",
		}, []string{
			VitestFastCheck + " src/__tests__/regex.test.js::after division",
			VitestFastCheck + " src/named.spec.js::named",
			VitestFastCheck + " src/sort.test.ts::sort keeps length",
			VitestFastCheck + " src/sort.test.ts::sort deep orders",
			VitestFastCheck + " src/sort.test.ts::top",
			VitestFastCheck + " src/star.test.mjs::star",
		}},
		{"jest: the file requires @jest/globals while package.json names both", map[string]string{
			"package.json": `{"devDependencies": {"jest": "^29.0.0", "vitest": "2"}}`,
			"a.test.js":    "const { test } = require('@jest/globals')\nconst fc = require('fast-check')\ntest('j', () => fc.assert(p))\n",
			"b.test.js":    "const fc = require('fast-check')\ntest('neither', () => fc.assert(p))\n",
		}, []string{JestFastCheck + " a.test.js::j"}},
		{"jest: from package.json", map[string]string{
			"package.json":   `{"devDependencies": {"jest": "^29.0.0"}}`,
			"sum.test.js":    "const fc = require('fast-check')\ntest('sum commutes', () => { fc.assert(fc.property(fc.integer(), fc.integer(), (a, b) => a + b === b + a)) })\n",
			"nested/pkg.txt": "",
		}, []string{JestFastCheck + " sum.test.js::sum commutes"}},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func TestFindSkipsAndHook(t *testing.T) {
	_, res := found(t, map[string]string{
		"web/package.json": `{"devDependencies": {"vitest": "1"}}`,
		"web/a.test.js":    "import fc from 'fast-check'\ntest('a', () => fc.assert(p))\n",
		"b.test.js":        "import fc from 'fast-check'\ntest('b', () => fc.assert(p))\n",
		"setup.js":         "// FAST_CHECK_SEED in a comment is no hook\nconst s = 'FAST_CHECK_SEEDS'\n",
		"sub/go.mod":       "module x\n",
		"sub/prop_test.go": "package x\nimport (\"testing\"; \"pgregory.net/rapid\")\nfunc TestP(t *testing.T) { rapid.Check(t, nil) }\n",
		"orphan/p_test.go": "package p\nimport (\"testing\"; \"pgregory.net/rapid\")\nfunc TestQ(t *testing.T) { rapid.Check(t, nil) }\n",
		"broken/b_test.go": "package b\nfunc {",
		"noimport_test.py": "@given(x)\ndef test_x(): pass\n",
		"web/vitest.setup.js": "import fc from 'fast-check'\n" +
			"// the seed hook is in another package; this one has no test of its own\n",
	})
	if len(res.Tests) != 0 {
		t.Errorf("tests %v", res.Tests)
	}
	var skipped []string
	for _, s := range res.Skipped {
		skipped = append(skipped, s.Path+": "+s.Reason)
	}
	got := strings.Join(skipped, "\n")
	for _, want := range []string{"orphan/p_test.go: no go.mod above it", "sub/prop_test.go: its module is sub/go.mod", "b.test.js: no package.json above it", "web/a.test.js: its package is web/package.json"} {
		if !strings.Contains(got, want) {
			t.Errorf("skipped\n%s\nlacks %q", got, want)
		}
	}
	if res.SeedHook {
		t.Error("a comment or another string counted as the seed hook")
	}
	_, res = found(t, map[string]string{"vitest.setup.ts": "import fc from 'fast-check'\nfc.configureGlobal({ seed: Number(process.env.FAST_CHECK_SEED) })\n"})
	if !res.SeedHook {
		t.Error("process.env.FAST_CHECK_SEED is the seed hook")
	}
}

// TestDecoysNeverCount: a fast-check call or a Hypothesis decorator put
// inside a string or a comment, of any text, never makes a test.
func TestDecoysNeverCount(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		filler := rapid.StringMatching(`[a-z (){};.,'"/\\*\n]{0,30}`).Draw(t, "filler")
		jsWrap := rapid.SampledFrom([]string{"// %s\n", "/* %s */", "'%s'", "\"%s\"", "`%s`"}).Draw(t, "jsWrap")
		inner := strings.NewReplacer("*/", "", "\n", " ", "'", "", "\"", "", "`", "", "\\", "", "$", "").Replace(filler + " fc.assert(p) " + filler)
		js := "import fc from 'fast-check'\ntest('t', () => { const x = 1; " + fmt.Sprintf(jsWrap, inner) + "\n})\n"
		if got := jsTests("a.test.js", jsTokenize(js)); len(got) != 0 {
			t.Fatalf("%q counted: %v", js, got)
		}
		pyWrap := rapid.SampledFrom([]string{"# %s\n", "'''%s'''\n", "\"%s\"\n", "x = r'%s'\n"}).Draw(t, "pyWrap")
		pyInner := strings.NewReplacer("\n", " ", "'", "", "\"", "", "\\", "").Replace("@given(st.integers())" + filler)
		py := "from hypothesis import given\n" + fmt.Sprintf(pyWrap, pyInner) + "def test_x(x):\n    pass\n"
		if got := pythonTests("test_a.py", py); len(got) != 0 {
			t.Fatalf("%q counted: %v", py, got)
		}
	})
}

// FuzzJSTokenize: the tokenizer ends on any input, without a panic.
func FuzzJSTokenize(f *testing.F) {
	for _, s := range []string{"`${`${'", "/[/]/", "a / b / c", "'\\", "/*", "x = `a${b}c` / 2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		toks := jsTokenize(src)
		jsTests("a.test.js", toks)
		fcImports(toks)
	})
}

// FuzzPythonTests: the Hypothesis finder ends on any input, without a
// panic, and names only tests pytest would collect.
func FuzzPythonTests(f *testing.F) {
	for _, s := range []string{
		"from hypothesis import given\n@given(x)\ndef test_a(x): pass\n",
		"import hypothesis.stateful as s\nclass M(s.RuleBasedStateMachine): pass\nTestM = M.TestCase\n",
		"from hypothesis import (given as g,\n settings)\nclass TestA:\n\t@g()\n\tasync def test_b(self): ...\n",
		"@", "class", "from hypothesis import", "TestX = .TestCase",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		for _, tc := range pythonTests("test_f.py", src) {
			parts := strings.Split(tc.Name, "::")
			for i, p := range parts {
				ok := strings.HasPrefix(p, "Test") || i == len(parts)-1 && strings.HasPrefix(p, "test")
				if !ok {
					t.Fatalf("%q named %q", src, tc.Name)
				}
			}
		}
	})
}
