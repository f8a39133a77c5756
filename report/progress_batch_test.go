package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/flakegate/flakegate/check"
)

var _ check.BatchProgressHandler = (*Progress)(nil)

// TestProgressBatch: a batch is one line with each member's label, in
// the batch's order, and counts every member in the tally.
func TestProgressBatch(t *testing.T) {
	s := loadSummary(t, "all-labels.json")
	var buf bytes.Buffer
	p := newProgress(&buf, false, fakeClock())
	p.Start(len(s.Results))
	p.BatchDone("go, seed 7", s.Results)
	p.Finish()
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines, want the batch's and the tally:\n%s", len(lines), buf.String())
	}
	n := len(s.Results)
	if !strings.Contains(lines[0], "batch of ") || !strings.Contains(lines[0], "(go, seed 7)") {
		t.Errorf("batch line %q", lines[0])
	}
	at := 0
	for _, r := range s.Results {
		i := strings.Index(lines[0][at:], string(r.Label)+" ")
		if i < 0 {
			t.Fatalf("batch line %q lacks %s after offset %d", lines[0], r.Label, at)
		}
		at += i
	}
	if !strings.HasPrefix(lines[1], "checked ") || strings.Contains(lines[1], "nothing ran") || !strings.Contains(lines[1], " of ") {
		t.Errorf("tally %q", lines[1])
	}
	if p.done != n {
		t.Errorf("done %d, want %d", p.done, n)
	}
}
