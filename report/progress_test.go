package report

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flakegate/flakegate"
)

// fakeClock advances one second per reading.
func fakeClock() func() time.Time {
	var mu sync.Mutex
	t := time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(time.Second)
		return t
	}
}

func TestProgress(t *testing.T) {
	type testCase struct {
		name string
		tty  bool
		// check inspects the output.
		check func(t *testing.T, out string)
	}
	s := loadSummary(t, "all-labels.json")
	run := func(t *testing.T, tc testCase) {
		var buf bytes.Buffer
		p := newProgress(&buf, tc.tty, fakeClock())
		p.Start(len(s.Results))
		for _, r := range s.Results {
			p.Done(r)
		}
		p.Finish()
		p.Finish()
		p.Done(s.Results[0]) // after Finish: ignored
		tc.check(t, buf.String())
	}
	for _, tc := range []testCase{
		{
			name: "log lines",
			check: func(t *testing.T, out string) {
				if strings.ContainsAny(out, "\r\x1b") {
					t.Errorf("CI output has terminal control bytes: %q", out)
				}
				lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
				if len(lines) != len(s.Results)+1 {
					t.Fatalf("%d lines for %d results:\n%s", len(lines), len(s.Results), out)
				}
				for i, r := range s.Results {
					want := fmt.Sprintf("[%d/%d] ", i+1, len(s.Results))
					if !strings.HasPrefix(lines[i], want) || !strings.Contains(lines[i], r.PropertyPath+" seed "+r.Seed.String()) {
						t.Errorf("line %d = %q, want prefix %q and the triple", i, lines[i], want)
					}
					tag := string(r.Label)
					if r.Skipped {
						tag = "SCHEDULER skipped (frozen)"
					}
					if !strings.Contains(lines[i], tag) {
						t.Errorf("line %d = %q lacks %s", i, lines[i], tag)
					}
					if !r.Skipped && !strings.Contains(lines[i], seconds(r.Seconds)) {
						t.Errorf("line %d = %q lacks the seconds %s", i, lines[i], seconds(r.Seconds))
					}
				}
				last := lines[len(lines)-1]
				want := "checked 8 of 8 triples in 1.00s: 1 INCOMPLETE, 1 CONTAMINATED, 1 FIXTURE, 1 BUDGET, 1 PROPERTY, 1 SCHEDULER, 1 PASS, 1 SCHEDULER skipped (frozen)"
				if last != want {
					t.Errorf("last line\n got %q\nwant %q", last, want)
				}
			},
		},
		{
			name: "terminal",
			tty:  true,
			check: func(t *testing.T, out string) {
				if n := strings.Count(out, "checking "); n < len(s.Results)+1 {
					t.Errorf("bar drawn %d times, want at least %d", n, len(s.Results)+1)
				}
				if !strings.Contains(out, "\r\x1b[Kchecking "+strings.Repeat("█", barWidth)+" 8/8") {
					t.Errorf("no full bar at 8/8: %q", out)
				}
				_, last, _ := strings.Cut(out[strings.LastIndex(out, "\r"):], "\x1b[K")
				if !strings.HasPrefix(last, "checked 8 of 8 triples in ") || !strings.HasSuffix(last, ": 1 INCOMPLETE, 1 CONTAMINATED, 1 FIXTURE, 1 BUDGET, 1 PROPERTY, 1 SCHEDULER, 1 PASS, 1 SCHEDULER skipped (frozen)\n") {
					t.Errorf("the bar is not replaced by the tally: %q", out[max(0, len(out)-200):])
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestProgressConcurrent has workers report at once; run with -race.
func TestProgressConcurrent(t *testing.T) {
	const workers, each = 8, 50
	var buf syncBuffer
	p := NewProgress(&buf, true)
	p.Start(workers * each)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				p.Done(flakegate.Result{PropertyPath: "p.py", Seed: flakegate.Seed(fmt.Sprint(w*each + i)), Label: flakegate.Pass})
			}
		}()
	}
	wg.Wait()
	p.Finish()
	out := buf.String()
	if n := strings.Count(out, "\n"); n != workers*each+1 {
		t.Errorf("%d lines, want %d", n, workers*each+1)
	}
	if !strings.Contains(out, fmt.Sprintf("checked %d of %d triples", workers*each, workers*each)) {
		t.Errorf("no tally in %q", out[max(0, len(out)-200):])
	}
}

// TestProgressNotes: a note is one "topic: msg" line, before Start, among
// the triples and after Finish; on a terminal it clears the bar first and
// the bar is drawn again below it.
func TestProgressNotes(t *testing.T) {
	for _, tty := range []bool{false, true} {
		t.Run(fmt.Sprint("tty=", tty), func(t *testing.T) {
			var buf bytes.Buffer
			p := newProgress(&buf, tty, fakeClock())
			p.Note("note", "waiting for the worktree lock")
			p.Start(1)
			p.Note("queue", "check c1: 0/1 done")
			p.Done(flakegate.Result{PropertyPath: "p.py", Seed: "7", Label: flakegate.Pass})
			p.Finish()
			p.Note("note", "no freeze granted")
			out := buf.String()
			if !tty {
				want := "note: waiting for the worktree lock\nqueue: check c1: 0/1 done\n"
				if !strings.HasPrefix(out, want) || !strings.HasSuffix(out, "\nnote: no freeze granted\n") || strings.Count(out, "\n") != 5 {
					t.Errorf("log output:\n%s", out)
				}
				return
			}
			if !strings.HasPrefix(out, "note: waiting for the worktree lock\n\r\x1b[Kchecking ") {
				t.Errorf("a note before Start draws no bar, then Start does: %q", out)
			}
			if !strings.Contains(out, "\r\x1b[Kqueue: check c1: 0/1 done\n\r\x1b[Kchecking ") {
				t.Errorf("a note does not clear and redraw the bar: %q", out)
			}
			if !strings.HasSuffix(out, ": 1 PASS\nnote: no freeze granted\n") {
				t.Errorf("a note after Finish draws a bar again: %q", out)
			}
		})
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
