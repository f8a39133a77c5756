package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/flakegate/flakegate"
)

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
