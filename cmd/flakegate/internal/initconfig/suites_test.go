package initconfig

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/flakegate/flakegate/config"
)

// TestSuitesFound: the root Go module with tests is "./..."; the pytest
// root is the deepest folder over every test file, leaving out hidden,
// vendored and nested-module folders; a root package.json that depends on
// jest is a jest suite of ".", one in a folder a note, one with neither
// framework nothing.
func TestSuitesFound(t *testing.T) {
	fsys := fstest.MapFS{
		"go.mod":                   {Data: []byte("module x\n")},
		"x_test.go":                {Data: []byte("package x\n")},
		"tests/unit/test_a.py":     {Data: []byte("def test_a(): pass\n")},
		"tests/int/b_test.py":      {Data: []byte("def test_b(): pass\n")},
		".venv/lib/test_site.py":   {Data: []byte("")},
		"tools/go.mod":             {Data: []byte("module tools\n")},
		"tools/test_tool.py":       {Data: []byte("")},
		"node_modules/x/test_x.py": {Data: []byte("")},
		"package.json":             {Data: []byte(`{"devDependencies": {"jest": "29.7.0"}}`)},
		"web/package.json":         {Data: []byte(`{"name": "web"}`)},
		"web/vitest.config.ts":     {Data: []byte("export default {};\n")},
		"docs/package.json":        {Data: []byte(`{"name": "docs"}`)},
	}
	got, notes := Suites(fsys, "/usr/bin/python3")
	if len(got) != 3 || got[0].Path != "./..." || got[0].Framework != "go" || got[1].Path != "tests" || got[1].Framework != "pytest" || got[1].Measure[0] != "/usr/bin/python3" ||
		got[2].Path != "." || got[2].Framework != "jest" {
		t.Fatalf("suites %+v", got)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "web/package.json: a vitest suite runs at the repository root") {
		t.Errorf("notes %q", notes)
	}
	raw, err := Render(&Plan{Suites: got}, false)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(raw, "flakegate.yaml")
	if err != nil || len(cfg.Suites) != 3 || !cfg.RejectFlakyNewTests {
		t.Fatalf("%v\n%s", err, raw)
	}
	if none, _ := Suites(fstest.MapFS{"go.mod": {Data: []byte("module x\n")}, "x.go": {Data: []byte("package x\n")}}, ""); len(none) != 0 {
		t.Errorf("a module without tests: %+v", none)
	}
}

// TestPythonPackageDirs: a module the tests import that sits in a folder
// nothing puts on sys.path is found there (a package or a module); one
// local to the root, to the test's folder or to a src/ layout, one found
// in two folders, one inside a package and one in a virtual environment
// are not.
func TestPythonPackageDirs(t *testing.T) {
	fsys := fstest.MapFS{
		"py/pkg/__init__.py":            {Data: []byte("")},
		"py/pkg/calc.py":                {Data: []byte("")},
		"py/tests/test_calc.py":         {Data: []byte("import os\nfrom pkg.calc import clamp\nimport helper\nimport twice\nimport calc\nimport venvmod\nimport top\n")},
		"py/tests/helper.py":            {Data: []byte("")},
		"lib/single.py":                 {Data: []byte("")},
		"tests/conftest.py":             {Data: []byte("import single\n")},
		"a/twice/__init__.py":           {Data: []byte("")},
		"b/twice/__init__.py":           {Data: []byte("")},
		".venv/lib/venvmod/__init__.py": {Data: []byte("")},
		"top.py":                        {Data: []byte("")},
	}
	got := PythonPackageDirs(fsys, PyLayout{})
	want := map[string]string{"pkg": "py", "single": "lib"}
	if len(got) != len(want) || got["pkg"] != "py" || got["single"] != "lib" {
		t.Errorf("got %v, want %v", got, want)
	}
	// A src/ layout's modules are the layout's already.
	src := fstest.MapFS{"src/pkg/__init__.py": {Data: []byte("")}, "tests/test_a.py": {Data: []byte("import pkg\n")}}
	if got := PythonPackageDirs(src, PyLayout{SrcDirs: []string{"src"}}); len(got) != 0 {
		t.Errorf("src layout: %v", got)
	}
}
