package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/git"
	"github.com/flakegate/flakegate/internal/termsafe"
	"github.com/spf13/cobra"
)

// FreezeGrantOptions are the inputs of `flakegate freeze grant`.
type FreezeGrantOptions struct {
	IO *IO

	Ledger string
	Record string // a file, or "-" for stdin
	Owner  string
	Runs   int
	// RunsSet is true when --runs was given; without it the run count is
	// freeze.expires_after_runs of the config at the record's base_sha.
	RunsSet bool
	// Config is the config's repo-relative path read for that policy.
	Config  string
	Replace bool
	By      string
	JSON    bool
	// AllowNewFlake grants a record whose flake_origin is "new".
	AllowNewFlake bool
}

// NewCmdFreezeGrant builds `flakegate freeze grant`.
// runF, when not nil, replaces the run step (tests of flag parsing).
func NewCmdFreezeGrant(ios *IO, runF func(*FreezeGrantOptions) error) *cobra.Command {
	opts := &FreezeGrantOptions{IO: ios}
	cmd := &cobra.Command{
		Use:   "grant --record FILE --owner NAME [--runs N]",
		Short: "Freeze the triple of a SCHEDULER record for N runs",
		Long: `grant classifies the record with the current decision table and refuses
anything but SCHEDULER (exit 1). It stores the record by its record_sha256,
writes the ledger entry and an audit event. A second freeze for the same
triple is refused unless --replace. A record whose flake probe never saw
base fail (flake_origin "new": the patch may have introduced the flake) is
refused (exit 1) unless --allow-new-flake.

Without --runs the run count is freeze.expires_after_runs of the config
(--config, default flakegate.yaml) at the record's base_sha, read from the
git repository of the current directory: the same policy the check used.
A base the repository does not have, or a config it cannot read, needs
--runs; a record without base_sha (not written by check) gets the default
of 20 runs, with a note.`,
		Args: noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			opts.Ledger = ledgerFlag(ios, c)
			opts.RunsSet = c.Flags().Changed("runs")
			if err := opts.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runFreezeGrant(c.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Record, "record", "", "the run record to freeze (`FILE`, - for stdin)")
	fl.StringVar(&opts.Owner, "owner", "", "the reviewer who answers for the freeze (required)")
	fl.IntVar(&opts.Runs, "runs", config.DefaultExpiresAfterRuns, fmt.Sprintf("runs the freeze lasts, 1 to %d (default: freeze.expires_after_runs of the config at the record's base_sha)", flakegate.MaxFreezeRuns))
	fl.StringVar(&opts.Config, "config", config.DefaultPath, "the config's `PATH` in the repository, read at the record's base_sha when --runs is not given")
	fl.BoolVar(&opts.Replace, "replace", false, "write over an existing freeze of the same triple")
	fl.StringVar(&opts.By, "by", "", "who grants, for the audit log (default $USER, else the owner)")
	fl.BoolVar(&opts.JSON, "json", false, "print the entry as JSON")
	fl.BoolVar(&opts.AllowNewFlake, "allow-new-flake", false, "grant a record whose flake_origin is \"new\" (base never failed the seed)")
	return cmd
}

func (opts *FreezeGrantOptions) validate() error {
	const op = "freeze grant"
	switch {
	case opts.Record == "":
		return &flakegate.Error{Code: flakegate.EINVALID, Op: op, Message: "no record given",
			Hint: "pass --record FILE, a run record flakegate check wrote"}
	case strings.TrimSpace(opts.Owner) == "":
		return &flakegate.Error{Code: flakegate.EINVALID, Op: op, Message: "the owner is empty",
			Hint: "name the reviewer who answers for the freeze: --owner NAME"}
	case opts.RunsSet && (opts.Runs < 1 || opts.Runs > flakegate.MaxFreezeRuns):
		return &flakegate.Error{Code: flakegate.EINVALID, Op: op,
			Message: fmt.Sprintf("runs is %d; a freeze lasts 1 to %d runs", opts.Runs, flakegate.MaxFreezeRuns),
			Hint:    fmt.Sprintf("pass --runs N with 1 <= N <= %d", flakegate.MaxFreezeRuns)}
	}
	return nil
}

func runFreezeGrant(ctx context.Context, opts *FreezeGrantOptions) error {
	ios := opts.IO
	raw, err := readRecord(ios, opts.Record)
	if err != nil {
		return err
	}
	if origin := flakegate.RecordFlakeOrigin(raw); flakegate.NotBaseFlake(origin) && !opts.AllowNewFlake {
		return &flakegate.Error{Code: flakegate.EREJECT, Op: "freeze grant",
			Message: fmt.Sprintf(`the record's flake_origin is %q: this base was never seen failing this seed, so the patch may have introduced the flake`, origin),
			Hint:    "fix the flake, or pass --allow-new-flake if you know it is not the patch's"}
	}
	runs := opts.Runs
	// Only a record that may be frozen needs its policy: the table refuses
	// the others first.
	if !opts.RunsSet && flakegate.ClassifyBytes(raw).Label == flakegate.Scheduler {
		if runs, err = baseFreezeRuns(ctx, ios, raw, opts.Config); err != nil {
			return err
		}
	}
	s, err := openLedger(ctx, ios, opts.Ledger)
	if err != nil {
		return err
	}
	defer s.Close()
	f, err := flakegate.GrantRecord(ctx, s, raw, opts.Owner, runs, opts.Replace, actor(ios, opts.By, opts.Owner), time.Now())
	if flakegate.ErrorCode(err) == flakegate.ECONFLICT {
		return &flakegate.Error{Code: flakegate.ECONFLICT, Err: err,
			Hint: "pass --replace to write the new freeze over it, or remove it with 'flakegate freeze revoke'"}
	}
	if err != nil {
		return err
	}
	if opts.JSON {
		return printJSON(ios.Out, f)
	}
	_, err = fmt.Fprintf(ios.Out, "froze %s for %d runs (owner %s, record %s)\n",
		termsafe.Line(f.Triple().String()), f.ExpiresAfterRuns, termsafe.Line(f.Owner), flakegate.ShortSHA(f.RecordSHA256))
	return err
}

// baseFreezeRuns reads freeze.expires_after_runs from the config at the
// record's base_sha in the current directory's repository.
func baseFreezeRuns(ctx context.Context, ios *IO, raw []byte, cfgPath string) (int, error) {
	fail := func(msg string, err error) error {
		return &flakegate.Error{Code: flakegate.EINVALID, Op: "freeze grant", Message: msg, Err: err,
			Hint: "pass --runs N, or run inside the repository whose base revision holds the config"}
	}
	var rec struct {
		BaseSHA string `json:"base_sha"`
	}
	if json.Unmarshal(raw, &rec) != nil || rec.BaseSHA == "" {
		fmt.Fprintf(ios.ErrOut, "note: the record names no base_sha; the freeze lasts the default %d runs (pass --runs N to choose)\n", config.DefaultExpiresAfterRuns)
		return config.DefaultExpiresAfterRuns, nil
	}
	clean, err := config.CleanRepoPath(cfgPath)
	if err != nil {
		return 0, fail("--config: "+err.Error(), nil)
	}
	b, err := (&git.Client{}).Show(ctx, rec.BaseSHA, clean)
	if err != nil {
		return 0, fail(fmt.Sprintf("no --runs, and %s at the record's base %s cannot be read", clean, flakegate.ShortSHA(rec.BaseSHA)), err)
	}
	cfg, err := config.Load(b, clean)
	if err != nil {
		return 0, err
	}
	return cfg.Freeze.ExpiresAfterRuns, nil
}

// readRecord reads the record file, or stdin for "-".
func readRecord(ios *IO, name string) ([]byte, error) {
	var raw []byte
	var err error
	if name == "-" {
		raw, err = readAllLimited(ios.In)
	} else {
		var f *os.File
		if f, err = os.Open(name); err == nil {
			raw, err = readAllLimited(f)
			f.Close()
		}
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, &flakegate.Error{Code: flakegate.EINVALID, Op: "freeze grant", Path: name, Message: "no such record file",
			Hint: "pass --record FILE naming a run record (flakegate check writes them under its --out folder)"}
	case err != nil:
		return nil, &flakegate.Error{Code: flakegate.EINVALID, Op: "freeze grant", Path: name, Message: "cannot read the record", Err: err}
	}
	return raw, nil
}

func readAllLimited(r io.Reader) ([]byte, error) {
	raw, err := io.ReadAll(io.LimitReader(r, flakegate.MaxRecordBytes+1))
	if err == nil && len(raw) > flakegate.MaxRecordBytes {
		err = fmt.Errorf("larger than %d bytes", flakegate.MaxRecordBytes)
	}
	return raw, err
}
