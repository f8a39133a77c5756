package grade

import (
	"path"
	"sort"

	"github.com/flakegate/flakegate/config"
)

// Edit is one edit of the patch that the graded tree took back: a file
// of the base's world that the patch changes or deletes.
type Edit struct {
	Path string
	Kind Kind
}

// TakenBack lists the patch's edits the graded tree takes back: the
// paths of diff (the patch's) that exist in the base and that the graded
// tree takes from it, and the go.mod files whose go, toolchain or
// godebug lines it puts back. A file the patch adds is none: the base's
// tests never saw it.
func (p *Plan) TakenBack(diff []string, inBase func(string) bool) []Edit {
	var out []Edit
	for _, d := range diff {
		if _, ok := p.goModEdits[d]; ok {
			out = append(out, Edit{d, GoMod})
			continue
		}
		if e, ok := p.base[d]; ok && inBase(d) {
			out = append(out, Edit{d, e.Kind})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// EditsFor lists the edits of taken (TakenBack's) that grade the test in
// file run by framework: its own file, and what its world holds for it
// (docs/suites.md): for go, the other test files, testdata and data of
// its package, go.work and go.mod's lines; for pytest, the conftest.py
// and ini files from the root down to its folder and the files of the
// test folder it is in; for vitest and jest, its folder's snapshots, the
// mocks, the config and setup files, and the files of its test folder.
func (p *Plan) EditsFor(framework, file string, taken []Edit) []Edit {
	var out []Edit
	dir := path.Dir(file)
	for _, e := range taken {
		if e.Path == file || p.grades(framework, file, dir, e) {
			out = append(out, e)
		}
	}
	return out
}

// grades reports whether the taken-back edit e grades the test in file
// (in folder dir) run by framework.
func (p *Plan) grades(framework, file, dir string, e Edit) bool {
	if e.Kind == GoMod {
		return framework == config.FrameworkGo && under(dir, p.goModEdits[e.Path])
	}
	en := p.base[e.Path]
	family := map[string]string{config.FrameworkGo: "go", config.FrameworkPytest: "py", config.FrameworkVitest: "js", config.FrameworkJest: "js"}[framework]
	if en.Family != family || family == "" {
		return false
	}
	switch en.Kind {
	case TestFile:
		// Another test file of the same Go package compiles into the
		// test's binary; a pytest or js test file grades its own tests.
		return family == "go" && en.Dir == dir
	case GoTestdata, GoData, Snapshot:
		return en.Dir == dir
	case GoWork, Conftest, PytestIni, TestFolder, JSConfig:
		return under(dir, en.Dir)
	case Mock, JSSetup:
		return true
	}
	return false
}
