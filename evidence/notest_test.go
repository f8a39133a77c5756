package evidence

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flakegate/flakegate/attempt"
)

// TestNoTestMarkers runs what go test and pytest print when no test ran,
// and the attempt given NoTestMarkers makes each exit 0 an error.
func TestNoTestMarkers(t *testing.T) {
	type testCase struct {
		name, output string
	}
	run := func(t *testing.T, tc testCase) {
		o := attempt.Run(context.Background(), attempt.Command{Argv: []string{"printf", "%s\\n", tc.output}, NoTestMarkers: NoTestMarkers})
		if o.Result != attempt.Errored || !strings.Contains(o.Reason, "no test executed") {
			t.Errorf("%q: %s (%s), want an error", tc.output, o.Result, o.Reason)
		}
	}
	for _, tc := range []testCase{
		{"go test -v", "testing: warning: no tests to run\nPASS"},
		{"go test", "ok  \texample.com/m\t0.01s [no tests to run]"},
		{"pytest", "============================ no tests ran in 0.01s ============================="},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
	if _, err := exec.LookPath("go"); err != nil {
		return
	}
	// The real go test, on a package with no test of that name.
	dir := t.TempDir()
	for name, body := range map[string]string{"go.mod": "module example.com/m\n\ngo 1.21\n", "m_test.go": "package m\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) {}\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, argv := range [][]string{{"go", "test", "-count=1", "-run", "^TestNone$", "."}, {"go", "test", "-v", "-count=1", "-run", "^TestNone$", "."}} {
		o := attempt.Run(context.Background(), attempt.Command{Argv: argv, Dir: dir, NoTestMarkers: NoTestMarkers})
		if o.Result != attempt.Errored || !strings.Contains(o.Reason, "no test executed") {
			t.Errorf("%v: %s (%s), output %q, want an error", argv, o.Result, o.Reason, o.Tail)
		}
	}
}
