package cli

import (
	"strings"
	"testing"

	"github.com/flakegate/flakegate"
)

// TestTrialCause: each cause of a failed trial is one line that says why
// and what to do.
func TestTrialCause(t *testing.T) {
	type testCase struct {
		name string
		res  flakegate.Result
		want []string
	}
	run := func(t *testing.T, tc testCase) {
		got := trialCause(tc.res)
		if strings.Contains(got, "\n") {
			t.Errorf("more than one line: %q", got)
		}
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%q lacks %q", got, w)
			}
		}
	}
	att := func(tail string) []flakegate.Attempt {
		return []flakegate.Attempt{{Side: "candidate", Result: "error", ExitCode: 1, OutputTail: tail}}
	}
	for _, tc := range []testCase{
		{"a module missing", flakegate.Result{PropertyPath: "tests/t.py", Name: "test_a", Label: flakegate.Incomplete, Reason: "the test never ran",
			Attempts: att("E   ModuleNotFoundError: No module named 'attr'\n")},
			[]string{"tests/t.py::test_a: the test cannot import attr", "fix: install it", "python3-attr"}},
		{"no pytest", flakegate.Result{PropertyPath: "t.py", Label: flakegate.Incomplete, Attempts: att("/x/python3: No module named pytest\n")},
			[]string{"cannot import pytest", "fix: "}},
		{"a prepare", flakegate.Result{PropertyPath: "t.py", Label: flakegate.Incomplete, Reason: "candidate prepare failed: exit 1: error: externally-managed-environment"},
			[]string{"prepare failed: exit 1", "fix: run the prepare's command by hand"}},
		{"a cold module cache", flakegate.Result{PropertyPath: "a_test.go", Name: "TestA", Label: flakegate.Incomplete, Reason: "the test never ran",
			Attempts: att("go: pgregory.net/rapid@v1.3.0: module lookup disabled by GOPROXY=off\n")},
			[]string{"the module cache lacks pgregory.net/rapid@v1.3.0", "fix: the \"Go modules:\" line above", "run go mod download in the module"}},
		{"a cold module cache, read-only", flakegate.Result{PropertyPath: "a_test.go", Name: "TestA", Label: flakegate.Incomplete, Reason: "the test never ran",
			Attempts: att("go: downloading pgregory.net/rapid v1.3.0\na_test.go:6:2: mkdir /sandbox/gomod/cache: read-only file system\n")},
			[]string{"the module cache lacks pgregory.net/rapid@v1.3.0"}},
		{"go.sum incomplete", flakegate.Result{PropertyPath: "a_test.go", Name: "TestA", Label: flakegate.Incomplete, Reason: "the test never ran",
			Attempts: att("a_test.go:6:2: missing go.sum entry for module providing package pgregory.net/rapid\n")},
			[]string{"go.sum lacks a module", "fix: run go mod tidy"}},
		{"fails at HEAD", flakegate.Result{PropertyPath: "a_test.go", Name: "TestA", Seed: "1", Label: flakegate.Property, Reason: "candidate failed 1 of 1 attempts"},
			[]string{"fails with seed 1 at HEAD", "fix: make it pass at HEAD"}},
		{"over its budget", flakegate.Result{PropertyPath: "a.py", Label: flakegate.Budget, Reason: "wall budget 5m exceeded"},
			[]string{"wall budget 5m exceeded", "fix: raise its wall_budget"}},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}
