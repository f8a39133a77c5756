package check

import (
	"strings"
	"testing"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/batch"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/suites"
)

// TestShapeOf: which run templates batch, and the command of a batch.
func TestShapeOf(t *testing.T) {
	type testCase struct {
		name    string
		run     []string
		prop    string // the property's name
		noBatch bool
		want    string // the batch argv of the member and a twin, "" when it runs alone
	}
	goRun := []string{"go", "test", "-count=1", "-run", "^{name}$", "./p", "-rapid.seed={seed}"}
	run := func(t *testing.T, tc testCase) {
		mk := func(name string) *job {
			p := &config.Property{Path: "p/p_test.go", Name: name, Run: tc.run, Batch: !tc.noBatch, Framework: config.FrameworkOfArgv(tc.run)}
			return &job{ps: &propState{prop: p, framework: batch.EvidenceFramework(p)}, seed: flakegate.Seed("7")}
		}
		a, b := shapeOf(mk(tc.prop)), shapeOf(mk(tc.prop+"2"))
		if tc.want == "" {
			if a != nil {
				t.Fatalf("batches as %+v; want alone", a)
			}
			return
		}
		if a == nil || b == nil || a.Key != b.Key {
			t.Fatalf("shapes %+v and %+v; want one key", a, b)
		}
		// pytest runs through flakegate's bootstrap (suites/pybootstrap.go), its
		// PYTHONPATH handed to it.
		if got, want := strings.Join(batch.Argv(a, []*batch.Shape{a, b}), " "), strings.ReplaceAll(tc.want, "@BOOT@", suites.PyBootstrap); got != want {
			t.Errorf("batch argv\n%s\nwant\n%s", got, want)
		}
		if batchTemplateKey(mk(tc.prop).ps) == "" {
			t.Errorf("no template key")
		}
	}
	for _, tc := range []testCase{
		{name: "go, as init writes it", run: goRun, prop: "TestA",
			want: "go test -json -count=1 -timeout=0 -run ^(TestA|TestA2)$ ./p -rapid.seed=7"},
		{name: "go -run=, -v and -failfast dropped", run: []string{"go", "test", "-v", "-failfast", "-run=^{name}$", "-timeout=1m", "./p"}, prop: "TestA",
			want: "go test -json -timeout=1m -count=1 -run ^(TestA|TestA2)$ ./p"},
		{name: "go flag with a separate value", run: []string{"go", "test", "-tags", "x", "-run", "^{name}$", "./p"}, prop: "TestA"},
		{name: "go unanchored -run", run: []string{"go", "test", "-run", "{name}", "./p"}, prop: "TestA"},
		{name: "go ./...", run: []string{"go", "test", "-run", "^{name}$", "./..."}, prop: "TestA"},
		{name: "go two packages", run: []string{"go", "test", "-run", "^{name}$", "./p", "./q"}, prop: "TestA"},
		{name: "go {name} twice", run: []string{"go", "test", "-run", "^{name}$", "./p", "-x={name}"}, prop: "TestA"},
		{name: "go subtest", run: goRun, prop: "TestA/sub"},
		{name: "batch: false", run: goRun, prop: "TestA", noBatch: true},
		{name: "pytest", run: []string{"python3", "-m", "pytest", "-q", "{path}::{name}", "--hypothesis-seed={seed}"}, prop: "test_a",
			want: "python3 -c @BOOT@  run -q p/p_test.go::test_a p/p_test.go::test_a2 --hypothesis-seed=7 -rA -v -v -o junit_family=xunit1"},
		// A wrapper (init writes env PYTHONPATH=src for a src/ layout):
		// -rA goes in through PYTEST_ADDOPTS, as for a triple alone.
		// Without it the short summary named no node, and every member
		// of the batch was INCOMPLETE.
		{name: "pytest after env", run: []string{"env", "PYTHONPATH=src", "python3", "-m", "pytest", "-q", "{path}::{name}", "--hypothesis-seed={seed}"}, prop: "test_a",
			want: `sh -c PYTEST_ADDOPTS="${PYTEST_ADDOPTS:+$PYTEST_ADDOPTS }-rA" exec "$@" flakegate-evidence env python3 -c @BOOT@ src run -q p/p_test.go::test_a p/p_test.go::test_a2 --hypothesis-seed=7 -v -v -o junit_family=xunit1`},
		{name: "pytest, a file only", run: []string{"pytest", "{path}", "-k", "{name}"}, prop: "test_a"},
		{name: "a shell", run: []string{"sh", "-c", "pytest {path}::{name}"}, prop: "test_a"},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}
