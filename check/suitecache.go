package check

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/gocache"
	"github.com/flakegate/flakegate/internal/atomicfile"
)

// The base's listing of a go suite, kept between checks. Listing runs
// go list and go test -list in the sandbox on the base tree (the second
// builds and links every test binary): about half a second of every
// check of a suite, for an answer that only the base commit, the suite's
// pattern, the toolchain and the attempts' environment decide. So a
// listing that succeeded is kept under <git common dir>/flakegate/
// suitelist (the gate's own state, which no attempt sees), named by a
// digest of those, and read back by the next check of the same base.
// Only the base's own listing is kept (trusted code, as the Go build
// cache's fill), never a candidate's. pytest's is kept too, named by what
// decides it besides the tree: the interpreter and what it imports from
// outside the tree (pytestListKey, suitecachepy.go).

// suiteListFile is a kept listing.
type suiteListFile struct {
	Tests []struct{ Pkg, File, Name string }
	// PkgTests and Rapid are suiteList's pkgTests and rapid.
	PkgTests map[string][]string
	Rapid    map[string]bool
	// NotRun is suiteList's notRun: by kind, the count and the first few.
	NotRun map[string]struct {
		N    int
		Some []string
	} `json:",omitempty"`
	// Python, Hypothesis, Unnamed, UnnamedSome, Skips and SkipPlan are
	// suiteList's (a pytest listing).
	Python      string            `json:",omitempty"`
	Hypothesis  bool              `json:",omitempty"`
	Unnamed     int               `json:",omitempty"`
	UnnamedSome []string          `json:",omitempty"`
	Skips       map[string]string `json:",omitempty"`
	SkipPlan    string            `json:",omitempty"`
}

// suiteListMaxAge bounds how long an unused kept listing stays.
const suiteListMaxAge = 14 * 24 * time.Hour

// suiteListKey names a base listing of s: "" when it is not kept (not a
// go suite, or no go on the attempts' PATH).
func (c *site) suiteListKey(s *config.Suite) string {
	if s.Framework != config.FrameworkGo || c.iso == nil {
		return ""
	}
	_, tool := gocache.Tool(c.iso.env)
	if tool == "" {
		return ""
	}
	b, _ := json.Marshal(struct {
		Base, Path, Tool, Version string
		Env                       []string
	}{c.baseSHA, s.Path, tool, flakegate.Version, c.iso.env})
	return flakegate.SHA256Hex(b)[:32]
}

// baseSuiteList is listSuite on the base tree t, read from the kept
// listing when there is one.
func (c *site) baseSuiteList(ctx context.Context, s *config.Suite, t *tree) (*suiteList, error) {
	if s.Framework == config.FrameworkPytest {
		return c.basePytestList(ctx, s, t) // suitecachepy.go
	}
	key := c.suiteListKey(s)
	if key == "" {
		return c.listSuite(ctx, s, t, true)
	}
	file := c.suiteListPath(key)
	if list, ok := readSuiteList(file); ok {
		now := time.Now()
		os.Chtimes(file, now, now) // last used
		return list, nil
	}
	list, err := c.listSuite(ctx, s, t, true)
	if err != nil {
		return nil, err
	}
	writeSuiteList(file, list)
	return list, nil
}

// suiteListPath is the file of the kept listing named key.
func (c *site) suiteListPath(key string) string {
	return filepath.Join(c.common, "flakegate", "suitelist", key+".json")
}

// readSuiteList reads a kept listing; false when there is none or it
// cannot be read as one (it is listed again).
func readSuiteList(file string) (*suiteList, bool) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, false
	}
	var f suiteListFile
	if json.Unmarshal(b, &f) != nil || f.PkgTests == nil {
		return nil, false
	}
	list := &suiteList{pkgTests: f.PkgTests, rapid: f.Rapid, python: f.Python, hypothesis: f.Hypothesis,
		unnamed: f.Unnamed, unnamedSome: f.UnnamedSome, skips: f.Skips, skipPlan: f.SkipPlan}
	for kind, k := range f.NotRun {
		if list.notRun == nil {
			list.notRun = notRunSet{}
		}
		list.notRun[kind] = &notRunKind{n: k.N, some: k.Some}
	}
	if list.rapid == nil {
		list.rapid = map[string]bool{}
	}
	for _, t := range f.Tests {
		list.tests = append(list.tests, suiteTest{pkg: t.Pkg, file: t.File, name: t.Name})
	}
	return list, true
}

// writeSuiteList keeps list in file, and removes the listings unused for
// suiteListMaxAge. Best effort: a listing that cannot be kept is made
// again by the next check.
func writeSuiteList(file string, list *suiteList) {
	f := suiteListFile{PkgTests: list.pkgTests, Rapid: list.rapid, Python: list.python, Hypothesis: list.hypothesis,
		Unnamed: list.unnamed, UnnamedSome: list.unnamedSome, Skips: list.skips, SkipPlan: list.skipPlan}
	if f.PkgTests == nil {
		f.PkgTests = map[string][]string{}
	}
	for _, t := range list.tests {
		f.Tests = append(f.Tests, struct{ Pkg, File, Name string }{t.pkg, t.file, t.name})
	}
	for kind, k := range list.notRun {
		if f.NotRun == nil {
			f.NotRun = map[string]struct {
				N    int
				Some []string
			}{}
		}
		f.NotRun[kind] = struct {
			N    int
			Some []string
		}{k.n, k.some}
	}
	b, err := json.Marshal(f)
	if err != nil {
		return
	}
	dir := filepath.Dir(file)
	if os.MkdirAll(dir, 0o700) != nil {
		return
	}
	_ = atomicfile.WriteFile(file, b, 0o600)
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > suiteListMaxAge {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
