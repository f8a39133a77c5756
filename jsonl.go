package flakegate

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
)

// jsonlBatch is how many lines one worker classifies at a time.
const jsonlBatch = 256

type batch struct {
	lines [][]byte
	out   bytes.Buffer
	done  chan struct{}
}

// ClassifyJSONL reads one record per line from r and writes one decision
// per line to w, in input order, using every core. A line that is not a
// JSON record still gets its INCOMPLETE decision; a final newline does not
// start another record. A line longer than MaxRecordBytes is INCOMPLETE.
// It returns the first read or write error; reject labels are results.
func ClassifyJSONL(ctx context.Context, r io.Reader, w io.Writer, onLabel func(Label)) error {
	workers := runtime.GOMAXPROCS(0)
	work := make(chan *batch, workers*2)
	order := make(chan *batch, workers*4)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range work {
				for _, line := range b.lines {
					d := classifyLine(line)
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
	bw := bufio.NewWriterSize(w, 256<<10)
	var werr error
	for b := range order {
		<-b.done
		if werr == nil {
			if onLabel != nil {
				labelsOf(b.out.Bytes(), onLabel)
			}
			_, werr = bw.Write(b.out.Bytes())
		}
	}
	wg.Wait()
	if err := <-readErr; err != nil {
		return err
	}
	if werr != nil {
		return werr
	}
	return bw.Flush()
}

func readBatches(ctx context.Context, r io.Reader, work, order chan<- *batch) error {
	br := bufio.NewReaderSize(r, 1<<20)
	cur := &batch{done: make(chan struct{})}
	send := func() {
		work <- cur
		order <- cur
		cur = &batch{done: make(chan struct{})}
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		line, err := readLine(br)
		if len(line) > 0 || (err == nil) {
			cur.lines = append(cur.lines, line)
			if len(cur.lines) == jsonlBatch {
				send()
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	if len(cur.lines) > 0 {
		send()
	}
	return nil
}

var errLineTooLong = errors.New("line too long")

// readLine returns the next line without its newline (and a trailing \r).
// A line over MaxRecordBytes comes back as a marker that classifies as
// INCOMPLETE; the rest of that line is skipped.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) > MaxRecordBytes+2 {
			for err == bufio.ErrBufferFull {
				_, err = br.ReadSlice('\n')
			}
			if err == io.EOF {
				err = nil
			}
			return tooLongLine, err
		}
		line = append(line, chunk...)
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == io.EOF && len(line) == 0 {
			return nil, io.EOF
		}
		line = bytes.TrimSuffix(line, []byte{'\n'})
		line = bytes.TrimSuffix(line, []byte{'\r'})
		if err == io.EOF {
			return line, nil
		}
		return line, err
	}
}

var tooLongLine = []byte("\x00too-long")

func classifyLine(line []byte) Decision {
	if len(line) == 0 {
		return Decision{Label: Incomplete, Row: 1, Reason: "not a JSON record: empty line"}
	}
	if bytes.Equal(line, tooLongLine) {
		return Decision{Label: Incomplete, Row: 1, Reason: fmt.Sprintf("not a JSON record: line longer than %d MiB", MaxRecordBytes>>20)}
	}
	return ClassifyBytes(line)
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
