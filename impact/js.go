// The vitest and jest rule: the frameworks' own module graphs say which
// test files import a changed file (vitest's related files, jest's
// --findRelatedTests), asked in each tree about the changed files it
// holds and about its files that import by a computed name (which no
// graph follows). Everything the graphs do not hold reaches every test:
// the configuration, setup files, node_modules, mocks, and any file that
// is not a module.

package impact

import (
	"encoding/json"
	"path"
	"slices"
	"strings"

	"github.com/flakegate/flakegate/internal/discover"
)

// JSInput is what the vitest and jest rule reads.
type JSInput struct {
	Trees *Trees
	// Framework is "vitest" or "jest" (it names the graph in the reasons).
	Framework string
	// Tests are the suite's test files (the files of the base's listing),
	// repository-relative.
	Tests []string
	// Related are the test files the framework related to JSQuery's files,
	// in either tree (ReadJSRelated of each), repository-relative; nil
	// when not known.
	Related map[string]bool
	// Global are files whose change reaches every test besides the usual
	// names: the framework's config and setup files as the config names
	// them (infra's watches of the suite's tests).
	Global []string
}

// jsSourceExt are the extensions of the modules the graphs follow.
var jsSourceExt = map[string]bool{".js": true, ".mjs": true, ".cjs": true, ".ts": true, ".mts": true, ".cts": true,
	".jsx": true, ".tsx": true, ".json": true, ".vue": true, ".svelte": true}

// jsGlobalName reports whether a file of this name reaches every test:
// the frameworks' and the compilers' configuration, the packages and
// their lockfiles, the environment files.
func jsGlobalName(base string) bool {
	switch base {
	case "package.json", "package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml", "pnpm-workspace.yaml",
		"bun.lockb", "bun.lock", "jsconfig.json", ".npmrc", ".yarnrc", ".yarnrc.yml", ".nvmrc", ".node-version", ".swcrc", ".browserslistrc":
		return true
	}
	for _, prefix := range []string{"vitest.config.", "vite.config.", "vitest.setup.", "vitest.workspace.", "vitest.shims.",
		"jest.config.", "jest.setup.", "setupTests.", "babel.config.", ".babelrc", "tsconfig", ".env"} {
		if strings.HasPrefix(base, prefix) {
			return true
		}
	}
	return false
}

// JS decides every test file of a vitest or jest suite, in this order:
//
//  1. A file the graph does not hold changed: a configuration or setup
//     file (vitest.config.*, jest.config.*, package.json, a lockfile,
//     tsconfig*, babel's, .env*, or one in Global), anything under
//     node_modules or __mocks__, or a file that is not a module (the
//     tests may read it): every test file.
//  2. What the framework relates is not known: every test file.
//  3. The framework relates it to a changed file or to a file that
//     imports by a computed name, or it changed itself.
func JS(in JSInput) ([]Verdict, error) {
	if in.Trees == nil {
		return nil, invalid(in.Framework, "the trees are needed")
	}
	t := in.Trees
	global := func(p string) bool {
		return jsGlobalName(path.Base(p)) || slices.Contains(in.Global, p) || under(p, "node_modules") || under(p, "__mocks__") ||
			!jsSourceExt[path.Ext(p)]
	}
	var out []Verdict
	g, hasGlobal := t.first(global)
	anySource, hasSource := t.first(func(string) bool { return true })
	for _, test := range in.Tests {
		switch {
		case hasGlobal:
			out = append(out, affected(test, g, "%s %s: the %s module graph does not hold it, so it reaches every test", g, t.Kind(g), in.Framework))
		case !hasSource:
			out = append(out, Verdict{Unit: test, Why: "inputs identical to the base's: the trees hold the same files"})
		case t.Kind(test) != "":
			out = append(out, affected(test, test, "%s %s", test, t.Kind(test)))
		case in.Related == nil:
			out = append(out, affected(test, anySource, "%s %s, and what %s relates to it is not known", anySource, t.Kind(anySource), in.Framework))
		case in.Related[test]:
			out = append(out, affected(test, "", "%s's module graph relates it to a changed file, or to a file that imports by a computed name", in.Framework))
		default:
			out = append(out, Verdict{Unit: test, Why: "inputs identical to the base's: " + in.Framework + "'s module graph relates it to no changed file"})
		}
	}
	return sortVerdicts(dedupe(out)), nil
}

// under reports whether p has a folder named dir on its way.
func under(p, dir string) bool {
	return strings.HasPrefix(p, dir+"/") || strings.Contains(p, "/"+dir+"/")
}

// JSQuery lists the files to ask the framework about in one tree: the
// changed modules that tree holds, and its modules that import or
// require by a computed name or start processes (a test that reaches one
// of them may reach any file). It is empty when nothing changed.
func JSQuery(t *Trees, candidate bool) []string {
	if len(t.changes) == 0 {
		return nil
	}
	var out []string
	for p := range t.files(candidate) {
		if !jsSourceExt[path.Ext(p)] || path.Ext(p) == ".json" || under(p, "node_modules") {
			continue
		}
		if t.Kind(p) != "" || jsDynamic(t.readText(candidate, p)) {
			out = append(out, p)
		}
	}
	for _, c := range t.changes {
		if t.has(candidate, c.Path) && path.Ext(c.Path) == ".json" && !under(c.Path, "node_modules") {
			out = append(out, c.Path)
		}
	}
	slices.Sort(out)
	return out
}

// jsDynamic reports whether JavaScript or TypeScript src imports or
// requires a module by a computed name (import(x), require(x),
// jest.requireActual(x), vi.importActual(x), createRequire, eval(...),
// new Function(...), new Worker(...)) or starts a process or thread
// (child_process, execa, cross-spawn, worker_threads, cluster).
func jsDynamic(src string) bool {
	toks := discover.JSTokenize(src)
	for i, tok := range toks {
		if tok.Kind == 's' {
			switch strings.TrimPrefix(tok.Text, "node:") {
			case "child_process", "execa", "cross-spawn", "worker_threads", "cluster":
				return true
			}
			continue
		}
		if tok.Kind != 'n' {
			continue
		}
		switch tok.Text {
		case "import", "require", "requireActual", "requireMock", "importActual", "importMock":
			if i+1 < len(toks) && toks[i+1].Kind == 'o' && toks[i+1].Text == "(" {
				literal := i+3 < len(toks) && toks[i+2].Kind == 's' && toks[i+3].Kind == 'o' && (toks[i+3].Text == ")" || toks[i+3].Text == ",")
				if !literal {
					return true
				}
			}
		case "createRequire":
			return true
		case "eval", "Worker", "Function": // eval(...), new Worker(...), new Function(...)
			call := i+1 < len(toks) && toks[i+1].Kind == 'o' && toks[i+1].Text == "("
			prev := ""
			if i > 0 {
				prev = toks[i-1].Text
			}
			if call && (tok.Text == "eval" && prev != "." || prev == "new") {
				return true
			}
		}
	}
	return false
}

// JSRelatedScript is the node program (node --input-type=module -e
// SCRIPT FILE...) that asks vitest which test files import the files
// (vitest's own related search over its module graph, as `vitest
// related` runs them), and prints them without running any.
const JSRelatedScript = `const { createVitest } = await import('vitest/node')
const related = process.argv.slice(1)
const vitest = await createVitest('test', { watch: false, run: true, related, passWithNoTests: true })
try {
  const specs = await vitest.getRelevantTestSpecifications()
  let out = 'flakegate-related-root ' + process.cwd() + '\n'
  for (const s of specs) out += 'flakegate-related ' + s.moduleId + '\n'
  process.stdout.write(out + 'flakegate-related-end\n')
} finally {
  await vitest.close()
}
`

// JSRelatedArgv is the command that asks framework ("vitest" or "jest")
// which test files import files, run in the tree's folder with node from
// the attempts' PATH and the tree's node_modules. jest's is its CLI
// (--listTests --findRelatedTests) after a line naming the folder.
func JSRelatedArgv(framework string, files []string) []string {
	if framework == "jest" {
		return append([]string{"sh", "-c", `printf 'flakegate-related-root %s\n' "$(pwd -P)" && ` +
			`exec node node_modules/jest/bin/jest.js --ci --listTests --json --findRelatedTests "$@"`, "flakegate-related"}, files...)
	}
	return append([]string{"node", "--input-type=module", "-e", JSRelatedScript}, files...)
}

// ReadJSRelated reads the output of a JSRelatedArgv run and returns the
// test files it names, repository-relative. Output without the lines
// the command prints is an error: the relation is then not known.
func ReadJSRelated(framework string, out []byte) (map[string]bool, error) {
	text := string(out)
	i := strings.LastIndex(text, "flakegate-related-root ")
	if i < 0 {
		return nil, invalid(framework+"'s related files", "no root line")
	}
	rest := text[i+len("flakegate-related-root "):]
	root, rest, _ := strings.Cut(rest, "\n")
	var files []string
	if framework == "jest" {
		start := strings.Index(rest, "[")
		if start < 0 || json.NewDecoder(strings.NewReader(rest[start:])).Decode(&files) != nil {
			return nil, invalid("jest --listTests", "no JSON list of test files")
		}
	} else {
		body, ok := strings.CutSuffix(strings.TrimRight(rest, "\n"), "flakegate-related-end")
		if !ok {
			return nil, invalid("vitest's related files", "the list has no end")
		}
		for _, l := range strings.Split(body, "\n") {
			if f, ok := strings.CutPrefix(l, "flakegate-related "); ok {
				files = append(files, f)
			}
		}
	}
	related := map[string]bool{}
	for _, f := range files {
		if rel, in := relTo(root, f); in {
			related[rel] = true
		}
	}
	return related, nil
}
