package golden

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder is a testing.TB that keeps the first failure an assertion
// reports (its Fatalf does not stop the test).
type recorder struct {
	testing.TB
	failed bool
	msg    string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	if !r.failed {
		r.failed, r.msg = true, format
	}
}
func (r *recorder) Fatalf(format string, args ...any) { r.Errorf(format, args...) }

func TestAssertFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.golden")
	if err := os.WriteFile(path, []byte("same\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	type testCase struct {
		name   string
		path   string
		got    string
		fails  bool
		saying string
	}
	run := func(t *testing.T, tc testCase) {
		r := &recorder{TB: t}
		AssertFile(r, tc.path, []byte(tc.got))
		if r.failed != tc.fails {
			t.Fatalf("failed = %v, want %v (%s)", r.failed, tc.fails, r.msg)
		}
		if !strings.Contains(r.msg, tc.saying) {
			t.Errorf("message %q, want it to say %q", r.msg, tc.saying)
		}
	}
	for _, tc := range []testCase{
		{name: "same bytes", path: path, got: "same\n"},
		{name: "other bytes", path: path, got: "same", fails: true, saying: "differs"},
		{name: "no golden file", path: path + ".missing", got: "same\n", fails: true, saying: "-update writes it"},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func TestAssertFileUpdate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.golden")
	*update = true
	defer func() { *update = false }()
	AssertFile(t, path, []byte("new\n"))
	got, err := os.ReadFile(path)
	if err != nil || string(got) != "new\n" {
		t.Fatalf("-update wrote %q, %v; want %q", got, err, "new\n")
	}
}
