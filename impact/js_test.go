package impact_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/flakegate/flakegate/impact"
)

// jsProject is a project of three test files: a.test imports a, which
// imports lib; b.test imports b; dyn.test imports dyn, which imports by
// a computed name. esm picks import over require.
func jsProject(esm bool) map[string]string {
	files := map[string]string{
		"package.json": `{"name": "p", "private": true}` + "\n",
		"README.md":    "# p\n",
	}
	if esm {
		files["package.json"] = `{"name": "p", "private": true, "type": "module"}` + "\n"
		files["src/lib.js"] = "export const lib = () => 1\n"
		files["src/a.js"] = "import { lib } from './lib.js'\nexport const a = () => lib() + 1\n"
		files["src/b.js"] = "export const b = () => 2\n"
		files["src/dyn.js"] = "export const load = (name) => import(name)\n"
		files["test/a.test.js"] = "import { test, expect } from 'vitest'\nimport { a } from '../src/a.js'\ntest('a', () => expect(a()).toBe(2))\n"
		files["test/b.test.js"] = "import { test, expect } from 'vitest'\nimport { b } from '../src/b.js'\ntest('b', () => expect(b()).toBe(2))\n"
		files["test/dyn.test.js"] = "import { test, expect } from 'vitest'\nimport { load } from '../src/dyn.js'\ntest('d', () => expect(load).toBeTruthy())\n"
		return files
	}
	files["src/lib.js"] = "module.exports = () => 1\n"
	files["src/a.js"] = "const lib = require('./lib')\nmodule.exports = () => lib() + 1\n"
	files["src/b.js"] = "module.exports = () => 2\n"
	files["src/dyn.js"] = "module.exports = (name) => require(name)\n"
	files["test/a.test.js"] = "const a = require('../src/a')\ntest('a', () => expect(a()).toBe(2))\n"
	files["test/b.test.js"] = "const b = require('../src/b')\ntest('b', () => expect(b()).toBe(2))\n"
	files["test/dyn.test.js"] = "const load = require('../src/dyn')\ntest('d', () => expect(load).toBeTruthy())\n"
	return files
}

var jsTests = []string{"test/a.test.js", "test/b.test.js", "test/dyn.test.js"}

func TestJSRules(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name    string
		change  map[string]string
		related map[string]bool
		global  []string
		want    []string
	}
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		b, c := twoTrees(t, jsProject(true), tc.change)
		vs, err := impact.JS(impact.JSInput{Trees: compare(t, b, c), Framework: "vitest", Tests: jsTests, Related: tc.related, Global: tc.global})
		if err != nil {
			t.Fatal(err)
		}
		if got := affectedUnits(vs); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("affected %q, want %q\n%+v", got, tc.want, vs)
		}
	}
	lib := map[string]string{"src/lib.js": "export const lib = () => 0 + 1\n"}
	for _, tc := range []testCase{
		{name: "what the graph relates", change: lib, related: map[string]bool{"test/a.test.js": true}, want: []string{"test/a.test.js"}},
		{name: "a changed test file", change: map[string]string{"test/b.test.js": "// b\n"}, related: map[string]bool{}, want: []string{"test/b.test.js"}},
		{name: "the graph not known", change: lib, want: jsTests},
		{name: "package.json", change: map[string]string{"package.json": "{}\n"}, related: map[string]bool{}, want: jsTests},
		{name: "a config", change: map[string]string{"vitest.config.js": "export default {}\n"}, related: map[string]bool{}, want: jsTests},
		{name: "a setup file the config names", change: map[string]string{"test/setup.js": "globalThis.x = 1\n"}, global: []string{"test/setup.js"},
			related: map[string]bool{}, want: jsTests},
		{name: "a file that is no module", change: map[string]string{"README.md": "# P\n"}, related: map[string]bool{}, want: jsTests},
		{name: "node_modules", change: map[string]string{"node_modules/x/index.js": "1\n"}, related: map[string]bool{}, want: jsTests},
		{name: "nothing", related: map[string]bool{}},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func TestJSQuery(t *testing.T) {
	t.Parallel()
	b, c := twoTrees(t, jsProject(true), map[string]string{"src/lib.js": "export const lib = () => 0 + 1\n", "src/b.js": ""})
	tr := compare(t, b, c)
	if got, want := impact.JSQuery(tr, false), []string{"src/b.js", "src/dyn.js", "src/lib.js"}; !reflect.DeepEqual(got, want) {
		t.Errorf("base's query %q, want %q", got, want)
	}
	if got, want := impact.JSQuery(tr, true), []string{"src/dyn.js", "src/lib.js"}; !reflect.DeepEqual(got, want) {
		t.Errorf("candidate's query %q, want %q", got, want)
	}
	b, c = twoTrees(t, jsProject(true), nil)
	if got := impact.JSQuery(compare(t, b, c), true); got != nil {
		t.Errorf("query without a change: %q", got)
	}
}

// nodeModules is a node_modules folder with the real jest and vitest
// (scripts/setup.sh installs one for the e2e tests under the user's
// cache), "" when there is none.
func nodeModules(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		return ""
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	found, _ := filepath.Glob(filepath.Join(cache, "flakegate", "jsbatch-*", "node_modules"))
	for _, dir := range found {
		_, errJest := os.Stat(filepath.Join(dir, "jest", "bin", "jest.js"))
		_, errVitest := os.Stat(filepath.Join(dir, "vitest", "vitest.mjs"))
		if errJest == nil && errVitest == nil {
			return dir
		}
	}
	return ""
}

// TestJSRelated asks the real vitest and jest, in both trees, which test
// files a change to lib reaches: the test of its importer, and the test
// of the module that imports by a computed name.
func TestJSRelated(t *testing.T) {
	if testing.Short() {
		t.Skip("runs vitest and jest; run without -short")
	}
	modules := nodeModules(t)
	if modules == "" {
		t.Skip("no real jest and vitest (scripts/setup.sh test installs them)")
	}
	t.Parallel()
	for _, fw := range []string{"vitest", "jest"} {
		t.Run(fw, func(t *testing.T) {
			t.Parallel()
			files := jsProject(fw == "vitest")
			files["node_modules"] = "symlink:" + modules
			b, c := twoTrees(t, files, map[string]string{"src/lib.js": files["src/lib.js"] + "// changed\n"})
			tr := compare(t, b, c)
			related := map[string]bool{}
			for _, side := range []struct {
				dir       string
				candidate bool
			}{{b, false}, {c, true}} {
				out, err := runIn(side.dir)(context.Background(), impact.JSRelatedArgv(fw, impact.JSQuery(tr, side.candidate)))
				if err != nil {
					t.Fatalf("%v\n%s", err, out)
				}
				got, err := impact.ReadJSRelated(fw, out)
				if err != nil {
					t.Fatalf("%v\n%s", err, out)
				}
				for f := range got {
					related[f] = true
				}
			}
			vs, err := impact.JS(impact.JSInput{Trees: tr, Framework: fw, Tests: jsTests, Related: related})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := affectedUnits(vs), []string{"test/a.test.js", "test/dyn.test.js"}; !reflect.DeepEqual(got, want) {
				t.Errorf("affected %q, want %q\n%+v", got, want, vs)
			}
		})
	}
}
