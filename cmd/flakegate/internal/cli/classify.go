package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/classifyjsonl"
	"github.com/spf13/cobra"
)

// ClassifyOptions are the inputs of `flakegate classify`.
type ClassifyOptions struct {
	IO        *IO
	Files     []string
	Gate      bool
	JSONL     bool
	SelfCheck bool
}

// NewCmdClassify builds `flakegate classify`.
// runF, when not nil, replaces the run step (tests of flag parsing).
func NewCmdClassify(ios *IO, runF func(*ClassifyOptions) error) *cobra.Command {
	opts := &ClassifyOptions{IO: ios}
	cmd := &cobra.Command{
		Use:   "classify [--gate] [--jsonl] [FILE ...|-]",
		Short: "Label run records with the decision table, one JSON decision per record",
		Long: `Reads run records (one JSON object per file, or one per line with --jsonl; "-" or
no file reads standard input) and prints one decision per record on stdout: label,
freeze, row, record_sha256 and the reason.

Exit status is 0 for every label, as in the spec's listing: read the label. With
--gate the exit status is 1 when any label is a reject (everything but PASS and
SCHEDULER). A file that cannot be read is exit 2.`,
		RunE: func(c *cobra.Command, args []string) error {
			opts.Files = args
			if opts.SelfCheck && (len(args) > 0 || opts.JSONL || opts.Gate) {
				return flakegate.Errorf(flakegate.EINVALID, "--self-check takes no files and no other flags")
			}
			if runF != nil {
				return runF(opts)
			}
			return runClassify(c.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Gate, "gate", false, "exit 1 when any label is a reject")
	cmd.Flags().BoolVar(&opts.JSONL, "jsonl", false, "read one record per line, write one decision per line")
	cmd.Flags().BoolVar(&opts.SelfCheck, "self-check", false, `classify the spec's examples and print "self-check ok"`)
	return cmd
}

func runClassify(ctx context.Context, opts *ClassifyOptions) error {
	out := opts.IO.Out
	if opts.SelfCheck {
		if err := flakegate.SelfCheck(); err != nil {
			return err
		}
		_, err := fmt.Fprintln(out, "self-check ok")
		return err
	}
	files := opts.Files
	if len(files) == 0 {
		files = []string{"-"}
	}
	// Refuse unreadable inputs before printing anything.
	for _, f := range files {
		if f == "-" {
			continue
		}
		fi, err := os.Stat(f)
		if err != nil {
			return &flakegate.Error{Code: flakegate.EINVALID, Op: "classify", Path: f, Message: "cannot read the record file", Err: unwrapPathError(err), Hint: "check the path"}
		}
		if fi.IsDir() {
			return &flakegate.Error{Code: flakegate.EINVALID, Op: "classify", Path: f, Message: "is a directory, want a record file", Hint: "pass the record files inside it, e.g. " + f + "/*.json"}
		}
	}
	rejected := false
	onLabel := func(l flakegate.Label) {
		if l.Reject() {
			rejected = true
		}
	}
	bw := bufio.NewWriter(out)
	for _, f := range files {
		if err := classifyFile(ctx, opts, f, bw, onLabel); err != nil {
			return err
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if opts.Gate && rejected {
		return &ExitError{Code: ExitReject}
	}
	return nil
}

func classifyFile(ctx context.Context, opts *ClassifyOptions, name string, w *bufio.Writer, onLabel func(flakegate.Label)) error {
	var r io.Reader = opts.IO.In
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return &flakegate.Error{Code: flakegate.EINVALID, Op: "classify", Path: name, Message: "cannot read the record file", Err: unwrapPathError(err)}
		}
		defer f.Close()
		r = f
	}
	if opts.JSONL {
		// Records are small and short-lived; a larger heap target trades a
		// few MB for far fewer collections on large streams.
		defer debug.SetGCPercent(debug.SetGCPercent(400))
		if err := classifyjsonl.Run(ctx, r, w, onLabel); err != nil {
			return &flakegate.Error{Code: flakegate.EINVALID, Op: "classify", Path: name, Message: "reading records failed", Err: err}
		}
		return nil
	}
	raw, err := io.ReadAll(io.LimitReader(r, flakegate.MaxRecordBytes+1))
	if err != nil {
		return &flakegate.Error{Code: flakegate.EINVALID, Op: "classify", Path: name, Message: "cannot read the record file", Err: unwrapPathError(err)}
	}
	d := flakegate.ClassifyBytes(raw)
	onLabel(d.Label)
	var b bytes.Buffer
	d.AppendJSON(&b)
	line := b.Bytes()
	file, _ := json.Marshal(name)
	line = append(line[:len(line)-1], `,"file":`...)
	line = append(line, file...)
	line = append(line, '}', '\n')
	_, err = w.Write(line)
	return err
}

// unwrapPathError drops the *os.PathError wrapper whose path the message
// names already.
func unwrapPathError(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}
