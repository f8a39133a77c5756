package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/internal/termsafe"
	"github.com/flakegate/flakegate/transcript"
	"github.com/spf13/cobra"
)

// VerifyOptions are the inputs of `flakegate verify`.
type VerifyOptions struct {
	IO     *IO
	Record string
}

// NewCmdVerify builds `flakegate verify`.
// runF, when not nil, replaces the run step (tests of flag parsing).
func NewCmdVerify(ios *IO, runF func(*VerifyOptions) error) *cobra.Command {
	opts := &VerifyOptions{IO: ios}
	return &cobra.Command{
		Use:   "verify RECORD",
		Short: "Check a run record against the transcript it was written from",
		Long: `Reads a run record written by flakegate check and the transcript it names
(transcript_path, relative to the record's folder unless absolute), and checks
that the transcript's sha256 is the record's transcript_sha256, that its lines
are an unbroken sha256 chain, that the retry cap was written before the first
attempt and equals the record's, that the record's attempts, candidate_result,
retry_results and base_seed_result are what the transcript saw, and that the
transcript is complete.

Prints "ok", or each difference on its own line. Exit status: 0 ok, 1 the record
and its transcript differ, 2 a file cannot be read or is not a run record.`,
		Example: "  flakegate verify .flakegate/out/records/3f2a.json",
		Args: func(c *cobra.Command, args []string) error {
			if len(args) != 1 {
				return &flakegate.Error{Code: flakegate.EINVALID, Op: "verify",
					Message: fmt.Sprintf("want one record file, got %d arguments", len(args)), Hint: "flakegate verify RECORD"}
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			opts.Record = args[0]
			if runF != nil {
				return runF(opts)
			}
			return runVerify(opts)
		},
	}
}

func runVerify(opts *VerifyOptions) error {
	unreadable := func(path, msg string, err error) error {
		return &flakegate.Error{Code: flakegate.EINVALID, Op: "verify", Path: path, Message: msg, Err: err,
			Hint: "pass a record flakegate check wrote (the .json files in its --out folder), beside its transcripts/"}
	}
	raw, err := os.ReadFile(opts.Record)
	if err != nil {
		return unreadable(opts.Record, "cannot read the record", unwrapPathError(err))
	}
	var rec flakegate.RunRecord
	if err := json.Unmarshal(raw, &rec); err != nil {
		return unreadable(opts.Record, "not a run record", err)
	}
	if rec.TranscriptPath == "" {
		return &flakegate.Error{Code: flakegate.EINVALID, Op: "verify", Path: opts.Record,
			Message: "the record names no transcript (transcript_path)", Hint: "verify reads records written by flakegate check"}
	}
	tpath := rec.TranscriptPath
	if !filepath.IsAbs(tpath) {
		tpath = filepath.Join(filepath.Dir(opts.Record), tpath)
	}
	traw, err := os.ReadFile(tpath)
	if err != nil {
		return unreadable(tpath, "cannot read the record's transcript", unwrapPathError(err))
	}

	var diffs []string
	sum := sha256.Sum256(traw)
	switch got := hex.EncodeToString(sum[:]); {
	case rec.TranscriptSHA256 == "":
		diffs = append(diffs, "the record has no transcript_sha256")
	case rec.TranscriptSHA256 != got:
		diffs = append(diffs, fmt.Sprintf("transcript_sha256 is %s in the record, but %s hashes to %s: the transcript changed after the record was written", rec.TranscriptSHA256, tpath, got))
	}
	diffs = append(diffs, transcript.Verify(raw, traw)...)

	if len(diffs) == 0 {
		_, err := fmt.Fprintln(opts.IO.Out, "ok")
		return err
	}
	for _, d := range diffs {
		// A difference may quote the transcript: the attempt's output.
		if _, err := fmt.Fprintln(opts.IO.Out, termsafe.Line(d)); err != nil {
			return err
		}
	}
	return &ExitError{Code: ExitReject}
}
