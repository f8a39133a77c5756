package e2e_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flakegate/flakegate"
)

// TestExampleRecords: each hand-written record under examples/records
// classifies as the label its file name starts with.
func TestExampleRecords(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("..", "examples", "records", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no example records: %v", err)
	}
	seen := map[flakegate.Label]bool{}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			want := flakegate.Label(strings.ToUpper(strings.SplitN(strings.TrimSuffix(filepath.Base(f), ".json"), "-", 2)[0]))
			d := flakegate.ClassifyBytes(raw)
			if d.Label != want {
				t.Errorf("label %s (row %d, %s), want %s", d.Label, d.Row, d.Reason, want)
			}
			seen[d.Label] = true
		})
	}
	for _, l := range flakegate.Labels {
		if !seen[l] {
			t.Errorf("no example record for %s", l)
		}
	}
}

// TestDemo runs the demo `make demo` runs, with the test's binary.
func TestDemo(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end: the demo")
	}
	dir := t.TempDir()
	cmd := exec.Command(filepath.Join("..", "examples", "demo", "run-demo.sh"), flakegateBin, filepath.Join(dir, "demo"))
	cmd.Env = cleanEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("run-demo.sh: %v\n%s", err, out)
	}
	for _, l := range flakegate.Labels {
		if !strings.Contains(string(out), string(l)) {
			t.Errorf("the demo never shows %s", l)
		}
	}
	if !strings.Contains(string(out), "exit code: 1") {
		t.Errorf("the demo does not show the exit code\n%s", out)
	}
}
