package flakegate

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"unsafe"
)

// jsonlChunk is how many bytes of input one batch holds, at least.
const jsonlChunk = 256 << 10

type batch struct {
	in    []byte // the input bytes the lines point into
	lines []string
	out   bytes.Buffer
	done  chan struct{} // receives once when a worker has written out
}

// batchPool recycles batches, with their input and output buffers, once
// the writer is done with them: fresh buffers cost page faults and clearing
// that are a large part of a whole run's time.
type batchPool chan *batch

func (bp batchPool) get() *batch {
	select {
	case b := <-bp:
		return b
	default:
		return &batch{done: make(chan struct{}, 1)}
	}
}

func (bp batchPool) put(b *batch) {
	b.lines = b.lines[:0]
	b.out.Reset()
	select {
	case bp <- b:
	default:
	}
}

// ClassifyJSONL reads one record per line from r and writes one decision
// per line to w, in input order, using every core. A line that is not a
// JSON record still gets its INCOMPLETE decision; a final newline does not
// start another record. A line longer than MaxRecordBytes is INCOMPLETE.
// onLabel, if not nil, sees every label in order. It returns the first
// read or write error; reject labels are results, not errors.
func ClassifyJSONL(ctx context.Context, r io.Reader, w io.Writer, onLabel func(Label)) error {
	workers := runtime.GOMAXPROCS(0)
	work := make(chan *batch, workers*2)
	order := make(chan *batch, workers*4)
	// Every batch in flight sits in work, order, a worker or the writer.
	pool := make(batchPool, workers*6+4)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var p parser
			for b := range work {
				for _, line := range b.lines {
					d := p.classifyLine(line)
					d.AppendJSON(&b.out)
					b.out.WriteByte('\n')
				}
				// The parser may point into b.in until its next record;
				// it reads nothing of it before then.
				b.done <- struct{}{}
			}
		}()
	}
	readErr := make(chan error, 1)
	go func() {
		defer close(order)
		defer close(work)
		readErr <- readBatches(ctx, r, work, order, pool)
	}()
	var werr error
	for b := range order {
		<-b.done
		if werr == nil {
			if onLabel != nil {
				labelsOf(b.out.Bytes(), onLabel)
			}
			_, werr = w.Write(b.out.Bytes())
		}
		pool.put(b)
	}
	wg.Wait()
	if err := <-readErr; err != nil {
		return err
	}
	return werr
}

// readBatches cuts the input into batches of whole lines. A batch's input
// buffer is not written again until the writer has returned the batch to
// the pool, so its lines are substrings of it without a copy.
func readBatches(ctx context.Context, r io.Reader, work, order chan<- *batch, pool batchPool) error {
	var carry []byte  // the start of a line that continues in the next read
	skipping := false // inside a line longer than MaxRecordBytes
	b := pool.get()
	send := func() {
		if b.out.Cap() == 0 {
			b.out.Grow(len(b.lines) * 320)
		}
		work <- b
		order <- b
		b = pool.get()
	}
	for eof := false; !eof; {
		if err := ctx.Err(); err != nil {
			return err
		}
		// A recycled buffer will do while it has room for half a chunk
		// after the carry; a line that outgrows it doubles it.
		buf := b.in[:0]
		if cap(buf) < max(2*len(carry), len(carry)+jsonlChunk/2) {
			buf = make([]byte, 0, max(2*len(carry), len(carry)+jsonlChunk))
		}
		buf = append(buf, carry...)
		b.in = buf[:cap(buf)]
		n, err := io.ReadAtLeast(r, buf[len(buf):cap(buf)], 1)
		buf = buf[:len(buf)+n]
		switch {
		case err == io.EOF || err == io.ErrUnexpectedEOF:
			eof = true
		case err != nil:
			return err
		}
		if skipping {
			i := bytes.IndexByte(buf, '\n')
			if i < 0 {
				carry = nil
				if eof {
					b.lines = append(b.lines, tooLongLine)
					send()
				}
				continue
			}
			b.lines = append(b.lines, tooLongLine)
			buf = buf[i+1:]
			skipping = false
		}
		last := bytes.LastIndexByte(buf, '\n')
		if eof {
			last = len(buf) - 1
		}
		carry = buf[last+1:]
		if last >= 0 {
			chunk := unsafe.String(&buf[0], last+1)
			for len(chunk) > 0 {
				i := strings.IndexByte(chunk, '\n')
				if i < 0 {
					i = len(chunk)
				}
				b.lines = append(b.lines, chunk[:i])
				chunk = chunk[min(i+1, len(chunk)):]
			}
		}
		if len(carry) > MaxRecordBytes+2 {
			skipping = true
			carry = nil
		}
		if len(b.lines) > 0 {
			send()
		}
	}
	return nil
}

// tooLongLine stands for a line over MaxRecordBytes. It is told apart from
// input by its address, not its text, so no input line can pose as it.
var tooLongLine = string([]byte("line too long"))

func isTooLong(line string) bool {
	return len(line) == len(tooLongLine) && unsafe.StringData(line) == unsafe.StringData(tooLongLine)
}

func (p *parser) classifyLine(line string) Decision {
	if isTooLong(line) {
		return Decision{Label: Incomplete, Row: 1, Reason: fmt.Sprintf("not a JSON record: line longer than %d MiB", MaxRecordBytes>>20)}
	}
	line = strings.TrimSuffix(line, "\r")
	if line == "" {
		return Decision{Label: Incomplete, Row: 1, Reason: "not a JSON record: empty line"}
	}
	return p.decide(line)
}

// classifyString is ClassifyBytes on a string, reusing p's buffers.
func (p *parser) classifyString(s string) Decision {
	d := p.decide(s)
	d.RecordSHA256 = strings.Clone(d.RecordSHA256)
	return d
}

// decide is classifyString, but the decision's RecordSHA256 lives in p and
// holds only until p reads the next record.
func (p *parser) decide(s string) Decision {
	if len(s) > MaxRecordBytes || strings.HasPrefix(s, "\xEF\xBB\xBF") {
		return notJSON(precheck(s))
	}
	p.reset(s)
	p.hash.enc.trusted = true
	v, err := p.read()
	// Outside strings the reader takes ASCII only, so a record it read
	// whole without a byte over 0x7E in a string is valid UTF-8. Otherwise
	// invalid UTF-8 is the reason, as ReadValue gives it.
	if err != nil || p.sawHigh {
		if perr := precheck(s); perr != nil {
			return notJSON(perr)
		}
	}
	if err != nil {
		return notJSON(err)
	}
	p.rec.fillSlots(v, p.recordSlots(&v))
	d := Classify(&p.rec)
	d.RecordSHA256 = p.hash.sumScratch(&v)
	return d
}

func notJSON(err error) Decision {
	return Decision{Label: Incomplete, Row: 1, Reason: "not a JSON record: " + err.Error()}
}

// labelsOf calls fn with the label of each decision line in out.
func labelsOf(out []byte, fn func(Label)) {
	const prefix = `{"label":"`
	for len(out) > 0 {
		i := bytes.IndexByte(out, '\n')
		line := out[:i]
		out = out[i+1:]
		rest := line[len(prefix):]
		j := bytes.IndexByte(rest, '"')
		fn(Label(rest[:j]))
	}
}
