// A test's run against the graded tree: the edits of the patch that make
// a failure of its base version CONTAMINATED (GraderEdits, AddGraderKeys,
// GraderReason), and which of the base's tests the patch changes
// (ChangedTests).

package grade

import (
	"context"
	"path"
	"slices"
	"strings"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/config"
)

// GraderEdits are the edits of the patch that make this run of a test
// CONTAMINATED: edits, the test's edits the graded tree took back
// (Property.GraderEdits), when its base version did not pass on the
// patch's code (its first candidate attempt, candidate, failed, or could
// not run: the base's test does not build or collect against the
// patch's code) while the base seed passed (base). A test that fails on
// the base too is PROPERTY as ever; none when no attempt ran (skipped,
// or candidate "").
func GraderEdits(edits []Edit, skipped bool, candidate, base string) []Edit {
	if len(edits) == 0 || skipped || candidate == "" || candidate == attempt.Pass || base != attempt.Pass {
		return nil
	}
	return edits
}

// AddGraderKeys adds to rec what edits (GraderEdits) make it: the edits
// in diff_paths (and, but for the property file, in watch_paths), the
// extra key grader_edits, and, for a base version that could not run on
// the patch's code, candidate_result "fail" (the one value the table
// reads that keeps its row 2; the attempt's own result stays in
// attempts).
func AddGraderKeys(rec *flakegate.RunRecord, edits []Edit) {
	if len(edits) == 0 {
		return
	}
	diff := append([]string(nil), rec.DiffPaths...)
	watch := append([]string(nil), rec.WatchPaths...)
	for _, e := range edits {
		rec.GraderEdits = append(rec.GraderEdits, e.Path)
		if !slices.Contains(diff, e.Path) {
			diff = append(diff, e.Path)
		}
		if e.Path != rec.PropertyPath && !slices.Contains(watch, e.Path) {
			watch = append(watch, e.Path)
		}
	}
	rec.DiffPaths, rec.WatchPaths = diff, watch
	rec.CandidateResult = attempt.Fail
}

// GraderReason is the reason of a triple of p that AddGraderKeys made
// CONTAMINATED: which edits (GraderEdits), and what the test's base
// version did on the patch's code (candidate, its first candidate
// attempt's result). testChanged says the patch changes the test itself
// (ChangedTests).
func GraderReason(p *config.Property, edits []Edit, candidate string, testChanged bool) string {
	test := p.Path
	if p.Name != "" {
		test += "::" + p.Name
	}
	var what []string
	own := false
	for _, e := range edits {
		switch {
		case e.Path == p.Path && p.Name != "" && testChanged:
			what = append(what, test)
			own = true
		case e.Path == p.Path:
			what = append(what, e.Path)
		default:
			what = append(what, describeEdit(e))
		}
	}
	subject := "the base's version of " + test
	if own && len(what) == 1 {
		subject = "its base version"
	}
	did := "fails on the patch's code"
	if candidate != attempt.Fail {
		did = "cannot run on the patch's code (it does not build, or is not collected: the patch changes what it uses)"
	}
	return "the patch changes " + strings.Join(what, ", ") + ", and " + subject + " " + did + ": split that edit into another review"
}

// describeEdit names an edit of the patch for a reason: its path, and
// what it is where the name does not say it.
func describeEdit(e Edit) string {
	switch e.Kind {
	case Conftest, PytestIni, GoWork:
		return e.Path
	case GoMod:
		return e.Path + "'s go, toolchain or godebug lines"
	}
	return e.Path + " (" + string(e.Kind) + ")"
}

// ChangedKey names a test in what ChangedTests returns: a go test by
// its package folder and name (it may move between the package's files),
// another by its file and name.
func ChangedKey(framework, file, name string) string {
	if framework == config.FrameworkGo {
		return path.Dir(file) + "/\x00" + name
	}
	return file + "\x00" + name
}

// Test is one test of a check: a property's, or one a suite lists.
type Test struct {
	Framework, File, Name string
}

// ChangedTests finds, in every test file the patch edits (and the
// graded tree takes back), which of tests the patch changes (ChangedGo
// over the package's test files, ChangedPy, ChangedJS), by ChangedKey:
// such a test's candidate version is a new test, and a failure of its
// base version names it.
func (g *Grader) ChangedTests(ctx context.Context, tests []Test) (map[string]bool, error) {
	out := map[string]bool{}
	if g.Graded == nil {
		return out, nil
	}
	edited := map[string]bool{} // files, and go package folders
	for _, e := range g.Graded.Taken {
		if e.Kind == TestFile {
			edited[e.Path] = true
			if strings.HasSuffix(e.Path, "_test.go") {
				edited[path.Dir(e.Path)+"/"] = true
			}
		}
	}
	if len(edited) == 0 {
		return out, nil
	}
	groups := map[string]*testGroup{} // by file (go: by package folder)
	for _, t := range tests {
		key := t.File
		if t.Framework == config.FrameworkGo {
			key = path.Dir(t.File) + "/"
		}
		if !edited[key] || t.Name == "" {
			continue
		}
		if groups[key] == nil {
			groups[key] = &testGroup{framework: t.Framework}
		}
		groups[key].names = append(groups[key].names, t.Name)
	}
	for key, tg := range groups {
		changed, err := g.changedIn(ctx, key, tg)
		if err != nil {
			return nil, err
		}
		for name, ch := range changed {
			if ch {
				file := key
				if tg.framework == config.FrameworkGo {
					file = key + "x_test.go"
				}
				out[ChangedKey(tg.framework, file, name)] = true
			}
		}
	}
	return out, nil
}

// testGroup is the tests of one edited file (go: one package folder).
type testGroup struct {
	framework string
	names     []string
}

// changedIn says which tests of tg, in the file or go package folder
// key, the patch changes.
func (g *Grader) changedIn(ctx context.Context, key string, tg *testGroup) (map[string]bool, error) {
	files := []string{key}
	if tg.framework == config.FrameworkGo {
		files = nil
		for _, side := range []string{g.BaseSHA, g.CandSHA} {
			all, err := g.Git.ListFiles(ctx, side)
			if err != nil {
				return nil, err
			}
			for _, f := range all {
				if path.Dir(f)+"/" == key && strings.HasSuffix(f, "_test.go") && !slices.Contains(files, f) {
					files = append(files, f)
				}
			}
		}
	}
	base, err := g.Git.ShowFiles(ctx, g.BaseSHA, files)
	if err != nil {
		return nil, err
	}
	cand, err := g.Git.ShowFiles(ctx, g.CandSHA, files)
	if err != nil {
		return nil, err
	}
	switch tg.framework {
	case config.FrameworkGo:
		return ChangedGo(base, cand, tg.names), nil
	case config.FrameworkPytest:
		return ChangedPy(base[key], cand[key], tg.names), nil
	case config.FrameworkVitest, config.FrameworkJest:
		return ChangedJS(base[key], cand[key], tg.names), nil
	}
	return nil, nil
}
