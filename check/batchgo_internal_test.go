package check

import (
	"testing"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/batch"
	"github.com/flakegate/flakegate/config"
)

// TestGoBatchKeepsTheTemplatesGo: a go batch runs the go its members'
// run template names. A template may name its toolchain by path
// ([/opt/go1.21/bin/go, test, ...]): alone, a triple runs that go. The
// batch's command must too, and a template of another go must not share
// its batch.
//
// Found while writing run_internal_test.go (issue 45, 7.1): goShape
// took any argv[0] whose base is "go" but kept none of it, and the
// batch ran "go": the go on PATH, and templates of two toolchains
// batched together.
func TestGoBatchKeepsTheTemplatesGo(t *testing.T) {
	mk := func(goBin, name string) *job {
		run := []string{goBin, "test", "-count=1", "-run", "^{name}$", "./p"}
		p := &config.Property{Path: "p/p_test.go", Name: name, Run: run, Batch: true, Framework: config.FrameworkOfArgv(run)}
		return &job{ps: &propState{prop: p, framework: batch.EvidenceFramework(p)}, seed: flakegate.Seed("7")}
	}
	a, b := shapeOf(mk("/opt/go1.21/bin/go", "TestA")), shapeOf(mk("/opt/go1.21/bin/go", "TestB"))
	if a == nil || b == nil {
		t.Fatalf("the templates do not batch: %+v %+v", a, b)
	}
	if argv := batch.Argv(a, []*batch.Shape{a, b}); argv[0] != "/opt/go1.21/bin/go" {
		t.Errorf("the batch runs %q, the template names /opt/go1.21/bin/go: %q", argv[0], argv)
	}
	if c := shapeOf(mk("go", "TestC")); c != nil && c.Key == a.Key {
		t.Errorf("a template of the go on PATH batches with one of /opt/go1.21/bin/go (key %s)", c.Key)
	}
}
