// The graded tree: the candidate's code with the base's version of what
// decides what its tests check and how they run (package grade has the
// rules by framework). The candidate's trees check it out; the record's
// diff_paths are where it differs from the base, so the table sees what
// ran. A test whose base version fails where the patch changed its file
// or its data (an edit the graded tree took back) is CONTAMINATED: its
// record names those edits too (record.go, graderKeys).

package check

import (
	"context"
	"path"
	"slices"
	"strings"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/grade"
)

// jestKeyWhy is why grade/infra watches package.json for a jest test
// (its "jest" key is the config).
const jestKeyWhy = "the jest config (package.json's \"jest\")"

// lockWhy is why a vitest or jest test watches the lock files a
// prepare installs node_modules from (grade.TestToolingChanged).
const lockWhy = "the test tooling's locked packages"

// watchedChange reports whether d, a path of the diff that glob g
// watches, counts as a change of what grades the test: always, but for
// a file of pytest's config shared with other tools (pyproject.toml,
// setup.cfg, tox.ini), which counts only when pytest's part of it
// changes, package.json watched for its "jest" key, which counts only
// when that key changes, and a lock file, which counts only when it
// changes the test tooling's packages (each counts when it cannot be
// read).
func (c *checker) watchedChange(ctx context.Context, d string, g watchGlob) bool {
	mixed := g.Why == "pytest configuration" && grade.MixedPytestFile(d)
	if !mixed && g.Why != jestKeyWhy && g.Why != lockWhy {
		return true
	}
	key := g.Why + "\x00" + d
	if got, ok := c.partChanged[key]; ok {
		return got // the preflight asks once per test of a suite
	}
	base, errB := c.git.Show(ctx, c.baseSHA, d)
	cand, errC := c.git.Show(ctx, c.suite.graded, d)
	changed := true // added or deleted
	switch {
	case errB != nil || errC != nil:
	case mixed:
		changed = grade.PytestPartChanged(d, base, cand)
	case g.Why == lockWhy:
		changed = grade.TestToolingChanged(d, base, cand)
	default:
		changed = grade.JestKeyChanged(base, cand)
	}
	if c.partChanged == nil {
		c.partChanged = map[string]bool{}
	}
	c.partChanged[key] = changed
	return changed
}

// graderEdits are the edits of the patch that make this run of its
// test CONTAMINATED: its test's graderEdits, when its base version did
// not pass on the patch's code (its first candidate attempt failed, or
// could not run: the base's test does not build or collect against the
// patch's code) while the base seed passed. A test that fails on the
// base too is PROPERTY as ever; none when no attempt ran.
func (r *tripleRun) graderEdits() []grade.Edit {
	t := &r.t
	if len(r.j.ps.graderEdits) == 0 || t.skippedWhy != "" || t.Candidate == "" || t.Candidate == attempt.Pass || t.Base != attempt.Pass {
		return nil
	}
	return r.j.ps.graderEdits
}

// graderKeys adds to the record what graderEdits makes it: the edits in
// diff_paths (and, but for the property file, in watch_paths), the
// extra key grader_edits, and, for a base version that could not run on
// the patch's code, candidate_result "fail" (the one value the table
// reads that keeps its row 2; the attempt's own result stays in
// attempts).
func (r *tripleRun) graderKeys(rec *flakegate.RunRecord) {
	edits := r.graderEdits()
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

// graderReason is the reason of a triple graderKeys made CONTAMINATED:
// which edits, and what the test's base version did on the patch's code.
func (r *tripleRun) graderReason() string {
	p := r.j.ps.prop
	test := p.Path
	if p.Name != "" {
		test += "::" + p.Name
	}
	var what []string
	own := false
	for _, e := range r.graderEdits() {
		switch {
		case e.Path == p.Path && p.Name != "" && r.c.testChanged(p):
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
	if r.t.Candidate != attempt.Fail {
		did = "cannot run on the patch's code (it does not build, or is not collected: the patch changes what it uses)"
	}
	return "the patch changes " + strings.Join(what, ", ") + ", and " + subject + " " + did + ": split that edit into another review"
}

// describeEdit names an edit of the patch for a reason: its path, and
// what it is where the name does not say it.
func describeEdit(e grade.Edit) string {
	switch e.Kind {
	case grade.Conftest, grade.PytestIni, grade.GoWork:
		return e.Path
	case grade.GoMod:
		return e.Path + "'s go, toolchain or godebug lines"
	}
	return e.Path + " (" + string(e.Kind) + ")"
}

// changedKey names a test in suiteState.changed: a go test by its
// package folder and name (it may move between the package's files),
// another by its file and name.
func changedKey(framework, file, name string) string {
	if framework == config.FrameworkGo {
		return path.Dir(file) + "/\x00" + name
	}
	return file + "\x00" + name
}

// testChanged reports whether the patch changes the test of p (its own
// source or what it reaches: noteChangedTests).
func (c *checker) testChanged(p *config.Property) bool {
	return c.suite.changed[changedKey(p.Framework, p.Path, p.Name)]
}

// noteChangedTests finds, in every test file the patch edits (and the
// graded tree takes back), which of the base's tests the patch changes
// (package grade: ChangedGo over the package's test files, ChangedPy,
// ChangedJS): such a test's candidate version is a new test
// (runNewTests), and a failure of its base version names it.
func (c *checker) noteChangedTests(ctx context.Context) error {
	c.suite.changed = map[string]bool{}
	if c.graded == nil {
		return nil
	}
	edited := map[string]bool{} // files, and go package folders
	for _, e := range c.graded.Taken {
		if e.Kind == grade.TestFile {
			edited[e.Path] = true
			if strings.HasSuffix(e.Path, "_test.go") {
				edited[path.Dir(e.Path)+"/"] = true
			}
		}
	}
	if len(edited) == 0 {
		return nil
	}
	type group struct {
		framework string
		files     map[string]bool
		names     []string
	}
	groups := map[string]*group{} // by file (go: by package folder)
	add := func(fw, file, name string) {
		key := file
		if fw == config.FrameworkGo {
			key = path.Dir(file) + "/"
		}
		if !edited[key] || name == "" {
			return
		}
		if groups[key] == nil {
			groups[key] = &group{framework: fw, files: map[string]bool{}}
		}
		groups[key].names = append(groups[key].names, name)
	}
	for i := range c.cfg.Properties {
		if p := &c.cfg.Properties[i]; p.Suite == nil {
			add(p.Framework, p.Path, p.Name)
		}
	}
	for i, list := range c.suite.lists {
		for _, t := range list.Tests {
			add(c.cfg.Suites[i].Framework, t.File, t.Name)
		}
	}
	for key, g := range groups {
		files := []string{key}
		if g.framework == config.FrameworkGo {
			files = nil
			for _, side := range []string{c.baseSHA, c.candSHA} {
				all, err := c.git.ListFiles(ctx, side)
				if err != nil {
					return err
				}
				for _, f := range all {
					if path.Dir(f)+"/" == key && strings.HasSuffix(f, "_test.go") && !slices.Contains(files, f) {
						files = append(files, f)
					}
				}
			}
		}
		base, err := c.git.ShowFiles(ctx, c.baseSHA, files)
		if err != nil {
			return err
		}
		cand, err := c.git.ShowFiles(ctx, c.candSHA, files)
		if err != nil {
			return err
		}
		var changed map[string]bool
		switch g.framework {
		case config.FrameworkGo:
			changed = grade.ChangedGo(base, cand, g.names)
		case config.FrameworkPytest:
			changed = grade.ChangedPy(base[key], cand[key], g.names)
		case config.FrameworkVitest, config.FrameworkJest:
			changed = grade.ChangedJS(base[key], cand[key], g.names)
		default:
			continue
		}
		for name, ch := range changed {
			if ch {
				file := key
				if g.framework == config.FrameworkGo {
					file = key + "x_test.go"
				}
				c.suite.changed[changedKey(g.framework, file, name)] = true
			}
		}
	}
	return nil
}
