package grade

import (
	"context"
	"maps"
	"slices"
	"sort"
	"strings"
	"testing"
)

// tree is a revision of files for Build.
func tree(files map[string]string) Tree {
	set := map[string]bool{}
	for f := range files {
		set[f] = true
	}
	return Tree{Files: set, Read: func(_ context.Context, paths []string) (map[string][]byte, error) {
		out := map[string][]byte{}
		for _, p := range paths {
			if s, ok := files[p]; ok {
				out[p] = []byte(s)
			}
		}
		return out, nil
	}}
}

// diffOf lists the paths that differ between two revisions.
func diffOf(base, cand map[string]string) []string {
	var out []string
	for f, s := range base {
		if c, ok := cand[f]; !ok || c != s {
			out = append(out, f)
		}
	}
	for f := range cand {
		if _, ok := base[f]; !ok {
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return out
}

// buildEdited builds the plan of in over base and a candidate that
// appends suffix to every file of base (and holds the files of extra),
// and checks it takes want from the base ("path kind", sorted).
func buildEdited(t *testing.T, base map[string]string, suffix string, extra map[string]string, in Input, want []string) *Plan {
	t.Helper()
	cand := map[string]string{}
	for f, s := range base {
		cand[f] = s + suffix
	}
	maps.Copy(cand, extra)
	in.Base, in.Cand, in.Diff = tree(base), tree(cand), diffOf(base, cand)
	plan, err := Build(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if got := picks(plan, base, cand); !slices.Equal(got, want) {
		t.Errorf("picked\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	return plan
}

// picks lists what the plan takes from the base, as "path kind".
func picks(p *Plan, files ...map[string]string) []string {
	var out []string
	seen := map[string]bool{}
	for _, fs := range files {
		for f := range fs {
			if e, ok := p.Entry(f); ok && !seen[f] {
				seen[f] = true
				out = append(out, f+" "+string(e.Kind))
			}
		}
	}
	sort.Strings(out)
	return out
}

// TestBuildGo: a go suite's graded tree takes from the base the test
// files of its packages, their testdata, the other files of a package
// folder that the product code does not embed, go.work, and go.mod's go
// line (a written go.mod); product code, cgo and assembly sources,
// another language's files, go.sum, a folder of another module, vendor,
// embedded files and the kept paths (a fixture, the config) stay the
// candidate's. A file only the candidate's code starts to embed stays the
// base's.
func TestBuildGo(t *testing.T) {
	base := map[string]string{
		"go.mod":                     "module m\n\ngo 1.22\n",
		"go.sum":                     "x v1 h1:a\n",
		"go.work":                    "go 1.22\nuse .\n",
		"flakegate.yaml":             "version: 1\n",
		"README.md":                  "m\n",
		"p/p.go":                     "package p\n\nimport _ \"embed\"\n\n//go:embed assets/*.txt\nvar assets string\n\n//go:embed table.csv\nvar table string\n",
		"p/p_test.go":                "package p\n",
		"p/golden.json":              "{}\n",
		"p/table.csv":                "a,b\n",
		"p/expected.txt":             "x\n",
		"p/assets/a.txt":             "a\n",
		"p/asm_amd64.s":              "TEXT ·f(SB),0,$0\n",
		"p/testdata/case/in.txt":     "in\n",
		"p/testdata/rapid/TestX/1":   "v0.4.8\n",
		"p/helper.py":                "x = 1\n",
		"p/sub/other.go":             "package sub\n",
		"p/sub/testdata/s.txt":       "s\n",
		"fixtures/f.json":            "{}\n",
		"vendor/x/x.go":              "package x\n",
		"vendor/x/x_test.go":         "package x\n",
		"nested/go.mod":              "module n\n",
		"nested/n.go":                "package n\n",
		"nested/n_test.go":           "package n\n",
		"nested/data.txt":            "n\n",
		"web/package.json":           "{}\n",
		"web/src/app.js":             "x\n",
		"q/q_test.go":                "package q\n",
		"q/testdata/deep/testdata/a": "a\n",
	}
	cand := map[string]string{}
	for f, s := range base {
		cand[f] = s + "// changed\n"
	}
	cand["go.mod"] = "module m\n\ngo 1.21\n\nrequire x v1\n"
	cand["p/new_test.go"] = "package p\n"
	cand["p/newasset.txt"] = "embedded, new\n"
	cand["p/p.go"] = base["p/p.go"] + "\n//go:embed newasset.txt expected.txt\nvar n string\n"
	cand["p/notes.txt"] = "a new file nothing embeds\n"
	plan, err := Build(context.Background(), Input{Base: tree(base), Cand: tree(cand), Diff: diffOf(base, cand),
		Scopes: []Scope{{Framework: "go", Path: "./..."}}, Keep: []string{"flakegate.yaml", "fixtures/f.json"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{ // README.md: the root holds no package
		"go.work " + string(GoWork),
		"p/expected.txt " + string(GoData),
		"p/golden.json " + string(GoData),
		"p/new_test.go " + string(TestFile),
		"p/notes.txt " + string(GoData),
		"p/p_test.go " + string(TestFile),
		"p/sub/testdata/s.txt " + string(GoTestdata),
		"p/testdata/case/in.txt " + string(GoTestdata),
		"p/testdata/rapid/TestX/1 " + string(GoTestdata),
		"q/q_test.go " + string(TestFile),
		"q/testdata/deep/testdata/a " + string(GoTestdata),
	}
	if got := picks(plan, base, cand); !slices.Equal(got, want) {
		t.Errorf("picked\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(plan.Write) != 1 || plan.Write[0].Path != "go.mod" || string(plan.Write[0].Data) != "module m\ngo 1.22\n\n\nrequire x v1\n" {
		t.Errorf("written: %+v", plan.Write)
	}
	if e, _ := plan.Entry("q/testdata/deep/testdata/a"); e.Dir != "q" {
		t.Errorf("q's testdata is owned by %q, want q", e.Dir)
	}

	// A package pattern keeps other packages' files the candidate's.
	plan, err = Build(context.Background(), Input{Base: tree(base), Cand: tree(cand), Diff: diffOf(base, cand),
		Scopes: []Scope{{Framework: "go", Path: "./q"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := picks(plan, base, cand), []string{"go.work " + string(GoWork), "q/q_test.go " + string(TestFile), "q/testdata/deep/testdata/a " + string(GoTestdata)}; !slices.Equal(got, want) {
		t.Errorf("./q picked %v, want %v", got, want)
	}
}

// TestBuildPytest: a pytest suite's graded tree takes from the base its
// test files, every conftest.py and pytest.ini from the root down to and
// under its path, and every file of a test folder (tests/ holding a test
// file in the base: its __init__.py, helpers, data); product code,
// pyproject.toml and setup.cfg (mixed files, watched instead), a folder
// named tests without tests in the base, a tests folder under
// node_modules or a hidden folder stay the candidate's. A test folder
// the candidate alone makes is none.
func TestBuildPytest(t *testing.T) {
	base := map[string]string{
		"conftest.py":                      "x\n",
		"pytest.ini":                       "[pytest]\n",
		"pyproject.toml":                   "[tool.pytest.ini_options]\n",
		"setup.cfg":                        "[metadata]\n",
		"calc/__init__.py":                 "x\n",
		"calc/core.py":                     "x\n",
		"calc/test/__init__.py":            "x\n",
		"calc/test/client.py":              "product code in a folder named test, with no tests\n",
		"tests/__init__.py":                "",
		"tests/conftest.py":                "x\n",
		"tests/helpers.py":                 "x\n",
		"tests/data/golden.json":           "{}\n",
		"tests/unit/test_calc.py":          "x\n",
		"tests/unit/conftest.py":           "x\n",
		"other/test_x.py":                  "x\n",
		"other/conftest.py":                "x\n",
		"node_modules/pkg/tests/test_a.py": "x\n",
		".venv/lib/tests/test_b.py":        "x\n",
		"testing/test_t.py":                "x\n",
		"testing/util.py":                  "x\n",
	}
	buildEdited(t, base, "# changed\n", map[string]string{"calc/test/test_new.py": "a test file the patch adds\n"},
		Input{Scopes: []Scope{{Framework: "pytest", Path: "tests"}, {Framework: "pytest", Path: "testing"}}}, []string{
			"conftest.py " + string(Conftest),
			"pytest.ini " + string(PytestIni),
			"testing/test_t.py " + string(TestFile),
			"testing/util.py " + string(TestFolder),
			"tests/__init__.py " + string(TestFolder),
			"tests/conftest.py " + string(Conftest),
			"tests/data/golden.json " + string(TestFolder),
			"tests/helpers.py " + string(TestFolder),
			"tests/unit/conftest.py " + string(Conftest),
			"tests/unit/test_calc.py " + string(TestFile),
		})
}

// TestBuildJS: a vitest suite's graded tree takes from the base its test
// files, their snapshots, manual mocks, the framework's config files
// from the root down and the setup files the config names, and the files
// of its test folders, and the framework as the tree holds it
// (node_modules, Plug'n'Play files: a patch's own node_modules/vitest
// would grade it); product code stays the candidate's.
func TestBuildJS(t *testing.T) {
	base := map[string]string{
		"package.json":                          "{}\n",
		"vitest.config.ts":                      "x\n",
		"vite.config.ts":                        "x\n",
		"jest.config.js":                        "not vitest's\n",
		"src/calc.js":                           "x\n",
		"src/__mocks__/net.js":                  "x\n",
		"tests/calc.test.js":                    "x\n",
		"tests/__snapshots__/calc.test.js.snap": "x\n",
		"tests/helpers/make.js":                 "x\n",
		"tests/fixtures/a.json":                 "{}\n",
		"setup/vitest.setup.js":                 "x\n",
		"node_modules/vitest/test/a.test.js":    "x\n",
		".pnp.cjs":                              "x\n",
	}
	buildEdited(t, base, "// changed\n", nil, Input{Scopes: []Scope{{Framework: "vitest", Path: "tests"}}, Setup: []string{"setup/vitest.setup.js"}}, []string{
		".pnp.cjs " + string(JSFramework),
		"node_modules/vitest/test/a.test.js " + string(JSFramework),
		"setup/vitest.setup.js " + string(JSSetup),
		"src/__mocks__/net.js " + string(Mock),
		"tests/__snapshots__/calc.test.js.snap " + string(Snapshot),
		"tests/calc.test.js " + string(TestFile),
		"tests/fixtures/a.json " + string(TestFolder),
		"tests/helpers/make.js " + string(TestFolder),
		"vite.config.ts " + string(JSConfig),
		"vitest.config.ts " + string(JSConfig),
	})
}

// TestEditsFor: of the patch's edits the graded tree takes back, a test
// is graded by its own file and its world's: a go test by its package's
// test files, testdata and data and by go.mod's lines, not by another
// package's; a pytest test by the conftest.py files above it and its
// test folder, not by another test file; a js test by its folder's
// snapshots. A file the patch adds is taken back but grades nothing.
func TestEditsFor(t *testing.T) {
	base := map[string]string{
		"go.mod": "module m\n\ngo 1.22\n", "p/p.go": "package p\n", "p/p_test.go": "package p\n", "p/q_test.go": "package p\n",
		"p/testdata/g.txt": "g\n", "r/r.go": "package r\n", "r/r_test.go": "package r\n", "r/testdata/h.txt": "h\n",
		"tests/__init__.py": "", "tests/test_a.py": "a\n", "tests/test_b.py": "b\n", "tests/conftest.py": "c\n", "tests/unit/test_c.py": "c\n",
		"conftest.py": "c\n", "other/test_o.py": "o\n",
		"web/a.test.js": "a\n", "web/__snapshots__/a.test.js.snap": "s\n", "web/sub/b.test.js": "b\n",
	}
	cand := map[string]string{}
	for f, s := range base {
		cand[f] = s
	}
	for _, f := range []string{"p/q_test.go", "p/testdata/g.txt", "r/testdata/h.txt", "tests/__init__.py", "tests/test_b.py", "web/__snapshots__/a.test.js.snap"} {
		cand[f] += "changed\n"
	}
	cand["go.mod"] = "module m\n\ngo 1.21\n"
	cand["p/new_test.go"] = "package p\n"
	cand["tests/new_helper.py"] = "x\n"
	diff := diffOf(base, cand)
	plan, err := Build(context.Background(), Input{Base: tree(base), Cand: tree(cand), Diff: diff,
		Scopes: []Scope{{Framework: "go", Path: "./..."}, {Framework: "pytest", Path: "."}, {Framework: "jest", Path: "web"}}})
	if err != nil {
		t.Fatal(err)
	}
	taken := plan.TakenBack(diff, func(f string) bool { _, ok := base[f]; return ok })
	paths := func(es []Edit) string {
		var out []string
		for _, e := range es {
			out = append(out, e.Path)
		}
		return strings.Join(out, " ")
	}
	if got, want := paths(taken), "go.mod p/q_test.go p/testdata/g.txt r/testdata/h.txt tests/__init__.py tests/test_b.py web/__snapshots__/a.test.js.snap"; got != want {
		t.Fatalf("taken back %q, want %q", got, want)
	}
	for _, tc := range []struct{ framework, file, want string }{
		{"go", "p/p_test.go", "go.mod p/q_test.go p/testdata/g.txt"},
		{"go", "r/r_test.go", "go.mod r/testdata/h.txt"},
		{"pytest", "tests/test_a.py", "tests/__init__.py"},
		{"pytest", "tests/test_b.py", "tests/__init__.py tests/test_b.py"},
		{"pytest", "tests/unit/test_c.py", "tests/__init__.py"},
		{"pytest", "other/test_o.py", ""},
		{"jest", "web/a.test.js", "web/__snapshots__/a.test.js.snap"},
		{"jest", "web/sub/b.test.js", ""},
	} {
		if got := paths(plan.EditsFor(tc.framework, tc.file, taken)); got != tc.want {
			t.Errorf("%s %s: edits %q, want %q", tc.framework, tc.file, got, tc.want)
		}
	}
}

// TestPytestPartChanged: a change to pyproject.toml, setup.cfg or
// tox.ini counts only where it changes pytest's part: its table or
// section, or a dotted key under tool.pytest; a change elsewhere (the
// project's dependencies, a multi-line value holding "[tool.pytest]")
// does not; a file whose values do not end, or an inline tool table,
// cannot be read and counts.
func TestPytestPartChanged(t *testing.T) {
	toml := "[project]\nname = \"calc\"\ndependencies = [\n  \"pytest>=7\",\n]\ndescription = \"\"\"\n[tool.pytest.ini_options]\naddopts = \"-p no:x\"\n\"\"\"\n\n" +
		"[tool.pytest.ini_options]\naddopts = \"-ra\"\ntestpaths = [\n  \"tests\",\n]\n\n[tool.black]\nline-length = 99\n"
	for _, tc := range []struct {
		name, file, base, cand string
		want                   bool
	}{
		{"toml: dependencies", "pyproject.toml", toml, strings.Replace(toml, "pytest>=7", "pytest>=8", 1), false},
		{"toml: a string that holds a header", "pyproject.toml", toml, strings.Replace(toml, "-p no:x", "-p no:y", 1), false},
		{"toml: another tool", "pyproject.toml", toml, strings.Replace(toml, "99", "100", 1), false},
		{"toml: addopts", "pyproject.toml", toml, strings.Replace(toml, "\"-ra\"", "\"-ra -p tests.hide\"", 1), true},
		{"toml: a multi-line value of pytest's", "pyproject.toml", toml, strings.Replace(toml, "  \"tests\",\n", "  \"tests\",\n  \"other\",\n", 1), true},
		{"toml: a dotted key", "pyproject.toml", toml, toml + "\n[tool]\npytest.ini_options.addopts = \"-x\"\n", true},
		{"toml: an inline tool", "pyproject.toml", toml, "tool = {pytest = {ini_options = {addopts = \"-x\"}}}\n" + toml, true},
		{"toml: a string that never ends", "pyproject.toml", toml, toml + "x = \"\"\"\n", true},
		{"setup.cfg: metadata", "setup.cfg", "[metadata]\nname = a\n\n[tool:pytest]\naddopts = -ra\n", "[metadata]\nname = b\n\n[tool:pytest]\naddopts = -ra\n", false},
		{"setup.cfg: pytest", "setup.cfg", "[metadata]\nname = a\n\n[tool:pytest]\naddopts = -ra\n", "[metadata]\nname = a\n\n[tool:pytest]\naddopts = -ra\n  -p tests.hide\n", true},
		{"tox.ini: tox", "tox.ini", "[tox]\nenvlist = py3\n[pytest]\nxfail_strict = true\n", "[tox]\nenvlist = py3,py4\n[pytest]\nxfail_strict = true\n", false},
		{"tox.ini: pytest", "tox.ini", "[tox]\nenvlist = py3\n[pytest]\nxfail_strict = true\n", "[tox]\nenvlist = py3\n[pytest]\nxfail_strict = false\n", true},
	} {
		if got := PytestPartChanged(tc.file, []byte(tc.base), []byte(tc.cand)); got != tc.want {
			t.Errorf("%s: changed %v, want %v", tc.name, got, tc.want)
		}
	}
	if JestKeyChanged([]byte(`{"name":"a","jest":{"a":1,"b":2}}`), []byte(`{"jest":{"b":2,"a":1},"name":"b","dependencies":{}}`)) {
		t.Error("package.json: a change outside \"jest\" counts")
	}
	if !JestKeyChanged([]byte(`{"jest":{"a":1}}`), []byte(`{"jest":{"a":2}}`)) || !JestKeyChanged([]byte(`{"jest":{}}`), []byte(`{"jest":`)) {
		t.Error("package.json: a change of \"jest\", or a file that is not JSON, does not count")
	}
}

// TestPytestPluginsWatched: a plugin the base's conftest.py or pytest's
// ini options name that lives in the tree outside the test folders (it
// may be the product) stays the candidate's and is watched for pytest
// tests; one in a test folder is the base's with its folder; an
// installed one names no file.
func TestPytestPluginsWatched(t *testing.T) {
	base := map[string]string{
		"conftest.py":        "pytest_plugins = [\n    \"myplug.fixtures\",\n    'tests.plug',\n]\n",
		"pytest.ini":         "[pytest]\naddopts = -ra -p src_plug -p no:cacheprovider -p pytest_cov\n",
		"myplug/__init__.py": "",
		"myplug/fixtures.py": "x\n",
		"src/src_plug.py":    "x\n",
		"tests/__init__.py":  "x\n",
		"tests/plug.py":      "x\n",
		"tests/test_a.py":    "x\n",
		"calc.py":            "x\n",
	}
	plan, err := Build(context.Background(), Input{Base: tree(base), Cand: tree(base), Scopes: []Scope{{Framework: "pytest", Path: "tests"}}})
	if err != nil {
		t.Fatal(err)
	}
	got := plan.WatchedFor("pytest")
	var files []string
	for f := range got {
		files = append(files, f)
	}
	sort.Strings(files)
	if want := []string{"myplug/fixtures.py", "src/src_plug.py"}; !slices.Equal(files, want) {
		t.Errorf("watched %v, want %v", files, want)
	}
	if !strings.Contains(got["myplug/fixtures.py"], "conftest.py names (myplug.fixtures)") {
		t.Errorf("why: %q", got["myplug/fixtures.py"])
	}
	if len(plan.WatchedFor("go")) != 0 || !plan.Pick("tests/plug.py") {
		t.Errorf("go watches %v; tests/plug.py picked %v", plan.WatchedFor("go"), plan.Pick("tests/plug.py"))
	}
}
