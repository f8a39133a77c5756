package infra

import (
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/flakegate/flakegate/config"
)

func TestJSConfigNames(t *testing.T) {
	src := map[string]string{
		"jest.config.js": `const { join } = require("path");
const local = require("./tools/jest-base.js");
module.exports = {
  ...local,
  preset: "./presets/mine",
  transform: { "\\.[jt]sx?$": ["<rootDir>/tools/transform.js", { strict: true }], "\\.css$": "jest-css" },
  resolver: "<rootDir>/tools/resolver.cjs",
  moduleNameMapper: { "^@app/(.*)$": "<rootDir>/src/app/$1", "\\.svg$": "<rootDir>/test/svg-stub.js" },
  testEnvironment: "jsdom",
  snapshotResolver: "./tools/snapshots.js",
  globalSetup: join(__dirname, "tools/global.js"),
  setupFiles: ["./test/env.js"],
  reporters: ["default"],
  notes: "docs/README.md",
};
`,
		"tools/jest-base.js":                       `module.exports = { setupFilesAfterEnv: [require.resolve("./after-env.js")] };` + "\n",
		"tools/after-env.js":                       "",
		"tools/transform.js":                       `const rewrite = require("./rewrite");` + "\n",
		"tools/rewrite.js":                         "",
		"tools/resolver.cjs":                       "",
		"tools/snapshots.js":                       "",
		"tools/global.js":                          "",
		"presets/mine/jest-preset.json":            `{"setupFiles": ["../../test/from-preset.js"]}`,
		"test/from-preset.js":                      "",
		"test/env.js":                              "",
		"test/svg-stub.js":                         "",
		"docs/README.md":                           "",
		"node_modules/jest-environment-jsdom/a.js": "",
		"node_modules/jest-css/index.js":           "",
		"src/a.test.js":                            "",
		"src/product.js":                           "",
	}
	files := map[string]bool{}
	for f := range src {
		files[f] = true
	}
	p := &config.Property{Path: "src/a.test.js", Framework: jsJest}
	var got []string
	for _, g := range jsInfra(jsJest, p, files, func(f string) string { return src[f] }) {
		if !strings.Contains(g.Why, "configuration") {
			got = append(got, g.Glob)
		}
	}
	sort.Strings(got)
	want := []string{
		"docs/README.md", "node_modules/jest-css/**", "node_modules/jest-environment-jsdom/**",
		"presets/mine/jest-preset.json", "test/env.js", "test/from-preset.js", "test/svg-stub.js",
		"tools/after-env.js", "tools/global.js", "tools/jest-base.js", "tools/resolver.cjs", "tools/rewrite.js",
		"tools/snapshots.js", "tools/transform.js",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("jest config\n got %q\nwant %q", got, want)
	}

	// A value it cannot read: everything under the config's folder.
	src2 := map[string]string{
		"web/vitest.config.ts": `import { defineConfig } from "vitest/config";
import react from "@vitejs/plugin-react";
import mine from "./plugins/mine";
const t = pick();
export default defineConfig({ plugins: [react(), mine()], test: { setupFiles: t } });
`,
		"web/plugins/mine.ts": "",
		"web/src/a.test.ts":   "",
	}
	files2 := map[string]bool{}
	for f := range src2 {
		files2[f] = true
	}
	got = nil
	for _, g := range jsInfra(jsVitest, &config.Property{Path: "web/src/a.test.ts", Framework: jsVitest}, files2, func(f string) string { return src2[f] }) {
		if !strings.Contains(g.Why, "configuration") {
			got = append(got, g.Glob+": "+g.Why)
		}
	}
	want = []string{
		"web/plugins/mine.ts: imported by web/vitest.config.ts",
		"web/**: web/vitest.config.ts:5: setupFiles uses t (line 5), a value of the config, which flakegate cannot read without running it, so everything under web/ is watched (write the value as a literal, or name its files under watch:)",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("vitest config\n got %q\nwant %q", got, want)
	}

	// package.json's "jest".
	src3 := map[string]string{"package.json": `{"jest": {"transform": {"\\.js$": "<rootDir>/t.js"}}}`, "t.js": "", "a.test.js": ""}
	files3 := map[string]bool{"package.json": true, "t.js": true, "a.test.js": true}
	got = nil
	for _, g := range jsInfra(jsJest, &config.Property{Path: "a.test.js", Framework: jsJest}, files3, func(f string) string { return src3[f] }) {
		got = append(got, g.Glob+": "+g.Why)
	}
	if !strings.Contains(strings.Join(got, "\n"), "t.js: transform of package.json") {
		t.Errorf("package.json jest: %q", got)
	}
}

func TestGoHelpers(t *testing.T) {
	src := map[string]string{
		"go.mod":                            "module example.com/m // the module\n",
		"sorter/sort.go":                    "package sorter\nimport \"example.com/m/internal/cmp\"\n",
		"sorter/sort_test.go":               "package sorter\nimport (\n\"testing\"\n\"example.com/m/internal/sorttest\"\n\"example.com/m/internal/cmp\"\n)\n",
		"internal/sorttest/sorttest.go":     "package sorttest\nimport \"example.com/m/internal/sorttest/gen\"\nimport \"example.com/m/sorter\"\n",
		"internal/sorttest/gen/gen.go":      "package gen\n",
		"internal/sorttest/gen/gen_test.go": "package gen\nimport \"example.com/m/internal/other\"\n",
		"internal/cmp/cmp.go":               "package cmp\n",
		"internal/other/other.go":           "package other\n",
		"tools/sub/go.mod":                  "module example.com/tools\n",
		"tools/sub/x.go":                    "package x\nimport \"example.com/m/internal/sorttest\"\n",
		"vendor/example.com/m/v/v.go":       "package v\nimport \"example.com/m/internal/sorttest\"\n",
	}
	files := map[string]bool{}
	for f := range src {
		files[f] = true
	}
	var got []string
	for _, g := range goHelpers("sorter/sort_test.go", files, func(f string) string { return src[f] }, nil) {
		got = append(got, g.Glob)
	}
	if want := []string{"internal/sorttest/*.go", "internal/sorttest/gen/*.go"}; !reflect.DeepEqual(got, want) {
		t.Errorf("helpers %q, want %q", got, want)
	}
}

// FuzzJSConfig: any config text is read without a panic, and what it
// names stays inside the repository.
func FuzzJSConfig(f *testing.F) {
	f.Add(`module.exports = { transform: { "x": ["<rootDir>/t.js", {}] }, preset: "../../etc" }`)
	f.Add(`export default defineConfig({ plugins: [a(` + "`${x}`" + `)], test: { setupFiles: t } })`)
	f.Add(`{"jest": {"setupFiles": ["./a"]}}`)
	f.Fuzz(func(t *testing.T, src string) {
		files := map[string]bool{"jest.config.js": true, "package.json": true, "t.js": true, "a.test.js": true}
		read := func(f string) string { return src }
		for _, fw := range []string{jsJest, jsVitest} {
			for _, g := range jsInfra(fw, &config.Property{Path: "a.test.js", Framework: fw}, files, read) {
				if strings.HasPrefix(g.Glob, "/") || strings.HasPrefix(g.Glob, "..") {
					t.Fatalf("%q names %q", src, g.Glob)
				}
			}
		}
	})
}
