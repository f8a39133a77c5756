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
	lines []string
	out   bytes.Buffer
	done  chan struct{}
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
				close(b.done)
			}
		}()
	}
	readErr := make(chan error, 1)
	go func() {
		defer close(order)
		defer close(work)
		readErr <- readBatches(ctx, r, work, order)
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
	}
	wg.Wait()
	if err := <-readErr; err != nil {
		return err
	}
	return werr
}

// readBatches cuts the input into batches of whole lines. Each batch owns
// a fresh buffer that is never written again once read, so its lines are
// substrings of it without a copy.
func readBatches(ctx context.Context, r io.Reader, work, order chan<- *batch) error {
	var carry []byte  // the start of a line that continues in the next read
	skipping := false // inside a line longer than MaxRecordBytes
	send := func(lines []string) {
		b := &batch{lines: lines, done: make(chan struct{})}
		b.out.Grow(len(lines) * 320)
		work <- b
		order <- b
	}
	for eof := false; !eof; {
		if err := ctx.Err(); err != nil {
			return err
		}
		buf := make([]byte, len(carry), max(2*len(carry), len(carry)+jsonlChunk))
		copy(buf, carry)
		n, err := io.ReadAtLeast(r, buf[len(buf):cap(buf)], 1)
		buf = buf[:len(buf)+n]
		switch {
		case err == io.EOF || err == io.ErrUnexpectedEOF:
			eof = true
		case err != nil:
			return err
		}
		var lines []string
		if skipping {
			i := bytes.IndexByte(buf, '\n')
			if i < 0 {
				carry = nil
				if eof {
					send([]string{tooLongLine})
				}
				continue
			}
			lines = append(lines, tooLongLine)
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
				lines = append(lines, chunk[:i])
				chunk = chunk[min(i+1, len(chunk)):]
			}
		}
		if len(carry) > MaxRecordBytes+2 {
			skipping = true
			carry = nil
		}
		if len(lines) > 0 {
			send(lines)
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
	return p.classifyString(line)
}

// classifyString is ClassifyBytes on a string, reusing p's buffers.
func (p *parser) classifyString(s string) Decision {
	if err := precheck(s); err != nil {
		return notJSON(err)
	}
	p.reset(s)
	v, err := p.read()
	if err != nil {
		return notJSON(err)
	}
	p.rec.fill(v)
	d := Classify(&p.rec)
	d.RecordSHA256 = p.hash.sum(&v)
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
