// Package discover finds the seeded property tests of a repository by
// reading its source, never by running it: Go tests that call
// pgregory.net/rapid (read with go/parser), pytest tests decorated with
// Hypothesis's @given and Hypothesis state machines exposed as TestCase
// (read with the pysrc tokenizer), and vitest or jest tests that call
// fast-check's assert (read with a JavaScript tokenizer). A call or a
// decorator inside a string or a comment is never counted.
package discover

import (
	"io/fs"
	"path"
	"sort"
	"strings"
)

// Frameworks a Test can belong to.
const (
	GoRapid          = "go+rapid"
	PytestHypothesis = "pytest+hypothesis"
	VitestFastCheck  = "vitest+fast-check"
	JestFastCheck    = "jest+fast-check"
)

// Test is one property test found in the repository.
type Test struct {
	// Framework is one of GoRapid, PytestHypothesis, VitestFastCheck,
	// JestFastCheck.
	Framework string
	// Path is the test file, repository-relative with '/'.
	Path string
	// Name selects the test: a Go test function, a pytest node id after
	// the path ("test_x", "TestClass::test_x", "TestMachine"), or a
	// JavaScript test's full name (describe blocks and the test, joined
	// by a space, as vitest and jest match -t).
	Name string
	// Dir is the folder that runs it: the Go package's folder, or the
	// folder of the package.json a JavaScript test belongs to.
	Dir string
	// Kind says how it was recognised ("rapid.Check", "@given",
	// "state machine", "fc.assert").
	Kind string
	// Line is the 1-based line the test starts on.
	Line int
}

// Skipped is a file that holds property tests init cannot configure, and
// why.
type Skipped struct {
	Path   string
	Reason string
}

// Result is what Find found.
type Result struct {
	Tests   []Test
	Skipped []Skipped
	// SeedHook is true when a JavaScript or TypeScript file outside
	// node_modules reads FAST_CHECK_SEED (the setup file of the recipe in
	// docs/writing-properties.md).
	SeedHook bool
}

// SeedEnv is the environment variable the fast-check recipe reads the
// seed from.
const SeedEnv = "FAST_CHECK_SEED"

// MaxFileSize bounds the files read; a larger one is skipped (a generated
// or vendored file, not a hand-written test).
const MaxFileSize = 4 << 20

// skipDir reports whether a folder is never searched: version control,
// dependencies, virtual environments, build output and caches.
func skipDir(name string) bool {
	if strings.HasPrefix(name, ".") && name != "." {
		return true // .git, .venv, .tox, .hypothesis, ...
	}
	switch name {
	case "node_modules", "vendor", "testdata", "venv", "__pycache__", "site-packages", "dist", "build":
		return true
	}
	return false
}

// Find walks fsys (the repository's root) and returns the property tests
// found, sorted by framework, path and line.
func Find(fsys fs.FS) (*Result, error) {
	res := &Result{}
	var goFiles, pyFiles, jsFiles []string
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != "." && skipDir(d.Name()) {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		name := d.Name()
		switch {
		case strings.HasSuffix(name, "_test.go"):
			goFiles = append(goFiles, p)
		case isPytestFile(name):
			pyFiles = append(pyFiles, p)
		case isJSFile(name):
			jsFiles = append(jsFiles, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	read := func(p string) (string, bool) {
		fi, err := fs.Stat(fsys, p)
		if err != nil || fi.Size() > MaxFileSize {
			return "", false
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return "", false
		}
		return string(b), true
	}
	for _, p := range goFiles {
		if src, ok := read(p); ok {
			tests, skip := goTests(fsys, p, src)
			res.Tests = append(res.Tests, tests...)
			res.Skipped = append(res.Skipped, skip...)
		}
	}
	for _, p := range pyFiles {
		if src, ok := read(p); ok {
			res.Tests = append(res.Tests, pythonTests(p, src)...)
		}
	}
	for _, p := range jsFiles {
		src, ok := read(p)
		if !ok {
			continue
		}
		toks := jsTokenize(src)
		if readsSeedEnv(toks) {
			res.SeedHook = true
		}
		if !isJSTestFile(p) {
			continue
		}
		tests := jsTests(p, toks)
		if len(tests) == 0 {
			continue
		}
		fw, dir, why := jsRunner(fsys, p, toks)
		if fw == "" {
			res.Skipped = append(res.Skipped, Skipped{Path: p, Reason: why})
			continue
		}
		for i := range tests {
			tests[i].Framework = fw
			tests[i].Dir = dir
		}
		res.Tests = append(res.Tests, tests...)
	}
	sort.SliceStable(res.Tests, func(i, j int) bool {
		a, b := res.Tests[i], res.Tests[j]
		if a.Framework != b.Framework {
			return a.Framework < b.Framework
		}
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		return a.Line < b.Line
	})
	return res, nil
}

// isPytestFile is pytest's default python_files: test_*.py and *_test.py.
func isPytestFile(name string) bool {
	return strings.HasSuffix(name, ".py") && (strings.HasPrefix(name, "test_") || strings.HasSuffix(name, "_test.py"))
}

var jsExts = []string{".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx"}

func isJSFile(name string) bool {
	if strings.HasSuffix(name, ".d.ts") {
		return false
	}
	for _, e := range jsExts {
		if strings.HasSuffix(name, e) {
			return true
		}
	}
	return false
}

// isJSTestFile is the files vitest and jest collect by default: *.test.*,
// *.spec.* and anything under __tests__/.
func isJSTestFile(p string) bool {
	base := path.Base(p)
	ext := path.Ext(base)
	stem := strings.TrimSuffix(base, ext)
	return strings.HasSuffix(stem, ".test") || strings.HasSuffix(stem, ".spec") ||
		strings.HasPrefix(p, "__tests__/") || strings.Contains(p, "/__tests__/")
}
