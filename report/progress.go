package report

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/flakegate/flakegate"
)

// Progress shows a running check: one line per finished triple and, when
// the writer is a terminal, a bar below them that is redrawn in place
// (every finished triple and once a second). In CI logs it writes the
// lines only, so the log reads top to bottom. It is the check's progress
// handler (check.ProgressHandler) in the CLI and is safe for concurrent
// use by the check's workers.
type Progress struct {
	mu       sync.Mutex
	w        io.Writer
	tty      bool
	total    int
	done     int
	labels   map[flakegate.Label]int
	rejects  int
	skipped  int
	started  time.Time
	now      func() time.Time
	stop     chan struct{}
	ticker   sync.WaitGroup
	running  bool // between Start and Finish: the bar is on screen
	finished bool
	// batches are the batch processes running now, each with what their
	// stream said so far (BatchTest); shown on the bar on a terminal, and
	// in a line at most every every (per batch) in a log.
	batches map[*flakegate.RunningBatch]*batchTests
	every   time.Duration
}

// batchTests is what the stream of one running batch said so far.
type batchTests struct {
	ended, failed int
	failures      []string // the first few that failed
	last          string   // the last test that ended
	wrote         time.Time
}

// BatchLineEvery is how often, at most, a log gets a line of a running
// batch's progress (a terminal's bar shows it every second).
const BatchLineEvery = 10 * time.Second

const barWidth = 24

// NewProgress returns a progress view on w; Start begins it. isTerminal
// says whether w is a terminal (the CLI knows; the library does not look).
func NewProgress(w io.Writer, isTerminal bool) *Progress {
	return newProgress(w, isTerminal, time.Now)
}

func newProgress(w io.Writer, isTerminal bool, now func() time.Time) *Progress {
	return &Progress{w: w, tty: isTerminal, labels: map[flakegate.Label]int{}, now: now,
		batches: map[*flakegate.RunningBatch]*batchTests{}, every: BatchLineEvery}
}

// BatchTest takes one test of a running batch as its framework's stream
// says it ended (progress only: the check judges each test from the
// report). On a terminal the bar shows the batch's count at its next
// redraw; in a log a line says it once the batch has run every seconds,
// and at most every every seconds after.
func (p *Progress) BatchTest(b *flakegate.RunningBatch, test, outcome string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.finished {
		return
	}
	bt := p.batches[b]
	if bt == nil {
		bt = &batchTests{wrote: b.Started}
		p.batches[b] = bt
	}
	bt.ended++
	bt.last = test
	if outcome == "fail" || outcome == "error" {
		bt.failed++
		if len(bt.failures) < 3 {
			bt.failures = append(bt.failures, test)
		}
	}
	now := p.now()
	if p.tty || now.Sub(bt.wrote) < p.every {
		return
	}
	bt.wrote = now
	io.WriteString(p.w, p.batchLine(b, bt, now)+"\n")
}

// BatchEnded forgets a batch whose process ended: its line of results
// follows (BatchDone, Done).
func (p *Progress) BatchEnded(b *flakegate.RunningBatch) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.batches, b)
}

// batchLine says how far a running batch is: "… batch of 736 (pytest,
// seed 3, candidate attempt 0): 120 of 736 tests ended, 2 failed
// (tests/a.py::test_x, ...), last tests/b.py::test_y · 31.0s". Names come
// from the code under test's output: each is one safe line.
func (p *Progress) batchLine(b *flakegate.RunningBatch, bt *batchTests, now time.Time) string {
	line := fmt.Sprintf("… batch of %d (%s): %d of %d tests ended", b.Tests, oneLine(b.Head), bt.ended, b.Tests)
	if bt.failed > 0 {
		names := make([]string, len(bt.failures))
		for i, f := range bt.failures {
			names[i] = oneLine(f)
		}
		if bt.failed > len(names) {
			names = append(names, "...")
		}
		line += fmt.Sprintf(", %d failed so far (%s)", bt.failed, strings.Join(names, ", "))
	}
	return line + fmt.Sprintf(", last %s · %s", oneLine(bt.last), seconds(now.Sub(b.Started).Seconds()))
}

// Start begins the view of total triples: the clock and, on a terminal,
// the bar. Calls after the first do nothing.
func (p *Progress) Start(total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.running || p.finished {
		return
	}
	p.total, p.started, p.running = total, p.now(), true
	if p.tty {
		p.stop = make(chan struct{})
		p.ticker.Add(1)
		go p.tick()
		p.drawBar()
	}
}

// Note writes one line that is not a triple's result, "topic: msg" (a
// lock wait, the shared queue's progress), above the bar. Notes are
// written before Start and after Finish too.
func (p *Progress) Note(topic, msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	bar := p.tty && p.running
	var b strings.Builder
	if bar {
		b.WriteString("\r\x1b[K")
	}
	fmt.Fprintf(&b, "%s: %s\n", topic, oneLine(msg))
	io.WriteString(p.w, b.String())
	if bar {
		p.drawBar()
	}
}

func (p *Progress) tick() {
	defer p.ticker.Done()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.mu.Lock()
			if p.running {
				p.drawBar()
			}
			p.mu.Unlock()
		}
	}
}

// BatchDone reports the triples of one batch (one process per attempt
// for many tests) as one line: what ran, then each member's label and
// test, in the batch's order. The summary has their reasons.
func (p *Progress) BatchDone(head string, rs []flakegate.Result) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.finished {
		return
	}
	secs := 0.0
	for i := range rs {
		p.count(&rs[i])
		secs = max(secs, rs[i].Seconds)
	}
	width := len(fmt.Sprint(p.total))
	bar := p.tty && p.running
	var b strings.Builder
	if bar {
		b.WriteString("\r\x1b[K")
	}
	fmt.Fprintf(&b, "[%*d/%d] batch of %d (%s) · %s:", width, p.done, p.total, len(rs), oneLine(head), seconds(secs))
	// A suite's batch runs a package's every test: its passes are counted,
	// and only the others named.
	sep, folded := "", 0
	for i := range rs {
		r := &rs[i]
		if r.Suite != "" && passed(r) {
			folded++
			continue
		}
		tag := string(r.Label)
		if r.Skipped {
			tag += " " + FrozenWording
		}
		fmt.Fprintf(&b, "%s %s %s", sep, p.color(*r, tag), oneLine(idOf(r)))
		sep = ","
	}
	if folded > 0 {
		fmt.Fprintf(&b, "%s %d %s", sep, folded, p.color(flakegate.Result{Label: flakegate.Pass}, "PASS"))
	}
	b.WriteByte('\n')
	io.WriteString(p.w, b.String())
	if bar {
		p.drawBar()
	}
}

// count tallies one finished triple; the caller holds mu.
func (p *Progress) count(r *flakegate.Result) {
	p.done++
	switch {
	case r.Skipped:
		p.skipped++
	default:
		p.labels[r.Label]++
		if r.Label.Reject() {
			p.rejects++
		}
	}
}

// Done reports one finished triple: its label, attempts and seconds, and
// for a reject the reason.
func (p *Progress) Done(r flakegate.Result) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.finished {
		return
	}
	p.count(&r)
	width := len(fmt.Sprint(p.total))
	bar := p.tty && p.running
	var b strings.Builder
	if bar {
		b.WriteString("\r\x1b[K")
	}
	fmt.Fprintf(&b, "[%*d/%d] ", width, p.done, p.total)
	tag := string(r.Label)
	if r.Skipped {
		tag += " " + FrozenWording
	}
	b.WriteString(p.color(r, fmt.Sprintf("%-12s", tag)))
	fmt.Fprintf(&b, " %s seed %s", oneLine(idOf(&r)), oneLine(seedText(&r)))
	if r.Skipped {
		fmt.Fprintf(&b, " · %s", oneLine(frozenLine(&r)))
	} else {
		fmt.Fprintf(&b, " · %s · %s", attemptCounts(&r), seconds(r.Seconds))
		if r.Label.Reject() {
			b.WriteString(" · " + oneLine(reasonOf(&r)))
		} else if o := originText(&r); o != "" {
			b.WriteString(" · " + oneLine(o))
		}
	}
	b.WriteByte('\n')
	io.WriteString(p.w, b.String())
	if bar {
		p.drawBar()
	}
}

// Finish stops the bar and writes the closing tally line. Calls after the
// first do nothing.
func (p *Progress) Finish() {
	p.mu.Lock()
	if p.finished {
		p.mu.Unlock()
		return
	}
	ticking := p.stop != nil
	if !p.running {
		p.started = p.now() // never started: nothing ran
	}
	p.finished, p.running = true, false
	p.mu.Unlock()
	if ticking {
		close(p.stop)
		p.ticker.Wait()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var b strings.Builder
	if p.tty {
		b.WriteString("\r\x1b[K")
	}
	fmt.Fprintf(&b, "checked %d of %d triples in %s: %s\n", p.done, p.total, p.elapsed(), p.tally())
	io.WriteString(p.w, b.String())
}

func (p *Progress) tally() string {
	var parts []string
	for _, l := range flakegate.Labels {
		if n := p.labels[l]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, l))
		}
	}
	if p.skipped > 0 {
		parts = append(parts, fmt.Sprintf("%d SCHEDULER %s", p.skipped, FrozenWording))
	}
	if len(parts) == 0 {
		return "nothing ran"
	}
	return strings.Join(parts, ", ")
}

func (p *Progress) elapsed() string {
	return seconds(p.now().Sub(p.started).Seconds())
}

// drawBar redraws the bar line in place; the caller holds mu.
func (p *Progress) drawBar() {
	filled := 0
	if p.total > 0 {
		filled = min(barWidth, p.done*barWidth/p.total)
	}
	bar := strings.Repeat("█", filled) + strings.Repeat("░", barWidth-filled)
	status := fmt.Sprintf("%d/%d", p.done, p.total)
	if p.rejects > 0 {
		status += fmt.Sprintf(" · \x1b[31m%s\x1b[0m", plural(p.rejects, "reject"))
	}
	if n := p.labels[flakegate.Scheduler]; n > 0 {
		status += fmt.Sprintf(" · %d SCHEDULER", n)
	}
	status += p.runningBatches()
	fmt.Fprintf(p.w, "\r\x1b[Kchecking %s %s · %s", bar, status, p.elapsed())
}

// runningBatches is the bar's note of the running batches' counts:
// " · batch 120/736 tests, 2 failed" (the one furthest along).
func (p *Progress) runningBatches() string {
	var top *batchTests
	var tb *flakegate.RunningBatch
	for b, bt := range p.batches {
		if top == nil || bt.ended > top.ended {
			top, tb = bt, b
		}
	}
	if top == nil {
		return ""
	}
	s := fmt.Sprintf(" · batch %d/%d tests", top.ended, tb.Tests)
	if top.failed > 0 {
		s += fmt.Sprintf(", %d failed", top.failed)
	}
	if n := len(p.batches); n > 1 {
		s += fmt.Sprintf(" (%d batches running)", n)
	}
	return s
}

// color paints a label tag on a terminal: red rejects, yellow SCHEDULER,
// cyan frozen, green PASS.
func (p *Progress) color(r flakegate.Result, tag string) string {
	if !p.tty {
		return tag
	}
	code := "32"
	switch {
	case r.Skipped:
		code = "36"
	case r.Label == flakegate.Scheduler:
		code = "33"
	case r.Label.Reject():
		code = "31"
	}
	return "\x1b[" + code + "m" + tag + "\x1b[0m"
}
