package infra

import (
	"reflect"
	"strings"
	"testing"

	"github.com/flakegate/flakegate/config"
)

func TestPyHelpers(t *testing.T) {
	files := map[string]bool{}
	src := map[string]string{
		"calc.py":                    "import tests.helpers  # product code importing tests: not followed\n",
		"conftest.py":                "",
		"tests/test_calc.py":         "import calc\nfrom helpers import check\nfrom sub import tools\ns = 'import strings_are_not_imports'\n",
		"tests/helpers.py":           "from . import _deep\nimport os\n",
		"tests/_deep.py":             "",
		"tests/sub/__init__.py":      "",
		"tests/sub/tools.py":         "",
		"tests/unused.py":            "",
		"strings_are_not_imports.py": "",
		"support/conftest.py":        "",
		"support/fixtures.py":        "",
	}
	for f := range src {
		files[f] = true
	}
	src["tests/test_calc.py"] += "from support.fixtures import load\n"
	var got []string
	for _, g := range pyHelpers("tests/test_calc.py", files, func(f string) string { return src[f] }) {
		got = append(got, g.Glob+" <- "+strings.TrimPrefix(g.Why, "a test helper imported by "))
	}
	want := []string{
		"support/fixtures.py <- tests/test_calc.py",
		"tests/_deep.py <- tests/helpers.py",
		"tests/helpers.py <- tests/test_calc.py",
		"tests/sub/__init__.py <- tests/test_calc.py",
		"tests/sub/tools.py <- tests/test_calc.py",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("helpers\n got %q\nwant %q", got, want)
	}
}

func TestJSInfra(t *testing.T) {
	files := map[string]bool{"web/vitest.config.ts": true, "web/test/setup.ts": true, "web/test/global.ts": true, "web/src/a.test.ts": true}
	src := map[string]string{"web/vitest.config.ts": `export default defineConfig({ test: { setupFiles: ['./test/setup.ts'], globalSetup: "./test/global", environment: "node" } })`}
	p := &config.Property{Path: "web/src/a.test.ts", Run: []string{"npx", "vitest", "run", "{path}"}}
	var got []string
	for _, g := range jsInfra(jsVitest, p, files, func(f string) string { return src[f] }) {
		if !strings.Contains(g.Glob, "*") {
			got = append(got, g.Glob+": "+g.Why)
		}
	}
	want := []string{"web/test/setup.ts: setupFiles of web/vitest.config.ts", "web/test/global.ts: globalSetup of web/vitest.config.ts"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("vitest\n got %q\nwant %q", got, want)
	}
	var globs []string
	for _, g := range jsInfra(jsJest, &config.Property{Path: "a/b.test.js", Run: []string{"npx", "jest", "--config", "cfg/jest.js"}}, nil, func(string) string { return "" }) {
		globs = append(globs, g.Glob)
	}
	if strings.Join(globs, " ") != "cfg/jest.js a/jest.config.* a/jest.setup.* jest.config.* jest.setup.*" {
		t.Errorf("jest: %q", globs)
	}
}
