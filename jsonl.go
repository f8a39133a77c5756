package flakegate

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
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

// readBatches cuts the input into batches of whole lines. Each batch is one
// string (one copy of the bytes) whose lines are substrings of it.
func readBatches(ctx context.Context, r io.Reader, work, order chan<- *batch) error {
	buf := make([]byte, 0, 2*jsonlChunk)
	skipping := false // inside a line longer than MaxRecordBytes
	send := func(lines []string) {
		b := &batch{lines: lines, done: make(chan struct{})}
		work <- b
		order <- b
	}
	eof := false
	for !eof {
		if err := ctx.Err(); err != nil {
			return err
		}
		if cap(buf)-len(buf) < jsonlChunk {
			nb := make([]byte, len(buf), 2*cap(buf)+jsonlChunk)
			copy(nb, buf)
			buf = nb
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			eof = true
		} else if err != nil {
			return err
		}
		var lines []string
		if skipping {
			i := bytes.IndexByte(buf, '\n')
			if i < 0 {
				buf = buf[:0]
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
		if last >= 0 && (last+1 >= jsonlChunk || eof) {
			chunk := string(buf[:last+1])
			for len(chunk) > 0 {
				i := strings.IndexByte(chunk, '\n')
				if i < 0 {
					i = len(chunk)
				}
				lines = append(lines, chunk[:i])
				chunk = chunk[min(i+1, len(chunk)):]
			}
			rest := copy(buf, buf[last+1:])
			buf = buf[:rest]
		}
		if len(buf) > MaxRecordBytes+2 && bytes.IndexByte(buf, '\n') < 0 {
			skipping = true
			buf = buf[:0]
		}
		if len(lines) > 0 {
			send(lines)
		}
	}
	return nil
}

const tooLongLine = "\x00too-long"

func (p *parser) classifyLine(line string) Decision {
	line = strings.TrimSuffix(line, "\r")
	switch line {
	case "":
		return Decision{Label: Incomplete, Row: 1, Reason: "not a JSON record: empty line"}
	case tooLongLine:
		return Decision{Label: Incomplete, Row: 1, Reason: fmt.Sprintf("not a JSON record: line longer than %d MiB", MaxRecordBytes>>20)}
	}
	return p.classifyString(line)
}

// classifyString is ClassifyBytes on a string, reusing p's arenas.
func (p *parser) classifyString(s string) Decision {
	if err := precheck(s); err != nil {
		return notJSON(err)
	}
	p.reset(s)
	v, err := p.read()
	if err != nil {
		return notJSON(err)
	}
	d := Classify(NewRecord(v))
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
