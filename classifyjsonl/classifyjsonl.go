// Package classifyjsonl classifies a JSON-lines stream of run records on
// every core: one decision per input line, in input order, each from the
// decision table (flakegate.Classifier) and the stream split into batches
// by canonjson.Lines.
package classifyjsonl

import (
	"bytes"
	"context"
	"errors"
	"io"
	"runtime"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/canonjson"
)

// Run reads one record per line from r and writes one decision per line to
// w, in input order. A line that is not a JSON record (an empty one, one
// cut short, one longer than flakegate.MaxRecordBytes) still gets its
// INCOMPLETE decision from the table's first row; a final newline does not
// start another record. onLabel, if not nil, sees every label in order. It
// returns the first read or write error, or ctx's error; reject labels are
// results, not errors.
func Run(ctx context.Context, r io.Reader, w io.Writer, onLabel func(flakegate.Label)) error {
	if onLabel != nil {
		w = &labelWriter{w: w, onLabel: onLabel}
	}
	return canonjson.Lines(ctx, r, w, runtime.GOMAXPROCS(0), newLine)
}

// errEmptyLine is why an empty line is not a record.
var errEmptyLine = errors.New("empty line")

// newLine returns a LineFunc with a Classifier of its own.
func newLine() canonjson.LineFunc {
	var c flakegate.Classifier
	return func(out []byte, line string, err error) []byte {
		if err == nil && line == "" {
			err = errEmptyLine
		}
		var d flakegate.Decision
		if err != nil {
			d = flakegate.Classify(flakegate.UnreadableRecord(err))
		} else {
			d = c.Classify(line)
		}
		return append(d.Append(out), '\n')
	}
}

// labelWriter calls onLabel with the label of each decision line written
// through it; canonjson.Lines writes whole lines only.
type labelWriter struct {
	w       io.Writer
	onLabel func(flakegate.Label)
}

func (lw *labelWriter) Write(p []byte) (int, error) {
	const prefix = `{"label":"`
	for rest := p; len(rest) > 0; {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		if label, ok := bytes.CutPrefix(line, []byte(prefix)); ok {
			if j := bytes.IndexByte(label, '"'); j >= 0 {
				lw.onLabel(flakegate.Label(label[:j]))
			}
		}
	}
	return lw.w.Write(p)
}
