package impact_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flakegate/flakegate/impact"
)

const fuzzEnv = `{"GOMOD": "/r/go.mod", "GOWORK": "", "GOFLAGS": ""}`

const fuzzList = `{"ImportPath": "m/a", "Name": "a", "Dir": "/r/a", "GoFiles": ["a.go"], "Imports": ["os/exec"]}
{"ImportPath": "m/a [m/a.test]", "Name": "a", "Dir": "/r/a", "ForTest": "m/a", "GoFiles": ["a.go", "a_test.go"]}
{"ImportPath": "m/a.test", "Name": "main", "Dir": "/r/a", "GoFiles": ["/cache/_testmain.go"], "Deps": ["m/a [m/a.test]", "os", "gone"]}
{"ImportPath": "os", "Name": "os", "Dir": "/go/src/os", "Standard": true}
`

// FuzzGoListing: go list's and go env's output, and a go test run's,
// read and decided without a panic; a package is decided affected or
// not, never dropped.
func FuzzGoListing(f *testing.F) {
	f.Add(fuzzList, fuzzEnv, `{"Action":"output","Package":"m/a","Output":"flakegate-testlog # test log\n"}
{"Action":"output","Package":"m/a","Output":"flakegate-testlog chdir ..\n"}
{"Action":"output","Package":"m/a","Output":"flakegate-testlog open x/y\n"}
{"Action":"pass","Package":"m/a"}`)
	f.Add("{", "{}", "")
	f.Add(`{"ImportPath": ""}`, fuzzEnv, "")
	f.Add(`{"ImportPath": "m.test", "Name": "main", "Dir": "/r"}{"ImportPath": "m", "Dir": "/r", "Error": {"Err": "x"}}`, `{"GOWORK": "/r/go.work"}`, "")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, list, env, run string) {
		tree, err := impact.ReadGoTree(strings.NewReader(list), strings.NewReader(env))
		if err != nil {
			return
		}
		if reads, err := impact.ReadGoTestlogs(strings.NewReader(run), tree); err == nil {
			trees, err := impact.Compare(t.Context(), dir, dir)
			if err != nil {
				t.Fatal(err)
			}
			vs, err := impact.Go(impact.GoInput{Trees: trees, Base: tree, Candidate: tree, Reads: reads})
			if err != nil {
				t.Fatal(err)
			}
			if len(vs) != len(tree.Packages()) {
				t.Fatalf("%d verdicts for %d packages", len(vs), len(tree.Packages()))
			}
		}
	})
}

// FuzzPytestSession: a session log is read or refused without a panic.
func FuzzPytestSession(f *testing.F) {
	f.Add("x\nflakegate-session /r\nflakegate-read /r/a\nflakegate-list /r\nflakegate-module /r/b.py\nflakegate-process os.fork\nflakegate-session-end\n")
	f.Add("flakegate-session r\nflakegate-session-end\n")
	f.Add("\nflakegate-session-end\n")
	f.Fuzz(func(t *testing.T, out string) {
		s, err := impact.ReadPytestSession(strings.NewReader(out))
		if err == nil && (s.Read == nil || s.Listed == nil || s.Modules == nil) {
			t.Fatal("a session without its maps")
		}
	})
}

// FuzzJSRelated: vitest's and jest's related lists are read or refused
// without a panic.
func FuzzJSRelated(f *testing.F) {
	f.Add("flakegate-related-root /r\nflakegate-related /r/a.test.js\nflakegate-related-end\n")
	f.Add("flakegate-related-root /r\n[\"/r/a.test.js\", \"/elsewhere/b.test.js\"]\n")
	f.Add("flakegate-related-root /r\n[1]")
	f.Fuzz(func(t *testing.T, out string) {
		for _, fw := range []string{"vitest", "jest"} {
			impact.ReadJSRelated(fw, []byte(out))
		}
	})
}

// FuzzPyClosure: any Python source is read into a closure without a
// panic.
func FuzzPyClosure(f *testing.F) {
	f.Add("from . import x\nfrom ...up import *\nimport a.b.c as d\n__import__(n)\n", "tests/test_x.py")
	f.Add("from .", "test_x.py")
	f.Fuzz(func(t *testing.T, src, name string) {
		if name == "" || strings.ContainsAny(name, "\x00") || strings.HasPrefix(name, "/") || strings.Contains(name, "..") {
			return
		}
		root := t.TempDir()
		b, c := root+"/b", root+"/c"
		files := map[string]string{name: src, "conftest.py": "x = 1\n"}
		writeTreeNoFail(b, files)
		files[name] = src + "\n# changed\n"
		writeTreeNoFail(c, files)
		trees, err := impact.Compare(t.Context(), b, c)
		if err != nil {
			return
		}
		if _, err := impact.Pytest(impact.PytestInput{Trees: trees, Tests: []string{name}}); err != nil {
			t.Fatal(err)
		}
	})
}

// writeTreeNoFail writes files, ignoring names the file system refuses.
func writeTreeNoFail(dir string, files map[string]string) {
	for p, s := range files {
		full := filepath.Join(dir, p)
		_ = os.MkdirAll(filepath.Dir(full), 0o755)
		_ = os.WriteFile(full, []byte(s), 0o644)
	}
}
