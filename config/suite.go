package config

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/goccy/go-yaml/ast"
)

// DefaultNewTestRuns is how many times a check runs each test the
// candidate adds (new_test_runs).
const DefaultNewTestRuns = 5

// MaxNewTestRuns bounds new_test_runs.
const MaxNewTestRuns = 100

// Suite is one entry of suites: every test the framework lists in the
// base tree under Path is a property of its own, run with each seed as
// the order seed (docs/configuration.md, "Suites").
//
//	suites:
//	  - path: "./..."          go: a package pattern; pytest, vitest, jest: a folder or file
//	    framework: go          go, pytest, vitest or jest
//	    seeds: [1, 2, 3]       order seeds (integers); random_seeds works as for properties
//	    wall_budget: 5m        one run of the whole suite with one seed
//	    exclude: ["TestSlow*"] optional: test names not gated ("*" and "?")
//	    fixture: "testdata/**" optional: the files whose digest is the triples' fixture digest
type Suite struct {
	// Path is the package pattern (go: "./...", "./p", "./p/...") or the
	// repo-relative folder or file (pytest, vitest, jest), as written
	// after cleaning.
	Path      string
	Framework string
	Seeds     []flakegate.Seed
	// RandomSeeds is the entry's random_seeds, else the global one.
	RandomSeeds int
	WallBudget  time.Duration
	// Exclude are name patterns ("*" and "?" match any run of
	// characters and one character) whose tests are not gated.
	Exclude []string
	// Fixture is the fixture glob as written ("" for none); FixtureRoot
	// is the file or folder digested for it: the glob up to its first
	// segment with a wildcard.
	Fixture, FixtureRoot string
	// PythonPath are the folders (repository-relative, cleaned) a pytest
	// suite's commands put on sys.path: each command runs as env
	// PYTHONPATH=a:b python -m pytest ..., as a property's run does for a
	// src/ layout.
	PythonPath []string
	// Index is the entry's position in suites.
	Index int
}

// Excluded reports whether the suite's exclude patterns name the test.
func (s *Suite) Excluded(name string) bool {
	for _, pat := range s.Exclude {
		if ok, _ := path.Match(strings.ReplaceAll(pat, "/", "\x00"), strings.ReplaceAll(name, "/", "\x00")); ok {
			return true
		}
	}
	return false
}

// suites reads the suites list and the two new-test keys.
func (l *loader) suites(cfg *Config, f map[string]ast.Node) error {
	cfg.NewTestRuns = DefaultNewTestRuns
	var err error
	if v, ok := f["new_test_runs"]; ok {
		if cfg.NewTestRuns, err = l.integer("new_test_runs", v, 1, MaxNewTestRuns); err != nil {
			return err
		}
	}
	if v, ok := f["reject_flaky_new_tests"]; ok {
		if cfg.RejectFlakyNewTests, err = l.boolean("reject_flaky_new_tests", v); err != nil {
			return err
		}
	}
	v, ok := f["suites"]
	if !ok {
		return nil
	}
	seq, err := l.sequence("suites", v)
	if err != nil {
		return err
	}
	if len(seq.Values) == 0 {
		return l.errf("suites", v, "empty; want at least one suite, or no suites: key")
	}
	seen := map[string]string{}
	for i, sn := range seq.Values {
		key := fmt.Sprintf("suites[%d]", i)
		s, err := l.suite(key, sn, cfg.RandomSeeds)
		if err != nil {
			return err
		}
		s.Index = i
		id := s.Framework + "\x00" + s.Path
		if prev, dup := seen[id]; dup {
			return l.errf(key, sn, "same %s suite %s as %s; list each suite once", s.Framework, s.Path, prev)
		}
		seen[id] = key
		cfg.Suites = append(cfg.Suites, s)
	}
	return nil
}

func (l *loader) suite(key string, n ast.Node, randomSeeds int) (Suite, error) {
	s := Suite{RandomSeeds: randomSeeds}
	m, err := l.mapping(key, n)
	if err != nil {
		return s, err
	}
	f, err := l.fields(key, m, "path", "framework", "seeds", "random_seeds", "wall_budget", "exclude", "fixture", "pythonpath")
	if err != nil {
		return s, err
	}
	for _, req := range []string{"path", "framework", "wall_budget"} {
		if _, ok := f[req]; !ok {
			return s, l.errf(join(key, req), m, "missing (required)")
		}
	}
	if s.Framework, err = l.str(join(key, "framework"), f["framework"]); err != nil {
		return s, err
	}
	switch s.Framework {
	case FrameworkGo, FrameworkPytest, FrameworkVitest, FrameworkJest:
	default:
		return s, l.errf(join(key, "framework"), f["framework"], "%q is not a suite framework; want go, pytest, vitest or jest", s.Framework)
	}
	if s.Path, err = l.suitePath(join(key, "path"), f["path"], s.Framework); err != nil {
		return s, err
	}
	if v, ok := f["random_seeds"]; ok {
		if s.RandomSeeds, err = l.integer(join(key, "random_seeds"), v, 0, MaxRandomSeeds); err != nil {
			return s, err
		}
	}
	if v, ok := f["seeds"]; ok {
		if s.Seeds, err = l.seeds(join(key, "seeds"), v); err != nil {
			return s, err
		}
		for i, seed := range s.Seeds {
			if !seed.IsInt() || !fitsInt64(string(seed)) {
				return s, l.errf(fmt.Sprintf("%s.seeds[%d]", key, i), v, "order seed %s: want an integer that fits in 64 bits (the framework's shuffle seed)", seed.String())
			}
			if js := s.Framework == FrameworkVitest || s.Framework == FrameworkJest; js && !fitsInt32(string(seed)) {
				return s, l.errf(fmt.Sprintf("%s.seeds[%d]", key, i), v, "order seed %s: want an integer from -2147483648 to 2147483647 (jest's --seed takes 32 bits; vitest's --sequence.seed likewise here)", seed.String())
			}
		}
	} else if s.RandomSeeds == 0 {
		return s, l.errf(join(key, "seeds"), m, "missing; list order seeds, or draw some with random_seeds: N")
	}
	if s.WallBudget, err = l.duration(join(key, "wall_budget"), f["wall_budget"]); err != nil {
		return s, err
	}
	if v, ok := f["exclude"]; ok {
		if s.Exclude, err = l.namePatterns(join(key, "exclude"), v); err != nil {
			return s, err
		}
	}
	if v, ok := f["fixture"]; ok {
		if s.Fixture, s.FixtureRoot, err = l.fixtureGlob(join(key, "fixture"), v); err != nil {
			return s, err
		}
	}
	if v, ok := f["pythonpath"]; ok {
		if s.Framework != FrameworkPytest {
			return s, l.errf(join(key, "pythonpath"), v, "only a pytest suite takes pythonpath (this one is %s)", s.Framework)
		}
		if s.PythonPath, err = l.pythonPath(join(key, "pythonpath"), v); err != nil {
			return s, err
		}
	}
	return s, nil
}

// pythonPath reads a pytest suite's pythonpath: one or more folders
// inside the repository, each once, none holding a ':' (PYTHONPATH's
// separator).
func (l *loader) pythonPath(key string, n ast.Node) ([]string, error) {
	seq, err := l.sequence(key, n)
	if err != nil {
		return nil, err
	}
	if len(seq.Values) == 0 {
		return nil, l.errf(key, n, "empty; name the folders to put on sys.path (e.g. [src]), or leave the key out")
	}
	var out []string
	for i, v := range seq.Values {
		k := fmt.Sprintf("%s[%d]", key, i)
		p, err := l.str(k, v)
		if err != nil {
			return nil, err
		}
		c, err := CleanRepoPath(p)
		if err != nil {
			return nil, l.errf(k, v, "%v", err)
		}
		if strings.ContainsAny(c, ":") {
			return nil, l.errf(k, v, "%q holds a ':', which PYTHONPATH reads as a separator", p)
		}
		if slices.Contains(out, c) {
			return nil, l.errf(k, v, "%q is listed twice", p)
		}
		out = append(out, c)
	}
	return out, nil
}

// suitePath reads a suite's path: a go package pattern relative to the
// repository root ("./..." or "./p/..."), or a pytest, vitest or jest
// folder or file.
func (l *loader) suitePath(key string, n ast.Node, framework string) (string, error) {
	p, err := l.str(key, n)
	if err != nil {
		return "", err
	}
	if framework != FrameworkGo {
		if p == "." || p == "./" {
			return ".", nil
		}
		c, err := CleanRepoPath(p)
		if err != nil {
			return "", l.errf(key, n, "%v", err)
		}
		return c, nil
	}
	rest, dots := strings.CutSuffix(p, "/...")
	if p == "./..." || p == "..." {
		rest, dots = ".", true
	}
	if rest != "." && !strings.HasPrefix(rest, "./") {
		return "", l.errf(key, n, "want a package pattern relative to the repository root (./..., ./pkg or ./pkg/...), got %q", p)
	}
	clean := "."
	if rest != "." {
		c, err := CleanRepoPath(strings.TrimPrefix(rest, "./"))
		if err != nil || strings.ContainsAny(c, "*?[ ") || strings.Contains(c, "...") {
			return "", l.errf(key, n, "%q is not a package pattern inside the repository", p)
		}
		clean = "./" + c
	}
	if dots {
		if clean == "." {
			return "./...", nil
		}
		return clean + "/...", nil
	}
	return clean, nil
}

// namePatterns reads exclude: test name patterns.
func (l *loader) namePatterns(key string, n ast.Node) ([]string, error) {
	seq, err := l.sequence(key, n)
	if err != nil {
		return nil, err
	}
	var out []string
	for i, pn := range seq.Values {
		k := fmt.Sprintf("%s[%d]", key, i)
		s, err := l.str(k, pn)
		if err != nil {
			return nil, err
		}
		if _, err := path.Match(s, ""); err != nil || s == "" {
			return nil, l.errf(k, pn, "%q is not a name pattern (\"*\" and \"?\" match characters)", s)
		}
		out = append(out, s)
	}
	return out, nil
}

// fixtureGlob reads a suite's fixture glob and returns it with the file
// or folder digested for it (the glob up to its first wildcard segment).
func (l *loader) fixtureGlob(key string, n ast.Node) (glob, root string, err error) {
	s, err := l.str(key, n)
	if err != nil {
		return "", "", err
	}
	g, err := CleanGlob(s)
	if err != nil {
		return "", "", l.errf(key, n, "%v", err)
	}
	var lit []string
	for _, seg := range strings.Split(g, "/") {
		if strings.ContainsAny(seg, "*?[") {
			break
		}
		lit = append(lit, seg)
	}
	if len(lit) == 0 {
		return "", "", l.errf(key, n, "%q starts with a wildcard: name the folder the fixture files are in (testdata/**)", s)
	}
	return g, strings.Join(lit, "/"), nil
}

// fitsInt32 reports whether a decimal integer fits in an int32.
func fitsInt32(s string) bool {
	var v int32
	_, err := fmt.Sscan(s, &v)
	return err == nil && fmt.Sprint(v) == s
}

// fitsInt64 reports whether a decimal integer fits in an int64.
func fitsInt64(s string) bool {
	var v int64
	_, err := fmt.Sscan(s, &v)
	return err == nil && fmt.Sprint(v) == s
}
