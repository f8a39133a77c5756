package discover

import (
	"encoding/json"
	"io/fs"
	"path"
	"strings"
)

// FastCheckModule is fast-check's package name.
const FastCheckModule = "fast-check"

// fcNames are the names a file binds to fast-check: namespaces (fc in
// fc.assert) and assert itself (import { assert as check }).
type fcNames struct {
	namespaces map[string]bool
	asserts    map[string]bool
	// runner is "vitest" or "jest" when the file imports from one of
	// them ("vitest", "@jest/globals"), else "".
	runner string
}

// jsTests returns the test(...) and it(...) calls of a file whose body
// calls fast-check's assert, named by their describe blocks and their own
// name joined with a space.
func jsTests(p string, toks []jsToken) []Test {
	names := fcImports(toks)
	if len(names.namespaces) == 0 && len(names.asserts) == 0 {
		return nil
	}
	type block struct {
		name  string
		close int // index of the ')' that ends the call
		test  bool
		line  int
		found bool
	}
	var open []block
	var tests []Test
	seen := map[string]bool{}
	for i := 0; i < len(toks); i++ {
		for len(open) > 0 && i > open[len(open)-1].close {
			b := open[len(open)-1]
			open = open[:len(open)-1]
			if b.test && b.found {
				full := b.name
				if !seen[full] {
					seen[full] = true
					tests = append(tests, Test{Path: p, Name: full, Kind: "fc.assert", Line: b.line})
				}
			}
		}
		tk := toks[i]
		if tk.kind != jsName || i > 0 && toks[i-1].is(jsPunct, ".") {
			continue
		}
		// describe( / test( / it( with a plain string name.
		if (tk.text == "describe" || tk.text == "test" || tk.text == "it") && i+2 < len(toks) &&
			toks[i+1].is(jsPunct, "(") && toks[i+2].kind == jsString && strings.TrimSpace(toks[i+2].text) != "" {
			closeAt := matchParen(toks, i+1)
			name := unescapeJS(toks[i+2].text)
			var prefix []string
			for _, b := range open {
				if !b.test {
					prefix = append(prefix, b.name)
				}
			}
			full := strings.Join(append(prefix, name), " ")
			open = append(open, block{name: name, close: closeAt, test: tk.text != "describe", line: tk.line})
			if tk.text != "describe" {
				open[len(open)-1].name = full
			}
			continue
		}
		// fc.assert( or assert( under an imported name.
		isCall := names.asserts[tk.text] && i+1 < len(toks) && toks[i+1].is(jsPunct, "(") ||
			names.namespaces[tk.text] && i+3 < len(toks) && toks[i+1].is(jsPunct, ".") && toks[i+2].is(jsName, "assert") && toks[i+3].is(jsPunct, "(")
		if isCall {
			for k := range open {
				open[k].found = true
			}
		}
	}
	for len(open) > 0 {
		b := open[len(open)-1]
		open = open[:len(open)-1]
		if b.test && b.found && !seen[b.name] {
			seen[b.name] = true
			tests = append(tests, Test{Path: p, Name: b.name, Kind: "fc.assert", Line: b.line})
		}
	}
	return tests
}

// matchParen returns the index of the ')' that closes the '(' at i, or the
// last index when it is not closed.
func matchParen(toks []jsToken, i int) int {
	depth := 0
	for k := i; k < len(toks); k++ {
		if toks[k].kind != jsPunct {
			continue
		}
		switch toks[k].text {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
			if depth == 0 {
				return k
			}
		}
	}
	return len(toks) - 1
}

// unescapeJS undoes the common escapes of a test name (\' \" \\ \`).
func unescapeJS(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			switch s[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			default:
				b.WriteByte(s[i])
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// fcImports reads the file's imports and requires of fast-check (and
// whether it takes its test functions from "vitest" or "@jest/globals"):
//
//	import fc from 'fast-check'             import * as fc from 'fast-check'
//	import fc, { assert as check } from 'fast-check'
//	import { assert } from 'fast-check'     const fc = require('fast-check')
//	const { assert: check } = require('fast-check')
func fcImports(toks []jsToken) fcNames {
	n := fcNames{namespaces: map[string]bool{}, asserts: map[string]bool{}}
	for i := 0; i < len(toks); i++ {
		switch {
		case toks[i].is(jsName, "import") && (i == 0 || !toks[i-1].is(jsPunct, ".")):
			// import ... from 'module' (up to the module string).
			end := i + 1
			for end < len(toks) && toks[end].kind != jsString && end-i < 64 {
				end++
			}
			if end >= len(toks) || end == i+1 || !toks[end-1].is(jsName, "from") {
				continue
			}
			mod := toks[end].text
			switch mod {
			case "vitest":
				n.runner = "vitest"
			case "@jest/globals":
				n.runner = "jest"
			case FastCheckModule:
				n.bindImport(toks[i+1 : end-1])
			}
			i = end
		case toks[i].is(jsName, "require") && i+3 < len(toks) && toks[i+1].is(jsPunct, "(") &&
			toks[i+2].kind == jsString && toks[i+3].is(jsPunct, ")") && toks[i+2].text != FastCheckModule:
			switch toks[i+2].text {
			case "vitest":
				n.runner = "vitest"
			case "@jest/globals":
				n.runner = "jest"
			}
		case toks[i].is(jsName, "require") && i+3 < len(toks) && toks[i+1].is(jsPunct, "(") &&
			toks[i+2].is(jsString, FastCheckModule) && toks[i+3].is(jsPunct, ")") && i >= 2 && toks[i-1].is(jsPunct, "="):
			// const fc = require(...) or const { assert: a } = require(...)
			if toks[i-2].kind == jsName {
				n.namespaces[toks[i-2].text] = true
				continue
			}
			if toks[i-2].is(jsPunct, "}") {
				start := i - 2
				for start > 0 && !toks[start].is(jsPunct, "{") {
					start--
				}
				n.bindNamed(toks[start+1:i-2], ":")
			}
		}
	}
	return n
}

// bindImport reads the clause between import and from.
func (n *fcNames) bindImport(clause []jsToken) {
	if len(clause) > 0 && clause[0].is(jsName, "type") {
		return // import type { ... }: types only
	}
	for i := 0; i < len(clause); i++ {
		tk := clause[i]
		switch {
		case tk.is(jsPunct, "*") && i+2 < len(clause) && clause[i+1].is(jsName, "as") && clause[i+2].kind == jsName:
			n.namespaces[clause[i+2].text] = true
			i += 2
		case tk.is(jsPunct, "{"):
			end := i + 1
			for end < len(clause) && !clause[end].is(jsPunct, "}") {
				end++
			}
			n.bindNamed(clause[i+1:end], "as")
			i = end
		case tk.kind == jsName && (i+1 == len(clause) || clause[i+1].is(jsPunct, ",")):
			n.namespaces[tk.text] = true // the default import
		}
	}
}

// bindNamed reads "assert, assert as a" (import) or "assert, assert: a"
// (a destructuring require) and records assert's local names.
func (n *fcNames) bindNamed(list []jsToken, sep string) {
	var part []jsToken
	flush := func() {
		switch {
		case len(part) == 1 && part[0].is(jsName, "assert"):
			n.asserts["assert"] = true
		case len(part) == 3 && part[0].is(jsName, "assert") && part[1].text == sep && part[2].kind == jsName:
			n.asserts[part[2].text] = true
		}
		part = nil
	}
	for _, tk := range list {
		if tk.is(jsPunct, ",") {
			flush()
			continue
		}
		if tk.is(jsName, "type") && len(part) == 0 {
			continue
		}
		part = append(part, tk)
	}
	flush()
}

// readsSeedEnv reports whether the tokens name FAST_CHECK_SEED (as
// process.env.FAST_CHECK_SEED or a string key) in code.
func readsSeedEnv(toks []jsToken) bool {
	for _, tk := range toks {
		if (tk.kind == jsName || tk.kind == jsString) && tk.text == SeedEnv {
			return true
		}
	}
	return false
}

// packageJSON is what init reads of a package.json.
type packageJSON struct {
	Dependencies    map[string]string `json:"dependencies"`
	DevDependencies map[string]string `json:"devDependencies"`
}

// jsRunner names the runner of a JavaScript test file: the nearest
// package.json's vitest or jest dependency, else the module the file
// imports its test functions from. A package.json that is not at the
// repository root, or no runner, makes the file skipped, with the reason.
func jsRunner(fsys fs.FS, p string, toks []jsToken) (framework, dir, why string) {
	pkgDir := ""
	var pkg packageJSON
	for d := path.Dir(p); ; d = path.Dir(d) {
		if b, err := fs.ReadFile(fsys, path.Join(d, "package.json")); err == nil {
			pkgDir = d
			if err := json.Unmarshal(b, &pkg); err != nil {
				return "", "", path.Join(d, "package.json") + " is not valid JSON: " + err.Error()
			}
			break
		}
		if d == "." {
			break
		}
	}
	if pkgDir == "" {
		return "", "", "no package.json above it"
	}
	has := func(name string) bool {
		_, dep := pkg.Dependencies[name]
		_, dev := pkg.DevDependencies[name]
		return dep || dev
	}
	runner := fcImports(toks).runner
	switch {
	case runner == "vitest" || runner == "" && has("vitest") && !has("jest"):
		framework = VitestFastCheck
	case runner == "jest" || runner == "" && has("jest") && !has("vitest"):
		framework = JestFastCheck
	case has("vitest") && has("jest"):
		return "", "", "package.json names both vitest and jest and the file imports from neither"
	default:
		return "", "", "neither vitest nor jest in " + path.Join(pkgDir, "package.json")
	}
	if pkgDir != "." {
		return "", "", "its package is " + pkgDir + "/package.json, not at the repository root (the run starts at the root); add it by hand"
	}
	return framework, pkgDir, ""
}
