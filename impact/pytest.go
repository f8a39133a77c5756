// The pytest rule: a test file is unaffected when its import closure (on
// both trees), the conftests and package __init__ files on its way to the
// root (and their closures), the data under its folder and what the
// suite's session read are the same in both trees.

package impact

import (
	"path"
	"strconv"
)

// PytestInput is what the pytest rule reads.
type PytestInput struct {
	Trees *Trees
	// Tests are the suite's test files (the files of the base's listing),
	// repository-relative.
	Tests []string
	// Session is what a run of the suite on the base loaded, read and
	// started (ReadPytestSession); nil when not known.
	Session *PytestSession
}

// pyConfig are the files whose change reaches every test: pytest's
// configuration (its ini file may be found in any folder on the way
// up), the package's build, and the modules Python runs at start.
var pyConfig = map[string]bool{"pytest.ini": true, ".pytest.ini": true, "pyproject.toml": true, "setup.cfg": true,
	"tox.ini": true, "setup.py": true, "sitecustomize.py": true, "usercustomize.py": true}

// pyClosure is what one test file reaches in one tree.
type pyClosure struct {
	files   map[string]bool
	unknown string // why the closure may reach any file ("" when it cannot)
}

// Pytest decides every test file of the suite, in this order (the first
// rule that finds a difference says why):
//
//  1. A configuration file changed anywhere (pytest.ini, pyproject.toml,
//     setup.cfg, tox.ini, setup.py, sitecustomize.py), or a conftest.py
//     that defines pytest hooks or pytest_plugins (hooks run for every
//     test, wherever the conftest is), or the session started a process:
//     every test file.
//  2. A file of its closure differs: the test file, the modules it
//     imports (absolute imports resolve to every file of the tree whose
//     path ends as the module's, whatever sys.path is), their package
//     __init__ files, transitively; the conftests in its folder and above
//     and its package's __init__ files, with their closures.
//  3. Its closure may import any module or start a process (a dynamic
//     import, a compiled module, a relative import flakegate cannot
//     find, subprocess or os.system): any change reaches it.
//  4. A file that is not Python source differs under its folder (its
//     data).
//  5. A file that is not Python source differs elsewhere, and the session
//     read it, listed its folder, or is not known; or was added (no log
//     sees a test ask whether a file exists): every test file.
//  6. A Python file no test's closure holds differs, and the session
//     loaded or read it, or is not known (a plugin or the configuration
//     may import it): every test file.
func Pytest(in PytestInput) ([]Verdict, error) {
	if in.Trees == nil {
		return nil, invalid("pytest", "the trees are needed")
	}
	sides := []*pyIndex{newPyIndex(in.Trees, false), newPyIndex(in.Trees, true)}
	closures := map[string]pyClosure{}
	claimed := map[string]bool{} // every file some test's closure holds
	for _, test := range in.Tests {
		c := pyClosure{files: map[string]bool{}}
		for _, x := range sides {
			one := x.closure(test)
			for f := range one.files {
				c.files[f] = true
				claimed[f] = true
			}
			if c.unknown == "" {
				c.unknown = one.unknown
			}
		}
		closures[test] = c
	}
	global, late := pyGlobal(in, sides), pyGlobalLate(in, claimed)
	var out []Verdict
	for _, test := range in.Tests {
		if global.Affected {
			v := global
			v.Unit = test
			out = append(out, v)
			continue
		}
		v := pyTest(in, test, closures[test])
		if !v.Affected && late.Affected {
			v = late
			v.Unit = test
		}
		out = append(out, v)
	}
	return sortVerdicts(dedupe(out)), nil
}

// dedupe drops a second verdict of a unit (a test file the listing named
// twice).
func dedupe(vs []Verdict) []Verdict {
	seen := map[string]bool{}
	out := vs[:0]
	for _, v := range vs {
		if !seen[v.Unit] {
			seen[v.Unit] = true
			out = append(out, v)
		}
	}
	return out
}

// pyGlobal is rule 1.
func pyGlobal(in PytestInput, sides []*pyIndex) Verdict {
	t := in.Trees
	if p, ok := t.first(func(p string) bool { return pyConfig[path.Base(p)] }); ok {
		return affected("", p, "%s %s: pytest's configuration reaches every test", p, t.Kind(p))
	}
	hooks := func(p string) bool {
		if path.Base(p) != "conftest.py" {
			return false
		}
		for _, x := range sides {
			if x.t.has(x.candidate, p) && x.scan(p).hooks {
				return true
			}
		}
		return false
	}
	if p, ok := t.first(hooks); ok {
		return affected("", p, "%s %s: it defines pytest hooks, which run for every test", p, t.Kind(p))
	}
	if s := in.Session; s != nil && s.Process != "" {
		if p, ok := t.first(func(string) bool { return true }); ok {
			return affected("", p, "%s %s, and the suite's session starts processes (%s), whose reads no log records", p, t.Kind(p), s.Process)
		}
	}
	return Verdict{}
}

// pyTest is rules 2 to 4 for one test file.
func pyTest(in PytestInput, test string, c pyClosure) Verdict {
	t := in.Trees
	if p, ok := t.first(func(p string) bool { return c.files[p] }); ok {
		return affected(test, p, "%s %s: the test imports it (or runs it: a conftest, a package's __init__)", p, t.Kind(p))
	}
	if c.unknown != "" {
		if p, ok := t.first(func(string) bool { return true }); ok {
			return affected(test, p, "%s %s, and %s: any file may be reached", p, t.Kind(p), c.unknown)
		}
	}
	dir := path.Dir(test)
	if p, ok := t.first(func(p string) bool { m, _ := pyModule(p); return m == "" && within(p, dir) }); ok {
		return affected(test, p, "%s %s: it is under the test's folder, where the test may read it", p, t.Kind(p))
	}
	return Verdict{Unit: test, Why: "inputs identical to the base's: the " + plural(len(c.files), "file") + " of its closure and its folder's data"}
}

// pyGlobalLate is rules 5 and 6, which reach every test (the session is
// shared) and are checked after a test's own.
func pyGlobalLate(in PytestInput, claimed map[string]bool) Verdict {
	t := in.Trees
	s := in.Session
	if p, ok := t.first(func(p string) bool {
		m, _ := pyModule(p)
		return m == "" && (s == nil || s.sees(p, t.Kind(p)))
	}); ok {
		why := "the suite's session read it"
		switch {
		case s == nil:
			why = "a test may read it (what the suite's session read is not known)"
		case t.Kind(p) == Added:
			why = "a test may ask whether it exists (no log sees that)"
		}
		return affected("", p, "%s %s: %s", p, t.Kind(p), why)
	}
	if p, ok := t.first(func(p string) bool {
		m, _ := pyModule(p)
		return m != "" && !claimed[p] && (s == nil || s.sees(p, t.Kind(p)))
	}); ok {
		why := "the suite's session loaded it"
		if s == nil {
			why = "no test imports it, and a plugin or the configuration may (what the suite's session loaded is not known)"
		}
		return affected("", p, "%s %s: %s", p, t.Kind(p), why)
	}
	return Verdict{}
}

// closure is what test reaches in the index's tree: the test file, the
// conftest.py files of its folder and every folder above, its package's
// __init__ files (pytest imports a test file inside its package), and
// what they import, transitively.
func (x *pyIndex) closure(test string) pyClosure {
	c := pyClosure{files: map[string]bool{}}
	var queue []string
	add := func(f string) {
		if !c.files[f] && x.t.has(x.candidate, f) {
			c.files[f] = true
			queue = append(queue, f)
		}
	}
	add(test)
	c.files[test] = true // a test file the candidate's tree lacks still names itself
	for d := path.Dir(test); ; d = path.Dir(d) {
		add(path.Join(d, "conftest.py"))
		if d == "." {
			break
		}
	}
	for d := path.Dir(test); d != "." && x.t.has(x.candidate, path.Join(d, "__init__.py")); d = path.Dir(d) {
		add(path.Join(d, "__init__.py"))
	}
	for len(queue) > 0 {
		f := queue[0]
		queue = queue[1:]
		s := x.scan(f)
		if c.unknown == "" && s.dynamic != "" {
			c.unknown = s.dynamic
		}
		if c.unknown == "" && s.starts != "" {
			c.unknown = s.starts
		}
		for _, imp := range s.imports {
			files, why := x.resolve(f, imp)
			if why != "" && c.unknown == "" {
				c.unknown = why
			}
			for _, g := range files {
				add(g)
			}
		}
	}
	return c
}

// plural is "1 file", "2 files".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}
