package grade

import (
	"path"
	"strings"

	"github.com/flakegate/flakegate/config"
)

// IsPyTestFile reports whether f is a pytest test file by pytest's
// default names: test_*.py and *_test.py.
func IsPyTestFile(f string) bool {
	b := path.Base(f)
	return strings.HasSuffix(b, ".py") && (strings.HasPrefix(b, "test_") || strings.HasSuffix(b, "_test.py"))
}

// IsJSTestFile reports whether f is a vitest or jest test file by their
// default patterns: NAME.test.EXT and NAME.spec.EXT, and any JavaScript
// or TypeScript file under a __tests__ folder.
func IsJSTestFile(f string) bool {
	if config.IsJSTestFile(path.Base(f)) {
		return true
	}
	switch path.Ext(f) {
	case ".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".jsx", ".tsx":
		return strings.HasPrefix(f, "__tests__/") || strings.Contains(f, "/__tests__/")
	}
	return false
}

// scopeDir is the folder of a scope: a property's file's, a suite's
// folder (or its file's folder).
func (b *builder) scopeDir(s Scope) string {
	if s.Property || b.all[s.Path] {
		return path.Dir(s.Path)
	}
	return s.Path
}

// inScopePath reports whether f is under a suite's path (a folder or a
// file).
func inScopePath(s Scope, f string) bool {
	if s.Property {
		return f == s.Path
	}
	return s.Path == "." || f == s.Path || strings.HasPrefix(f, s.Path+"/")
}

// pyFiles takes the pytest scopes' files from the base: test files,
// conftest.py and pytest.ini from the root down to and under each
// scope, and test folders.
func (b *builder) pyFiles() {
	if len(b.pyScopes) == 0 {
		return
	}
	var roots []string // scope folders named test*: test folders of their own
	for _, s := range b.pyScopes {
		dir := b.scopeDir(s)
		if s.Property {
			b.add(s.Path, Entry{Kind: TestFile, Dir: dir, Family: "py"})
		}
		for _, d := range ancestors(dir) {
			for _, n := range []string{"conftest.py", "pytest.ini", ".pytest.ini"} {
				if f := path.Join(d, n); b.all[f] {
					b.add(f, pyConfigEntry(f))
				}
			}
		}
		for _, f := range sorted(b.all) {
			switch {
			case !under(f, dir) && !inScopePath(s, f):
			case !s.Property && IsPyTestFile(f) && inScopePath(s, f):
				b.add(f, Entry{Kind: TestFile, Dir: path.Dir(f), Family: "py"})
			case path.Base(f) == "conftest.py" || path.Base(f) == "pytest.ini" || path.Base(f) == ".pytest.ini":
				if under(f, dir) {
					b.add(f, pyConfigEntry(f))
				}
			}
		}
		if dir != "." && strings.HasPrefix(path.Base(dir), "test") {
			roots = append(roots, dir)
		}
	}
	b.testFolders("py", func(f string) bool { return IsPyTestFile(f) || path.Base(f) == "conftest.py" }, []string{"tests", "test"}, roots)
}

// pyConfigEntry is the entry of a conftest.py or an ini file of pytest.
func pyConfigEntry(f string) Entry {
	if path.Base(f) == "conftest.py" {
		return Entry{Kind: Conftest, Dir: path.Dir(f), Family: "py"}
	}
	return Entry{Kind: PytestIni, Dir: path.Dir(f), Family: "py"}
}

// jsConfigPrefixes are the names of a framework's config and setup
// files (NAME.EXT), read from the test's folder and every folder above.
var jsConfigPrefixes = map[string][]string{
	config.FrameworkVitest: {"vitest.config.", "vite.config.", "vitest.setup.", "vitest.workspace.", "vitest.projects."},
	config.FrameworkJest:   {"jest.config.", "jest.setup."},
}

// jsFiles takes the vitest and jest scopes' files from the base: test
// files, snapshots, manual mocks, the frameworks' config files from the
// root down to each scope, and test folders.
func (b *builder) jsFiles() {
	if len(b.jsScopes) == 0 {
		return
	}
	var roots []string
	for _, s := range b.jsScopes {
		dir := b.scopeDir(s)
		if s.Property {
			b.add(s.Path, Entry{Kind: TestFile, Dir: dir, Family: "js"})
		}
		for _, d := range ancestors(dir) {
			for _, f := range b.inDir(d) {
				for _, p := range jsConfigPrefixes[s.Framework] {
					if strings.HasPrefix(path.Base(f), p) {
						b.add(f, Entry{Kind: JSConfig, Dir: d, Family: "js"})
					}
				}
			}
		}
		for _, f := range sorted(b.all) {
			if hiddenSegment(f) || !under(f, dir) && !inScopePath(s, f) {
				continue
			}
			if !s.Property && IsJSTestFile(f) && inScopePath(s, f) {
				b.add(f, Entry{Kind: TestFile, Dir: path.Dir(f), Family: "js"})
			} else if d, ok := folderOwner(f, "__snapshots__"); ok && under(f, dir) {
				b.add(f, Entry{Kind: Snapshot, Dir: d, Family: "js"})
			}
		}
		if dir != "." && strings.HasPrefix(path.Base(dir), "test") {
			roots = append(roots, dir)
		}
	}
	for _, f := range sorted(b.all) {
		if d, ok := folderOwner(f, "__mocks__"); ok && !hiddenSegment(f) {
			b.add(f, Entry{Kind: Mock, Dir: d, Family: "js"})
		}
		if jsFrameworkFile(f) {
			b.add(f, Entry{Kind: JSFramework, Dir: ".", Family: "js"})
		}
	}
	b.testFolders("js", IsJSTestFile, []string{"tests", "test", "__tests__", "__fixtures__"}, roots)
}

// folderOwner is the folder that holds the first folder named name on
// f's path ("a" for a/__snapshots__/x.snap), ok false when there is none.
func folderOwner(f, name string) (string, bool) {
	segs := strings.Split(path.Dir(f), "/")
	for i, s := range segs {
		if s == name {
			if i == 0 {
				return ".", true
			}
			return strings.Join(segs[:i], "/"), true
		}
	}
	return "", false
}

// testFolders takes every file of the family's test folders from the
// base. A test folder is a folder, other than the root, named one of
// names (or one of roots, the scopes' own folders named test*), that
// holds, itself or below, a file the base's tests are (isTest) in the
// base; every folder below a test folder is one too, and the topmost
// names the entry (the tests it grades are those under it). A folder of
// a dependency, a virtual environment or a tool (node_modules, a name
// starting with a dot) is none. Whether a folder is one is decided by
// the base alone: a patch cannot turn product code into a test folder.
func (b *builder) testFolders(family string, isTest func(string) bool, names, roots []string) {
	holds := map[string]bool{} // folders that hold a test file of the base, at or below
	for f := range b.in.Base.Files {
		if isTest(f) && !hiddenSegment(f) {
			for _, d := range ancestors(path.Dir(f)) {
				if holds[d] {
					break
				}
				holds[d] = true
			}
		}
	}
	named := map[string]bool{}
	for _, n := range names {
		named[n] = true
	}
	isRoot := map[string]bool{}
	for _, r := range roots {
		isRoot[r] = true
	}
	top := func(dir string) string {
		found := ""
		for _, d := range ancestors(dir) {
			if d != "." && holds[d] && (named[path.Base(d)] || isRoot[d]) {
				found = d
			}
		}
		return found
	}
	for _, f := range sorted(b.all) {
		if hiddenSegment(f) {
			continue
		}
		t := top(path.Dir(f))
		if t == "" {
			continue
		}
		if isTest(f) && path.Base(f) != "conftest.py" {
			b.add(f, Entry{Kind: TestFile, Dir: path.Dir(f), Family: family})
			continue
		}
		if family == "py" && path.Base(f) == "conftest.py" {
			b.add(f, pyConfigEntry(f))
			continue
		}
		b.add(f, Entry{Kind: TestFolder, Dir: t, Family: family})
	}
}

// jsFrameworkFile reports whether f is part of what runs a js scope's
// tests that a repository may commit: node_modules (the folder, or a
// link to an installed one) and Yarn's Plug'n'Play files (.pnp.cjs, its
// loader and data, .yarn/). The commands run node_modules/vitest and
// node_modules/jest of the tree, and the tests import the framework and
// its assertion libraries from there: a patch that edits or adds them
// would grade itself. Taken from the base, a package the patch adds is
// absent, as a Go module outside the base's go.sum is: code that imports
// it fails, and the dependency change is reviewed as such.
func jsFrameworkFile(f string) bool {
	first, _, _ := strings.Cut(f, "/")
	switch first {
	case "node_modules", ".yarn", ".pnp.cjs", ".pnp.js", ".pnp.loader.mjs", ".pnp.data.json":
		return true
	}
	return false
}
