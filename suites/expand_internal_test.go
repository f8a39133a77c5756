package suites

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/site"
)

// expandEnv is an Env over a base tree that cannot be listed (its
// folder does not exist, and nothing may run there), with go on the
// attempts' PATH so that a go suite's listing is kept under common.
func expandEnv(t *testing.T, cfg *config.Config, said *[]string) *Env {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go on PATH")
	}
	dir := t.TempDir()
	return &Env{Cfg: cfg, CfgPath: "flakegate.yaml", Common: filepath.Join(dir, "common"), BaseSHA: "b1",
		Iso:   &site.Isolation{Mode: site.IsolationNone, Env: []string{"PATH=" + filepath.Dir(goBin)}},
		Trees: &site.Worktrees{Workers: []*site.WorkerTrees{{Base: &site.Tree{Dir: filepath.Join(dir, "absent"), Side: "base"}}}},
		Say:   func(line string) { *said = append(*said, line) },
		Layer: func(context.Context, *site.Tree) (string, string, error) {
			t.Fatal("a command ran")
			return "", "", nil
		},
		Reset: func(context.Context, *site.Tree) error { t.Fatal("a command ran"); return nil },
		CheckFile: func(root, key, rel, what string) error {
			t.Fatalf("CheckFile(%s, %s) with no fixture", key, rel)
			return nil
		}}
}

// TestExpandFromKeptList: a go suite whose base listing is kept is read
// from it, not listed again (nothing runs in the base tree), and its
// tests become properties after the config's own: one the config's
// property names is gated once, as the property; an excluded one and
// one the base skips are not gated, and the skip is said.
func TestExpandFromKeptList(t *testing.T) {
	var said []string
	cfg := &config.Config{Properties: []config.Property{{Path: "p/a_test.go", Name: "TestA"}},
		Suites: []config.Suite{{Path: "./...", Framework: config.FrameworkGo, Exclude: []string{"TestSlow*"}, RandomSeeds: 2}}}
	e := expandEnv(t, cfg, &said)
	key := e.listKey(&cfg.Suites[0])
	if key == "" {
		t.Fatal("a go suite with go on the attempts' PATH has no list key")
	}
	kept := &List{Tests: []Test{{Pkg: "./p", File: "p/a_test.go", Name: "TestA"}, {Pkg: "./p", File: "p/a_test.go", Name: "TestB"},
		{Pkg: "./p", File: "p/a_test.go", Name: "TestSlowC"}, {Pkg: "./p", File: "p/a_test.go", Name: "TestD"}},
		PkgTests: map[string][]string{"./p": {"TestA", "TestB", "TestSlowC", "TestD"}}, Skips: map[string]string{"p/a_test.go::TestD": "skipped"}}
	WriteList(ListPath(e.Common, key), kept)
	lists := map[int]*List{}
	impacts, err := e.Expand(context.Background(), lists)
	if err != nil || impacts != nil {
		t.Fatalf("Expand: %v, %v", impacts, err)
	}
	if lists[0] == nil || len(lists[0].Tests) != 4 {
		t.Fatalf("lists: %+v", lists)
	}
	var got []string
	for _, p := range cfg.Properties {
		got = append(got, p.Name)
	}
	if !reflect.DeepEqual(got, []string{"TestA", "TestB"}) {
		t.Fatalf("properties %v, want the config's TestA and the suite's TestB", got)
	}
	b := cfg.Properties[1]
	if b.Suite != &cfg.Suites[0] || b.Index != 1 || b.RandomSeeds != 2 || !b.Batch || b.Fixture != "" {
		t.Errorf("TestB's property: %+v", b)
	}
	if len(said) != 1 || said[0] == "" {
		t.Errorf("said %q, want the skip's one line", said)
	}
}

// TestExpandListingFails: a suite that cannot be listed (and is not
// kept) fails the expansion with the listing's error, and adds nothing.
func TestExpandListingFails(t *testing.T) {
	var said []string
	cfg := &config.Config{Suites: []config.Suite{{Path: "./...", Framework: config.FrameworkGo}}}
	e := expandEnv(t, cfg, &said)
	e.Iso.Mode = site.IsolationBwrap // the sandbox's layer is asked first, and fails
	e.Layer = func(context.Context, *site.Tree) (string, string, error) { return "", "exit 1: no npm", nil }
	base := e.Trees.Workers[0].Base.Dir
	if err := os.MkdirAll(base, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(base, "go.mod"), []byte("module example.com/m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := e.Expand(context.Background(), map[int]*List{})
	var fe *flakegate.Error
	if !errors.As(err, &fe) || fe.Code != flakegate.EINVALID || fe.Path != "flakegate.yaml" ||
		fe.Message != "suites[0] (go ./...): its commands run over the top-level prepare, which failed on the base tree: exit 1: no npm" ||
		fe.Hint != "run the listing yourself in the base tree (flakegate doctor shows each suite's count), or fix the suite in flakegate.yaml" {
		t.Fatalf("err %#v", err)
	}
	if len(cfg.Properties) != 0 {
		t.Errorf("properties added: %+v", cfg.Properties)
	}
}

// TestDecideUndecided: when impact cannot decide (a split check, a
// framework it has no rule for), every test runs, the check says why,
// and the summary keeps the why; a plan (no graded candidate) or a
// config without impact decides nothing and says nothing.
func TestDecideUndecided(t *testing.T) {
	list := &List{Tests: []Test{{File: "t.py", Name: "test_a"}}}
	for _, c := range []struct {
		impact         bool
		graded, no, fw string
		why            string
	}{
		{true, "g", "a check split across runners", config.FrameworkGo, "a check split across runners"},
		{true, "g", "", "cargo", "impact does not decide a cargo suite"},
		{true, "", "", config.FrameworkGo, ""},
		{false, "g", "", config.FrameworkGo, ""},
	} {
		var said []string
		e := &Env{Cfg: &config.Config{Impact: c.impact}, Graded: c.graded, NoImpact: c.no, Say: func(l string) { said = append(said, l) }}
		var impacts []flakegate.SuiteImpact
		si, err := e.decide(context.Background(), 3, &config.Suite{Framework: c.fw, Path: "tests"}, list, &impacts)
		if si != nil || err != nil {
			t.Fatalf("%+v: %v, %v", c, si, err)
		}
		if c.why == "" {
			if len(said) != 0 || len(impacts) != 0 {
				t.Errorf("%+v: said %q, impacts %+v", c, said, impacts)
			}
			continue
		}
		want := flakegate.SuiteImpact{Suite: 3, Framework: c.fw, Path: "tests", Undecided: c.why}
		if !reflect.DeepEqual(said, []string{"suites[3]: impact: every test runs: " + c.why}) || !reflect.DeepEqual(impacts, []flakegate.SuiteImpact{want}) {
			t.Errorf("%+v: said %q, impacts %+v", c, said, impacts)
		}
	}
}
