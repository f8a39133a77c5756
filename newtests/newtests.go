// Package newtests runs the tests a candidate adds to a suite (absent
// from the base's list, so no base can replay them and they are no
// triples), and those whose source it changes (grade.ChangedTests:
// their base version still runs as triples on the graded tree). Each
// runs new_test_runs times on the candidate's own tree (the graded tree
// of the triples leaves the patch's new test files out): run k is one
// process per Go package (one per pytest, vitest or jest suite) holding
// every new test of it, in the order of order seed k (go -shuffle=k;
// pytest's node ids sorted as suites.Rank does; vitest
// --sequence.shuffle --sequence.seed=k, jest --randomize --seed=k). A
// run's result comes from the framework's report, as for a batch
// (evidence/gojson.go, evidence/junit.go, evidence/jsreport.go).
//
// It sits apart from package suites because its runs are batches
// (package batch imports suites), and it never imports check: check
// gives it a Runner, its suites' Env and its own steps as data and
// functions.
//
//	newtests.go  Runner: each suite listed on the candidate's tree, its new
//	             tests run new_test_runs times, each run counted, the note
//	process.go   one run's process: each test's batch shape, the command
//	             with its known answers, each test judged from the report
package newtests

import (
	"context"
	"fmt"
	"sort"
	"strconv"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/batch"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/evidence"
	"github.com/flakegate/flakegate/site"
	"github.com/flakegate/flakegate/suites"
)

// Runner is what running a check's new tests needs of the check.
type Runner struct {
	// Env is the check's suites over its site: the config
	// (new_test_runs), the listings, the sandbox over the top-level
	// prepare, the reset after a command, and Say, where each new
	// test's line goes.
	Env *suites.Env
	// Lists are the base's lists, by suite index.
	Lists map[int]*suites.List
	// Changed says the patch changes a test of the base's list (its
	// base version runs as triples; this one on the candidate's tree).
	Changed func(s *config.Suite, t suites.Test) bool
	// Draws are the check's go known answers, one draw per tree and
	// package; TreeKey is a tree's key among them (batch.KnownPlan).
	Draws   *batch.KnownDraws
	TreeKey func(t *site.Tree) string
	// Build points a go command at its tree's build step
	// (gocache.Builds.Use).
	Build func(ctx context.Context, cmd *attempt.Command, tree, module string)
}

// Run lists every suite on the candidate's own tree t and runs the tests
// the base does not list (or the patch changes) new_test_runs times,
// saying each one's line as its suite ends.
func (r *Runner) Run(ctx context.Context, t *site.Tree) ([]flakegate.NewTest, error) {
	var all []flakegate.NewTest
	for i := range r.Env.Cfg.Suites {
		s := &r.Env.Cfg.Suites[i]
		list, err := r.Env.List(ctx, s, t, false)
		if err != nil {
			return all, err
		}
		fresh := suites.Fresh(s, r.Lists[i], list, func(ft suites.Test) bool { return r.Changed(s, ft) })
		if len(fresh) == 0 {
			continue
		}
		got, err := r.Suite(ctx, s, list, t, fresh)
		if err != nil {
			return all, err
		}
		for _, nt := range got {
			r.Env.Say(Line(nt))
		}
		all = append(all, got...)
	}
	return all, nil
}

// Line is the progress line of a new test's runs.
func Line(nt flakegate.NewTest) string {
	return fmt.Sprintf("new test %s::%s: %d of %d passed%s", nt.Path, nt.Name, nt.Passed, nt.Runs, reasonSuffix(nt.Reason))
}

func reasonSuffix(r string) string {
	if r == "" {
		return ""
	}
	return " (" + r + ")"
}

// Suite runs the new tests fresh of suite s (list is its list on t)
// new_test_runs times on t.
func (r *Runner) Suite(ctx context.Context, s *config.Suite, list *suites.List, t *site.Tree, fresh []suites.Test) ([]flakegate.NewTest, error) {
	runs := r.Env.Cfg.NewTestRuns
	out := make([]flakegate.NewTest, len(fresh))
	for k, ft := range fresh {
		out[k] = flakegate.NewTest{Suite: s.Path, Path: ft.File, Name: ft.Name, Runs: runs}
	}
	keys, groups := group(fresh)
	for run := 1; run <= runs; run++ {
		seed := flakegate.Seed(strconv.Itoa(run))
		for _, key := range keys {
			idx := order(s, fresh, groups[key], seed)
			shapes := make([]*batch.Shape, len(idx))
			for n, k := range idx {
				shapes[n] = Shape(s, list, fresh[k], seed)
			}
			reports, err := r.process(ctx, s, t, shapes, seed)
			if err != nil {
				return nil, err
			}
			for n, k := range idx {
				count(&out[k], run, reports[n])
			}
		}
	}
	return out, nil
}

// group puts the new tests (by index) in their processes: go's by
// package, the others' one group; keys are the groups in the order of
// their first test.
func group(fresh []suites.Test) (keys []string, groups map[string][]int) {
	groups = map[string][]int{}
	for k, ft := range fresh {
		if _, ok := groups[ft.Pkg]; !ok {
			keys = append(keys, ft.Pkg)
		}
		groups[ft.Pkg] = append(groups[ft.Pkg], k)
	}
	return keys, groups
}

// order is the order of one process's tests with seed: pytest's sorted
// as suites.Rank does, the others' as listed (the framework shuffles).
func order(s *config.Suite, fresh []suites.Test, group []int, seed flakegate.Seed) []int {
	idx := append([]int(nil), group...)
	if s.Framework == config.FrameworkPytest {
		sort.SliceStable(idx, func(a, b int) bool {
			return suites.Rank(seed, memberOf(fresh[idx[a]])) < suites.Rank(seed, memberOf(fresh[idx[b]]))
		})
	}
	return idx
}

// memberOf is a suite test's "file::name".
func memberOf(t suites.Test) string { return t.File + "::" + t.Name }

// count adds run's report tr to nt: a pass counts, and the first run
// that was neither a pass nor a fail gives the reason.
func count(nt *flakegate.NewTest, run int, tr evidence.TestReport) {
	nt.Results = append(nt.Results, tr.Result)
	if tr.Result == attempt.Pass {
		nt.Passed++
	} else if tr.Result != attempt.Fail && nt.Reason == "" && tr.Reason != "" {
		nt.Reason = fmt.Sprintf("run %d: %s", run, tr.Reason)
	}
}
