package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/flakegate/flakegate"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// assertGolden compares got with testdata/name, or rewrites the file with
// -update.
func assertGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./report -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the output (run go test ./report -update after checking the diff)\n--- got ---\n%s", path, got)
	}
}

// loadSummary reads a check --json summary from testdata: summary.json is
// the output of the example repository's check (the golden files and docs
// are made from it), all-labels.json a hand-made summary with every label,
// a SCHEDULER with failed attempts and a frozen skip, which the tests that
// name exact results read.
func loadSummary(t testing.TB, name string) *flakegate.Summary {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var s flakegate.Summary
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return &s
}

func intPtr(n int) *int { return &n }
