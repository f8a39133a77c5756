// What a vitest or jest config names: every local file its infrastructure
// keys name is test infrastructure (a transform rewrites the test before
// it runs; a setup file, a resolver or an environment runs around it). The
// config is read, never run: literals (JSON, package.json's "jest", and
// the literal parts of a JavaScript or TypeScript config), the local
// files it imports, and the packages it names when node_modules is in
// the repository. A value flakegate cannot read (a variable of the
// config, a computed path) is said in the watch's reason, and then
// everything under the config's folder is watched: a patch cannot reach
// the test through what flakegate did not understand.

package infra

import (
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/internal/discover"

	"github.com/flakegate/flakegate/internal/lazyre"
)

// jsInfraKeys are the config keys that name test infrastructure.
var jsInfraKeys = map[string]bool{
	"transform": true, "resolver": true, "moduleNameMapper": true, "preset": true,
	"testEnvironment": true, "globalSetup": true, "globalTeardown": true,
	"setupFiles": true, "setupFilesAfterEnv": true, "snapshotResolver": true,
	"plugins": true, "testRunner": true, "runner": true, "testSequencer": true,
	"reporters": true, "watchPlugins": true, "dependencyExtractor": true,
	"projects": true, "environment": true, "alias": true,
	"workspace": true, "extends": true,
}

// jsSafeNames are identifiers a readable value may hold besides the
// config's imports: literals, path helpers and the config's own folder.
var jsSafeNames = map[string]bool{
	"true": true, "false": true, "null": true, "undefined": true, "require": true,
	"path": true, "join": true, "resolve": true, "__dirname": true, "import": true,
	"meta": true, "dirname": true, "url": true, "URL": true, "fileURLToPath": true,
	"new": true, "process": true, "cwd": true, "rootDir": true, "as": true,
	"const": true, "satisfies": true,
}

var jsExts = []string{".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".jsx", ".tsx", ".json"}

// jsInfra lists what a vitest or jest property is graded by: the config
// named in run (--config, -c), else the usual names (vitest.config.*,
// vite.config.*, vitest.setup.* and vitest.workspace.* for vitest;
// jest.config.* and jest.setup.* for jest, and package.json's "jest") in
// the property's folder and every folder above it; and every local file
// those configs name or import (see jsReader).
func jsInfra(fw string, p *config.Property, files map[string]bool, read func(string) string) []Watch {
	r := &jsReader{fw: fw, files: files, read: read, seen: map[string]bool{}}
	var configs []string
	for i, a := range p.Run {
		v, ok := strings.CutPrefix(a, "--config=")
		if !ok && (a == "--config" || a == "-c") && i+1 < len(p.Run) {
			v, ok = p.Run[i+1], true
		}
		if !ok {
			continue
		}
		if c, err := config.CleanRepoPath(v); err == nil {
			r.add(c, "the "+fw+" config (from run)")
			configs = append(configs, c)
		}
	}
	names := []string{"vitest.config.*", "vite.config.*", "vitest.setup.*", "vitest.workspace.*"}
	if fw == jsJest {
		names = []string{"jest.config.*", "jest.setup.*"}
	}
	pkgJSON := ""
	for d := path.Dir(p.Path); ; d = path.Dir(d) {
		for _, n := range names {
			g := path.Join(d, n)
			r.out = append(r.out, Watch{g, fw + " configuration"})
			if len(configs) == 0 && !strings.Contains(n, ".setup.") {
				for f := range files {
					if config.MatchGlob(g, f) {
						configs = append(configs, f)
					}
				}
			}
		}
		if pj := path.Join(d, "package.json"); pkgJSON == "" && files[pj] {
			pkgJSON = pj
		}
		if d == "." {
			break
		}
	}
	sort.Strings(configs)
	for _, cf := range configs {
		r.config(cf)
	}
	if fw == jsJest && pkgJSON != "" && len(configs) == 0 {
		var pkg map[string]any
		if err := json.Unmarshal([]byte(read(pkgJSON)), &pkg); err != nil {
			r.unreadable(pkgJSON, 0, "not JSON: "+err.Error())
		} else if j, ok := pkg["jest"]; ok {
			r.add(pkgJSON, "the jest config (package.json's \"jest\")")
			r.jsonValue(pkgJSON, "", j)
		}
	}
	// The local files the configs load: their imports, and their strings
	// that name files of the repository (a config fragment spread into the
	// config, a transformer's own modules).
	for len(r.queue) > 0 {
		f := r.queue[0]
		r.queue = r.queue[1:]
		toks := discover.JSTokenize(r.read(f))
		r.imports(f, toks)
		for _, t := range toks {
			if t.Kind == 's' {
				r.target(f, "", t.Text, "a file named by "+f)
			}
		}
	}
	return r.out
}

// jsReader collects what the configs name.
type jsReader struct {
	fw    string
	files map[string]bool
	read  func(string) string
	seen  map[string]bool
	queue []string // local JavaScript files whose imports are followed
	out   []Watch
}

func (r *jsReader) add(glob, why string) {
	if r.seen[glob] {
		return
	}
	r.seen[glob] = true
	r.out = append(r.out, Watch{glob, why})
}

// unreadable watches everything under cf's folder, saying why.
func (r *jsReader) unreadable(cf string, line int, what string) {
	where := cf
	if line > 0 {
		where = fmt.Sprintf("%s:%d", cf, line)
	}
	d := path.Dir(cf)
	r.add(path.Join(d, "**"), fmt.Sprintf("%s: %s, which flakegate cannot read without running it, so everything under %s/ is watched (write the value as a literal, or name its files under watch:)", where, what, d))
}

// config reads one config file.
func (r *jsReader) config(cf string) {
	src := r.read(cf)
	if strings.HasSuffix(cf, ".json") {
		var v any
		if err := json.Unmarshal([]byte(src), &v); err != nil {
			r.unreadable(cf, 0, "not JSON: "+err.Error())
			return
		}
		r.jsonValue(cf, "", v)
		return
	}
	toks := discover.JSTokenize(src)
	bound := r.imports(cf, toks)
	for i := 0; i+1 < len(toks); i++ {
		t := toks[i]
		if (t.Kind != 'n' && t.Kind != 's') || !jsInfraKeys[t.Text] || toks[i+1].Text != ":" || toks[i+1].Kind != 'o' {
			continue
		}
		end := jsValueEnd(toks, i+2)
		if why := r.value(cf, t.Text, toks[i+2:end], bound); why != "" {
			r.unreadable(cf, t.Line, t.Text+" "+why)
		}
	}
	// Any string of the config that names a file of the repository.
	for _, t := range toks {
		if t.Kind == 's' {
			r.target(cf, "", t.Text, "a file named by "+cf)
		}
	}
}

// jsValueEnd is the index just past the value starting at i: the ',' or
// closing bracket at its depth.
func jsValueEnd(toks []discover.JSToken, i int) int {
	depth := 0
	for j := i; j < len(toks); j++ {
		if toks[j].Kind != 'o' {
			continue
		}
		switch toks[j].Text {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			if depth == 0 {
				return j
			}
			depth--
		case ",", ";":
			if depth == 0 {
				return j
			}
		}
	}
	return len(toks)
}

// value reads the value of an infrastructure key: its strings name files
// (or packages); it is readable when every name in it is a key, an
// import of the config or a literal. It returns what it could not read.
func (r *jsReader) value(cf, key string, toks []discover.JSToken, bound map[string]bool) string {
	for j, t := range toks {
		switch t.Kind {
		case 's':
			r.target(cf, key, t.Text, key+" of "+cf)
		case 'x':
			if t.Text == "" {
				return fmt.Sprintf("is a template with ${} (line %d)", t.Line)
			}
		case 'n':
			isKey := j+1 < len(toks) && toks[j+1].Kind == 'o' && toks[j+1].Text == ":"
			isMember := j > 0 && toks[j-1].Kind == 'o' && toks[j-1].Text == "."
			if isKey || isMember || bound[t.Text] || jsSafeNames[t.Text] {
				continue
			}
			return fmt.Sprintf("uses %s (line %d), a value of the config", t.Text, t.Line)
		}
	}
	return ""
}

// jsonValue walks a JSON config: the strings under its infrastructure keys
// name files or packages.
func (r *jsReader) jsonValue(cf, key string, v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, vv := range x {
			if key != "" {
				r.jsonValue(cf, key, vv) // a transform or moduleNameMapper map
			} else if jsInfraKeys[k] {
				r.jsonValue(cf, k, vv)
			} else {
				r.jsonValue(cf, "", vv)
			}
		}
	case []any:
		for _, vv := range x {
			r.jsonValue(cf, key, vv)
		}
	case string:
		if key != "" {
			r.target(cf, key, x, key+" of "+cf)
		} else {
			r.target(cf, "", x, "a file named by "+cf)
		}
	}
}

var mapperGroupRe = lazyre.New(`\$\d+|\$\{?\w+\}?`)

// target watches what the string s of config cf names, when it names a
// local file (relative to cf's folder, jest's <rootDir>), a folder with a
// preset, or a package under a node_modules of the repository. A string
// under no key only counts when it is a file of the repository.
func (r *jsReader) target(cf, key, s, why string) {
	dir := path.Dir(cf)
	v := strings.TrimPrefix(s, "<rootDir>/")
	if v == "" || strings.ContainsAny(v, "\n\x00*") || len(v) > 1024 {
		return
	}
	if (key == "moduleNameMapper" || key == "alias") && mapperGroupRe.MatchString(v) {
		// "<rootDir>/src/$1": an alias for the modules the test imports
		// (product code, as their own paths are), not a file of its own.
		return
	}
	local := strings.HasPrefix(v, "./") || strings.HasPrefix(v, "../") || strings.HasPrefix(s, "<rootDir>/") ||
		strings.HasPrefix(v, "/") || strings.Contains(v, "/") && !strings.HasPrefix(v, "@")
	if strings.HasPrefix(v, "/") {
		return // an absolute path is outside the repository
	}
	if local || key == "" {
		rel, err := config.CleanRepoPath(path.Join(dir, v))
		if err != nil {
			return
		}
		f := rel
		if key != "" {
			f = r.file(rel, key == "preset")
		} else if !r.files[rel] {
			f = "" // a string under no key counts only as an exact file
		}
		if f != "" {
			r.add(f, why)
			if isJSFile(f) {
				r.follow(f)
			} else if strings.HasSuffix(f, ".json") && key != "" {
				var x any
				if json.Unmarshal([]byte(r.read(f)), &x) == nil {
					r.jsonValue(f, "", x)
				}
			}
		}
		return
	}
	// A package name: its files when node_modules is in the repository.
	names := []string{v}
	switch key {
	case "testEnvironment", "environment":
		names = append(names, "jest-environment-"+v, "vitest-environment-"+v)
	}
	for _, n := range names {
		pkg := n
		if parts := strings.SplitN(n, "/", 3); strings.HasPrefix(n, "@") && len(parts) >= 2 {
			pkg = parts[0] + "/" + parts[1]
		} else {
			pkg = parts[0]
		}
		for d := dir; ; d = path.Dir(d) {
			nm := path.Join(d, "node_modules", pkg)
			if r.hasUnder(nm) {
				r.add(nm+"/**", why+" (the package "+pkg+")")
				break
			}
			if d == "." {
				break
			}
		}
	}
}

// file resolves a local module path: the file, with an extension, or a
// folder's index (or jest-preset for a preset).
func (r *jsReader) file(rel string, preset bool) string {
	if r.files[rel] {
		return rel
	}
	for _, ext := range jsExts {
		if r.files[rel+ext] {
			return rel + ext
		}
	}
	stems := []string{"index"}
	if preset {
		stems = []string{"jest-preset", "index"}
	}
	for _, s := range stems {
		for _, ext := range jsExts {
			if f := path.Join(rel, s+ext); r.files[f] {
				return f
			}
		}
	}
	return ""
}

func (r *jsReader) hasUnder(dir string) bool {
	for f := range r.files {
		if strings.HasPrefix(f, dir+"/") {
			return true
		}
	}
	return false
}

func (r *jsReader) follow(f string) {
	if r.seen["follow:"+f] {
		return
	}
	r.seen["follow:"+f] = true
	r.queue = append(r.queue, f)
}

// imports watches and follows the local files f imports (import ... from,
// import(), require(), export ... from), and returns the names those
// imports bind.
func (r *jsReader) imports(f string, toks []discover.JSToken) map[string]bool {
	bound := map[string]bool{}
	for i, t := range toks {
		if t.Kind != 's' || i == 0 {
			continue
		}
		prev := toks[i-1]
		isFrom := prev.Kind == 'n' && (prev.Text == "from" || prev.Text == "import")
		isCall := prev.Kind == 'o' && prev.Text == "(" && i > 1 && toks[i-2].Kind == 'n' && (toks[i-2].Text == "require" || toks[i-2].Text == "import" ||
			toks[i-2].Text == "resolve" && i > 3 && toks[i-3].Text == "." && toks[i-4].Text == "require")
		if !isFrom && !isCall {
			continue
		}
		r.target(f, "import", t.Text, "imported by "+f)
		// The names bound: import a, {b as c} from / const d = require(...).
		for j := i - 1; j >= 0 && j > i-40; j-- {
			tj := toks[j]
			if tj.Kind == 'o' && (tj.Text == ";" || tj.Text == ")") && j != i-1 {
				break
			}
			if tj.Kind == 'n' && (tj.Text == "import" || tj.Text == "const" || tj.Text == "let" || tj.Text == "var") && j < i-1 {
				for k := j + 1; k < i; k++ {
					if toks[k].Kind == 'n' {
						bound[toks[k].Text] = true
					}
				}
				break
			}
		}
	}
	return bound
}

func isJSFile(f string) bool {
	switch path.Ext(f) {
	case ".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".jsx", ".tsx":
		return true
	}
	return false
}
