// Test infrastructure found, not declared: the Python helper modules a
// pytest property imports from the repository's test folders, and the
// config and setup files of vitest and jest.

package check

import (
	"context"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/evidence"
)

// JavaScript test runners whose files are watched (they are not evidence
// frameworks: their output is not read).
const (
	jsVitest = "vitest"
	jsJest   = "jest"
)

// jsFramework names the JavaScript test runner an argv runs (vitest or
// jest, directly, through npx, pnpm, yarn or node), "" for another.
func jsFramework(argv []string) string {
	for i, a := range argv {
		if i > 3 {
			break
		}
		base := path.Base(a)
		for _, ext := range []string{".mjs", ".cjs", ".js"} {
			base = strings.TrimSuffix(base, ext)
		}
		switch base {
		case jsVitest:
			return jsVitest
		case jsJest:
			return jsJest
		}
	}
	return ""
}

// repoFiles lists the files of the base revision once.
func (c *checker) repoFiles(ctx context.Context) (map[string]bool, error) {
	if c.baseFiles != nil {
		return c.baseFiles, nil
	}
	names, err := c.git.ListFiles(ctx, c.baseSHA)
	if err != nil {
		return nil, err
	}
	c.baseFiles = make(map[string]bool, len(names))
	for _, n := range names {
		c.baseFiles[n] = true
	}
	return c.baseFiles, nil
}

// propGlobs is watchGlobs plus the infrastructure found in the base
// revision: pytest helper modules and vitest/jest setup files.
func (c *checker) propGlobs(ctx context.Context, p *config.Property) ([]watchGlob, error) {
	out := watchGlobs(c.cfg, p)
	if evidence.DetectFramework(p.Run) != evidence.FrameworkPytest && jsFramework(p.Run) == "" {
		return out, nil
	}
	files, err := c.repoFiles(ctx)
	if err != nil {
		return nil, err
	}
	read := func(rel string) string {
		b, err := c.git.Show(ctx, c.baseSHA, rel)
		if err != nil {
			return ""
		}
		return string(b)
	}
	if evidence.DetectFramework(p.Run) == evidence.FrameworkPytest {
		out = append(out, pyHelpers(p.Path, files, read)...)
	}
	if fw := jsFramework(p.Run); fw != "" {
		out = append(out, jsInfra(fw, p, files, read)...)
	}
	return out, nil
}

// pyHelpers follows the imports of the property file, transitively, to
// the Python files of the repository's test folders: the property's
// folder and every folder holding a conftest.py, with what lies below
// them (never the repository root itself, which holds product code in
// most layouts). Product code it imports is not watched, nor followed.
func pyHelpers(prop string, files map[string]bool, read func(string) string) []watchGlob {
	var testDirs []string
	if d := path.Dir(prop); d != "." {
		testDirs = append(testDirs, d)
	}
	for f := range files {
		if path.Base(f) == "conftest.py" && path.Dir(f) != "." {
			testDirs = append(testDirs, path.Dir(f))
		}
	}
	inTests := func(f string) bool {
		for _, d := range testDirs {
			if strings.HasPrefix(f, d+"/") {
				return true
			}
		}
		return false
	}
	var out []watchGlob
	seen := map[string]bool{prop: true}
	queue := []string{prop}
	add := func(f, importer string) {
		if seen[f] || !files[f] || !inTests(f) {
			return
		}
		seen[f] = true
		out = append(out, watchGlob{f, "a test helper imported by " + importer})
		queue = append(queue, f)
	}
	for len(queue) > 0 {
		f := queue[0]
		queue = queue[1:]
		for _, imp := range pyImports(read(f)) {
			for _, m := range pyResolve(f, imp, files) {
				// A package's __init__.py files run on import too.
				for d := path.Dir(m); d != "." && inTests(d+"/__init__.py"); d = path.Dir(d) {
					if path.Base(m) != "__init__.py" || d != path.Dir(m) {
						add(d+"/__init__.py", f)
					}
				}
				add(m, f)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].glob < out[j].glob })
	return out
}

// pyResolve finds the files an import of file f may load: for an
// absolute import, the module under the first folder from f's up to the
// root that has it (pytest puts the test's folder and the rootdir on
// sys.path); for a relative one, under f's package. A "from M import n"
// also resolves n as a submodule of M.
func pyResolve(f string, imp pyImport, files map[string]bool) []string {
	modPath := strings.ReplaceAll(imp.Module, ".", "/")
	lookup := func(root, rel string) string {
		if rel == "" {
			if root == "." {
				return ""
			}
			return pick(files, root+"/__init__.py")
		}
		p := path.Join(root, rel)
		return pick(files, p+".py", p+"/__init__.py")
	}
	resolveIn := func(root string) []string {
		m := lookup(root, modPath)
		if m == "" && imp.Level == 0 {
			return nil
		}
		var got []string
		if m != "" {
			got = append(got, m)
		}
		for _, n := range imp.Names {
			if n == "*" {
				continue
			}
			if s := lookup(root, path.Join(modPath, n)); s != "" {
				got = append(got, s)
			}
		}
		return got
	}
	if imp.Level > 0 {
		root := path.Dir(f)
		for i := 1; i < imp.Level; i++ {
			root = path.Dir(root)
		}
		return resolveIn(root)
	}
	for d := path.Dir(f); ; d = path.Dir(d) {
		if got := resolveIn(d); len(got) > 0 {
			return got
		}
		if d == "." {
			return nil
		}
	}
}

func pick(files map[string]bool, names ...string) string {
	for _, n := range names {
		if files[n] {
			return n
		}
	}
	return ""
}

// jsSetupRe finds the setup keys of a vitest or jest config and their
// value: one string or an array of strings.
var (
	jsSetupRe  = regexp.MustCompile("(setupFiles|setupFilesAfterEnv|globalSetup|globalTeardown|testEnvironment)\\s*:\\s*(\\[[^\\]]*\\]|'[^']*'|\"[^\"]*\"|`[^`]*`)")
	jsStringRe = regexp.MustCompile("'([^']*)'|\"([^\"]*)\"|`([^`]*)`")
)

// jsInfra lists what a vitest or jest property is graded by: the config
// named in run (--config, -c), else the usual names (vitest.config.*,
// vite.config.* and vitest.setup.* for vitest; jest.config.* and
// jest.setup.* for jest) in the property's folder and every folder above
// it; and the setup files a config found in the repository names under
// setupFiles, setupFilesAfterEnv, globalSetup or globalTeardown, read as
// text (a value computed at run time is not followed).
func jsInfra(fw string, p *config.Property, files map[string]bool, read func(string) string) []watchGlob {
	var out []watchGlob
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
			out = append(out, watchGlob{c, "the " + fw + " config (from run)"})
			configs = append(configs, c)
		}
	}
	names := []string{"vitest.config.*", "vite.config.*", "vitest.setup.*", "vitest.workspace.*"}
	if fw == jsJest {
		names = []string{"jest.config.*", "jest.setup.*"}
	}
	for d := path.Dir(p.Path); ; d = path.Dir(d) {
		for _, n := range names {
			g := path.Join(d, n)
			out = append(out, watchGlob{g, fw + " configuration"})
			if len(configs) == 0 && strings.Contains(n, ".config.") {
				for f := range files {
					if config.MatchGlob(g, f) {
						configs = append(configs, f)
					}
				}
			}
		}
		if d == "." {
			break
		}
	}
	sort.Strings(configs)
	seen := map[string]bool{}
	for _, cf := range configs {
		src := read(cf)
		for _, m := range jsSetupRe.FindAllStringSubmatch(src, -1) {
			for _, s := range jsStringRe.FindAllStringSubmatch(m[2], -1) {
				v := s[1] + s[2] + s[3]
				v = strings.TrimPrefix(v, "<rootDir>/")
				if v == "" || strings.Contains(v, "${") {
					continue
				}
				rel, err := config.CleanRepoPath(path.Join(path.Dir(cf), v))
				if err != nil || seen[rel] {
					continue
				}
				if !files[rel] {
					if found := pick(files, rel+".ts", rel+".js", rel+".mjs", rel+".cjs", rel+".mts", rel+".cts"); found != "" {
						rel = found
					} else if m[1] == "testEnvironment" {
						continue // a package name, not a file
					}
				}
				seen[rel] = true
				out = append(out, watchGlob{rel, m[1] + " of " + cf})
			}
		}
	}
	return out
}
