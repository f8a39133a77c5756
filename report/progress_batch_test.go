package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/flakegate/flakegate"
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

var _ check.TestProgressHandler = (*Progress)(nil)

// TestProgressBatchTests: in a log, a running batch's tests are a line
// once the batch has run BatchLineEvery and at most one per
// BatchLineEvery after, with the count, the failures so far by name and
// no terminal escape (a name with one is shown safely); on a terminal no
// such line is written, and the bar carries the count.
func TestProgressBatchTests(t *testing.T) {
	start := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	now := start
	clock := func() time.Time { return now }
	b := &flakegate.RunningBatch{Head: "pytest, seed 3, candidate attempt 0", Tests: 736, Started: start}
	var buf bytes.Buffer
	p := newProgress(&buf, false, clock)
	p.Start(736)
	for i := range 600 {
		now = start.Add(time.Duration(i) * 100 * time.Millisecond) // 10 tests a second
		outcome := "pass"
		if i == 5 || i == 450 {
			outcome = "fail"
		}
		p.BatchTest(b, fmt.Sprintf("tests/t.py::test_%d\x1b[2J", i), outcome)
	}
	p.BatchEnded(b)
	out := buf.String()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	// 60 s of tests: a line at 10, 20, 30, 40, 50 s.
	if len(lines) != 5 || strings.Contains(out, "\x1b") {
		t.Fatalf("want 5 lines without escapes, got %d:\n%q", len(lines), out)
	}
	if want := "… batch of 736 (pytest, seed 3, candidate attempt 0): 101 of 736 tests ended, 1 failed so far (tests/t.py::test_5\\x1b[2J), last tests/t.py::test_100\\x1b[2J · 10.0s"; lines[0] != want {
		t.Errorf("first line\n got %q\nwant %q", lines[0], want)
	}
	if !strings.Contains(lines[4], "501 of 736 tests ended, 2 failed so far (tests/t.py::test_5\\x1b[2J, tests/t.py::test_450\\x1b[2J)") {
		t.Errorf("last line %q", lines[4])
	}

	buf.Reset()
	p = newProgress(&buf, true, clock)
	p.Start(736)
	p.BatchTest(b, "tests/t.py::test_a", "pass")
	p.BatchTest(b, "tests/t.py::test_b", "fail")
	now = now.Add(time.Hour)
	p.BatchTest(b, "tests/t.py::test_c", "pass")
	p.mu.Lock()
	p.drawBar()
	p.mu.Unlock()
	if out := buf.String(); strings.Contains(out, "tests ended") || !strings.Contains(out, " · batch 3/736 tests, 1 failed") {
		t.Errorf("terminal: %q", out)
	}
	p.Finish()
}
