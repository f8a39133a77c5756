package canonjson

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"unsafe"
)

// jsonlChunk is how many bytes of input one batch holds, at least.
const jsonlChunk = 256 << 10

// ErrLineTooLong is the error a LineFunc is given for a line longer than
// MaxBytes, in place of the line.
var ErrLineTooLong = errors.New("line longer than 16 MiB")

// A LineFunc appends to out what one input line gives, and returns out. It
// is given either the line (without its "\n", and without a "\r" before
// that) or, for a line longer than MaxBytes, "" and ErrLineTooLong. line
// holds only until the LineFunc returns.
type LineFunc func(out []byte, line string, err error) []byte

// line is one input line of a batch.
type line struct {
	s       string
	tooLong bool
}

type batch struct {
	in    []byte // the input bytes the lines point into
	lines []line
	out   []byte
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
	b.out = b.out[:0]
	select {
	case bp <- b:
	default:
	}
}

// Lines reads r as JSON lines and writes, in input order, what a LineFunc
// gives for each line, on workers goroutines (at least one), each with a
// LineFunc of its own from newLine. A final newline does not start another
// line. Every Write to w holds the outputs of whole lines. It returns the
// first read or write error, or ctx's error when ctx ends first.
func Lines(ctx context.Context, r io.Reader, w io.Writer, workers int, newLine func() LineFunc) error {
	workers = max(workers, 1)
	work := make(chan *batch, workers*2)
	order := make(chan *batch, workers*4)
	// Every batch in flight sits in work, order, a worker or the writer.
	pool := make(batchPool, workers*6+4)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn := newLine()
			for b := range work {
				for _, l := range b.lines {
					s := strings.TrimSuffix(l.s, "\r")
					if l.tooLong || len(s) > MaxBytes {
						b.out = fn(b.out, "", ErrLineTooLong)
					} else {
						b.out = fn(b.out, s, nil)
					}
				}
				// fn may keep pointers into b.in until its next line; it
				// reads nothing of them before then.
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
		if werr == nil && len(b.out) > 0 {
			_, werr = w.Write(b.out)
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
	skipping := false // inside a line longer than MaxBytes
	b := pool.get()
	send := func() {
		if cap(b.out) == 0 {
			b.out = make([]byte, 0, len(b.lines)*320)
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
					b.lines = append(b.lines, line{tooLong: true})
					send()
				}
				continue
			}
			b.lines = append(b.lines, line{tooLong: true})
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
				b.lines = append(b.lines, line{s: chunk[:i]})
				chunk = chunk[min(i+1, len(chunk)):]
			}
		}
		if len(carry) > MaxBytes+2 {
			skipping = true
			carry = nil
		}
		if len(b.lines) > 0 {
			send()
		}
	}
	return nil
}
