package initconfig

import (
	"encoding/json"
	"io/fs"
	"path"
	"strings"
	"time"
)

// Suite is one suites: entry init writes: a whole test suite gated test
// by test (docs/suites.md).
type Suite struct {
	Path, Framework string
	WallBudget      time.Duration
	BudgetNote      string
	// Measure is the bare run --measure times (argv, in the root).
	Measure []string
	// PythonPath are a pytest suite's pythonpath folders: a src/ layout
	// whose tests import the tree's code from there.
	PythonPath []string
}

// Suites finds the suites a config can gate in fsys (the repository
// root): the Go module at the root when it has test files, and the
// pytest root (the deepest folder holding every test_*.py and *_test.py
// outside hidden, vendored and virtual-environment folders). python runs
// pytest ("" is python3). A vitest or jest project (JSSuite) at the
// repository root is a suite of path "."; one in a folder is a note (a
// suite's framework runs at the root). The caller keeps a js suite only
// when its listing runs in the sandbox as written (the CLI).
func Suites(fsys fs.FS, python string) (suites []Suite, notes []string) {
	if python == "" {
		python = "python3"
	}
	goMod := false
	if fi, err := fs.Stat(fsys, "go.mod"); err == nil && fi.Mode().IsRegular() {
		goMod = true
	}
	goTests := false
	var pkgs []string
	var pyDirs []string
	_ = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		name := d.Name()
		if d.IsDir() {
			if p != "." && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "vendor" || name == "venv" || name == "testdata" || name == "__pycache__") {
				return fs.SkipDir
			}
			if p != "." {
				if _, err := fs.Stat(fsys, path.Join(p, "go.mod")); err == nil {
					return fs.SkipDir // another module
				}
			}
			return nil
		}
		switch {
		case strings.HasSuffix(name, "_test.go"):
			goTests = true
		case strings.HasSuffix(name, ".py") && (strings.HasPrefix(name, "test_") || strings.HasSuffix(name, "_test.py")):
			pyDirs = append(pyDirs, path.Dir(p))
		case name == "package.json":
			pkgs = append(pkgs, p)
		}
		return nil
	})
	note := "default; flakegate init --measure sets 5x one bare run of the suite"
	if goMod && goTests {
		suites = append(suites, Suite{Path: "./...", Framework: "go", WallBudget: DefaultWallBudget, BudgetNote: note,
			Measure: []string{"go", "test", "-count=1", "./..."}})
	}
	if len(pyDirs) > 0 {
		root := pyDirs[0]
		for _, d := range pyDirs[1:] {
			for root != "." && d != root && !strings.HasPrefix(d, root+"/") {
				root = path.Dir(root)
			}
		}
		suites = append(suites, Suite{Path: root, Framework: "pytest", WallBudget: DefaultWallBudget, BudgetNote: note,
			Measure: []string{python, "-m", "pytest", "-q", "-p", "no:cacheprovider", root}})
	}
	for _, pj := range pkgs {
		fw := JSSuite(fsys, path.Dir(pj))
		switch {
		case fw == "":
		case pj != "package.json":
			notes = append(notes, pj+": a "+fw+" suite runs at the repository root, not in "+path.Dir(pj)+"/; its suite is not written (name its property tests as properties)")
		case fw == "vitest":
			suites = append(suites, Suite{Path: ".", Framework: fw, WallBudget: DefaultWallBudget, BudgetNote: note,
				Measure: []string{"node", "node_modules/vitest/vitest.mjs", "run"}})
		default:
			suites = append(suites, Suite{Path: ".", Framework: fw, WallBudget: DefaultWallBudget, BudgetNote: note,
				Measure: []string{"node", "node_modules/jest/bin/jest.js", "--ci"}})
		}
	}
	return suites, notes
}

// JSSuite is the framework of the JavaScript project in folder dir of
// fsys: "vitest" when its package.json depends on vitest or a
// vitest.config.* is there, else "jest" when it depends on jest, has a
// "jest" key or a jest.config.*; "" for neither.
func JSSuite(fsys fs.FS, dir string) string {
	var pkg struct {
		Deps    map[string]any  `json:"dependencies"`
		DevDeps map[string]any  `json:"devDependencies"`
		Jest    json.RawMessage `json:"jest"`
	}
	b, err := fs.ReadFile(fsys, path.Join(dir, "package.json"))
	if err != nil || json.Unmarshal(b, &pkg) != nil {
		return ""
	}
	has := func(dep, glob string) bool {
		_, a := pkg.Deps[dep]
		_, d := pkg.DevDeps[dep]
		m, _ := fs.Glob(fsys, path.Join(dir, glob))
		return a || d || len(m) > 0
	}
	switch {
	case has("vitest", "vitest.config.*"):
		return "vitest"
	case has("jest", "jest.config.*") || len(pkg.Jest) > 0:
		return "jest"
	}
	return ""
}

// writeSuites writes the suites block and the new-test keys.
func writeSuites(w func(string, ...any), suites []Suite, seeds []string) {
	if len(suites) == 0 {
		return
	}
	w("\n# Whole suites: every test the base lists is gated, one triple per order seed\n")
	w("# (go -shuffle=S, pytest's node ids in the seed's order, vitest --sequence.shuffle\n")
	w("# --sequence.seed=S, jest --randomize --seed=S); tests a patch adds run\n")
	w("# new_test_runs times first, and one failure rejects (docs/suites.md).\n")
	w("new_test_runs: 5\n")
	w("reject_flaky_new_tests: true\n")
	w("suites:\n")
	for _, s := range suites {
		w("  - path: %s\n", yamlString(s.Path))
		w("    framework: %s\n", s.Framework)
		w("    seeds: [%s]\n", strings.Join(seeds, ", "))
		w("    wall_budget: %s         # %s\n", formatDuration(s.WallBudget), s.BudgetNote)
		if len(s.PythonPath) > 0 {
			quoted := make([]string, len(s.PythonPath))
			for i, p := range s.PythonPath {
				quoted[i] = yamlString(p)
			}
			w("    pythonpath: [%s]         # the tests import the tree's own code from there (nothing else puts it on sys.path)\n", strings.Join(quoted, ", "))
		}
	}
}
