package initconfig

import (
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
}

// Suites finds the suites a config can gate in fsys (the repository
// root): the Go module at the root when it has test files, and the
// pytest root (the deepest folder holding every test_*.py and *_test.py
// outside hidden, vendored and virtual-environment folders). python runs
// pytest ("" is python3). JavaScript projects are left out: the config
// does not gate vitest or jest suites yet (Notes says so).
func Suites(fsys fs.FS, python string) (suites []Suite, notes []string) {
	if python == "" {
		python = "python3"
	}
	goMod := false
	if fi, err := fs.Stat(fsys, "go.mod"); err == nil && fi.Mode().IsRegular() {
		goMod = true
	}
	goTests, js := false, false
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
		case name == "package.json" && p == "package.json":
			js = true
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
	if js {
		notes = append(notes, "package.json: a vitest or jest suite is not gated yet; name its property tests as properties")
	}
	return suites, notes
}

// writeSuites writes the suites block and the new-test keys.
func writeSuites(w func(string, ...any), suites []Suite, seeds []string) {
	if len(suites) == 0 {
		return
	}
	w("\n# Whole suites: every test the base lists is gated, one triple per order seed\n")
	w("# (go -shuffle=S, pytest's node ids in the seed's order); tests a patch adds run\n")
	w("# new_test_runs times first, and one failure rejects (docs/suites.md).\n")
	w("new_test_runs: 5\n")
	w("reject_flaky_new_tests: true\n")
	w("suites:\n")
	for _, s := range suites {
		w("  - path: %s\n", yamlString(s.Path))
		w("    framework: %s\n", s.Framework)
		w("    seeds: [%s]\n", strings.Join(seeds, ", "))
		w("    wall_budget: %s         # %s\n", formatDuration(s.WallBudget), s.BudgetNote)
	}
}
