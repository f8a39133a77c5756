package replay

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/evidence"
	"github.com/flakegate/flakegate/suites"
)

// TestNewRefusesAFixtureItCannotPin: a missing fixture, or one whose
// digest is not the one expected, makes the replay Incomplete before any
// sandbox is built (no bwrap is needed to say so).
func TestNewRefusesAFixtureItCannotPin(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "fx.txt"), []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ fixture, sum, want string }{
		{"absent.txt", "", "fixture absent.txt not found in " + dir},
		{"fx.txt", "0000", "fixture fx.txt has digest "},
	} {
		_, err := New(t.Context(), Options{Dir: dir, Argv: []string{"true"}, Fixture: tc.fixture, FixtureSHA256: tc.sum, Bwrap: "/nonexistent/bwrap"})
		var inc *Incomplete
		if !errors.As(err, &inc) {
			t.Fatalf("%s: err %v, want an *Incomplete", tc.fixture, err)
		}
		if !strings.Contains(inc.Reason, tc.want) || !strings.HasPrefix(err.Error(), "the replay is incomplete: ") {
			t.Errorf("%s: %q, want it to hold %q", tc.fixture, err.Error(), tc.want)
		}
	}
}

// TestNewWithoutSandboxPinsTheFixture: with sandbox mode none the replay
// needs no bwrap; the fixture's digest is taken, and a prepare, which
// needs the sandbox's overlays, makes Run an error without a process.
func TestNewWithoutSandboxPinsTheFixture(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "fx.txt"), []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := New(t.Context(), Options{Dir: dir, Argv: []string{"true"}, Fixture: "fx.txt",
		Sandbox: config.Sandbox{Mode: config.SandboxNone}, Prepare: &config.Prepare{Run: []string{"true"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if len(r.FixtureSHA256()) != 64 {
		t.Errorf("FixtureSHA256 %q, want a sha256", r.FixtureSHA256())
	}
	if r.Shortfall() != "" || r.Judged() != "" || len(r.Notes()) != 0 {
		t.Errorf("Shortfall %q Judged %q Notes %q, want none without a sandbox", r.Shortfall(), r.Judged(), r.Notes())
	}
	o := r.Run(t.Context(), nil)
	if o.Result != attempt.Errored || !strings.HasPrefix(o.Reason, "prepare failed: a prepare needs the sandbox") {
		t.Errorf("Run: %s %q, want errored: a prepare needs the sandbox", o.Result, o.Reason)
	}
}

// TestFindSuite: of two suites at one path (go and pytest at "."), the
// one whose scope holds the test file; else the first there.
func TestFindSuite(t *testing.T) {
	cfg := &config.Config{Suites: []config.Suite{
		{Framework: config.FrameworkGo, Path: "."},
		{Framework: config.FrameworkPytest, Path: "."},
		{Framework: config.FrameworkGo, Path: "sub"},
	}}
	if s := findSuite(cfg, ".", "tests/test_a.py"); s == nil || s.Framework != config.FrameworkPytest {
		t.Errorf("a .py test: %+v, want the pytest suite", s)
	}
	if s := findSuite(cfg, ".", "a_test.go"); s == nil || s.Framework != config.FrameworkGo || s.Path != "." {
		t.Errorf("a go test: %+v, want the go suite at .", s)
	}
	if s := findSuite(cfg, "nowhere", "a_test.go"); s != nil {
		t.Errorf("no suite at the path: %+v, want nil", s)
	}
}

// TestSuiteOrderNote: the note names the order as the record's order key
// does (a pytest suite: the node ids in their order, and their digest).
func TestSuiteOrderNote(t *testing.T) {
	s := &config.Suite{Framework: config.FrameworkPytest, Path: "."}
	members := []*config.Property{{Path: "t/test_a.py", Name: "test_x"}, {Path: "t/test_b.py", Name: "test_y"}}
	got := suiteOrderNote(s, &suites.List{}, members, "7", "t/test_a.py")
	for _, want := range []string{"suite pytest ., order seed 7: 2 tests in the batch; order: 2 tests, tests_sha256 ", "(the node ids in their order, listed on the base)"} {
		if !strings.Contains(got, want) {
			t.Errorf("note %q, want it to hold %q", got, want)
		}
	}
	if tests(1) != "1 test" || tests(3) != "3 tests" {
		t.Errorf("tests: %q %q", tests(1), tests(3))
	}
}

// TestTeeWriter: the console gets the bytes the evidence reads, and its
// error ends nothing.
func TestTeeWriter(t *testing.T) {
	var buf bytes.Buffer
	ev := evidence.New(evidence.FrameworkGo, "TestA", nil, nil)
	w := teeWriter{&buf, ev}
	if _, err := w.Write([]byte("--- PASS: TestA (0.00s)\n")); err != nil {
		t.Fatal(err)
	}
	if buf.String() != "--- PASS: TestA (0.00s)\n" {
		t.Errorf("console got %q", buf.String())
	}
	if _, err := (teeWriter{failingWriter{}, ev}).Write([]byte("x\n")); err != nil {
		t.Errorf("a console error ended the write: %v", err)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("closed") }
