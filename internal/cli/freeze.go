package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/digest"
	"github.com/flakegate/flakegate/git"
	"github.com/flakegate/flakegate/internal/store"
	"github.com/spf13/cobra"
)

// NewCmdFreeze is the freeze ledger: grant, list, revoke, consume, verify.
func NewCmdFreeze(io *IO) *cobra.Command {
	var ledger string
	cmd := &cobra.Command{
		Use:   "freeze",
		Short: "Keep the freeze ledger: grant, list, revoke, consume and verify freezes",
		Long: `A freeze lets one SCHEDULER triple (property path, seed, fixture digest) be
skipped for a counted number of runs. Only a record that classifies SCHEDULER
may enter the ledger, with an owner and a run count.

The ledger is --ledger DIR|postgres://..., else $FLAKEGATE_LEDGER, else
<git common dir>/flakegate of the repository in the current directory.`,
		Args: noArgs,
		RunE: func(c *cobra.Command, args []string) error { return c.Help() },
	}
	cmd.PersistentFlags().StringVar(&ledger, "ledger", "", "ledger folder or postgres:// DSN (default $FLAKEGATE_LEDGER, else <git common dir>/flakegate)")
	cmd.AddCommand(
		newCmdFreezeGrant(io, &ledger),
		newCmdFreezeList(io, &ledger),
		newCmdFreezeRevoke(io, &ledger),
		newCmdFreezeConsume(io, &ledger),
		newCmdFreezeVerify(io, &ledger),
	)
	return cmd
}

// openLedger opens the store --ledger, $FLAKEGATE_LEDGER or the current
// repository names.
func openLedger(ctx context.Context, io *IO, ledger string) (flakegate.Store, error) {
	spec := ledger
	if spec == "" {
		spec = io.Getenv("FLAKEGATE_LEDGER")
	}
	common := ""
	if spec == "" {
		var err error
		if common, err = (&git.Client{}).CommonDir(ctx); err != nil {
			e := &flakegate.Error{Code: flakegate.EINVALID, Op: "open ledger",
				Message: "no ledger named, and the current directory is not in a git repository",
				Hint:    "run inside the repository, or pass --ledger DIR|postgres://... (or set FLAKEGATE_LEDGER)"}
			if flakegate.ErrorCode(err) != flakegate.EINVALID {
				e.Err = err // git itself failed: say how
			}
			return nil, e
		}
	}
	return store.Open(ctx, spec, common)
}

// actor names who runs a command, for the audit log.
func actor(io *IO, flag, fallback string) string {
	if s := strings.TrimSpace(flag); s != "" {
		return s
	}
	if u := io.Getenv("USER"); u != "" {
		return u
	}
	return fallback
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func shortSHA(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

func newCmdFreezeGrant(io *IO, ledger *string) *cobra.Command {
	var (
		record, owner, by, cfgPath string
		runs                       int
		replace, asJSON            bool
	)
	cmd := &cobra.Command{
		Use:   "grant --record FILE --owner NAME [--runs N]",
		Short: "Freeze the triple of a SCHEDULER record for N runs",
		Long: `grant classifies the record with the current decision table and refuses
anything but SCHEDULER (exit 1). It stores the record by its record_sha256,
writes the ledger entry and an audit event. A second freeze for the same
triple is refused unless --replace.

Without --runs the run count is freeze.expires_after_runs of the config
(--config, default flakegate.yaml) at the record's base_sha, read from the
git repository of the current directory: the same policy the check used.
A base the repository does not have, or a config it cannot read, needs
--runs; a record without base_sha (not written by check) gets the default
of 20 runs, with a note.`,
		Args: noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if record == "" {
				return &flakegate.Error{Code: flakegate.EINVALID, Op: "freeze grant", Message: "no record given",
					Hint: "pass --record FILE, a run record flakegate check wrote"}
			}
			raw, err := readRecord(io, record)
			if err != nil {
				return err
			}
			if !c.Flags().Changed("runs") {
				runs = config.DefaultExpiresAfterRuns
				// Only a record that may be frozen needs its policy: the
				// others are refused by the table first.
				if flakegate.ClassifyBytes(raw).Label == flakegate.Scheduler {
					if runs, err = baseFreezeRuns(c.Context(), io, raw, cfgPath); err != nil {
						return err
					}
				}
			}
			s, err := openLedger(c.Context(), io, *ledger)
			if err != nil {
				return err
			}
			defer s.Close()
			f, err := flakegate.GrantRecord(c.Context(), s, raw, owner, runs, replace, actor(io, by, owner), time.Now())
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(io.Out, f)
			}
			_, err = fmt.Fprintf(io.Out, "froze %s for %d runs (owner %s, record %s)\n",
				f.Triple(), f.ExpiresAfterRuns, f.Owner, shortSHA(f.RecordSHA256))
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&record, "record", "", "the run record to freeze (`FILE`, - for stdin)")
	fl.StringVar(&owner, "owner", "", "the reviewer who answers for the freeze (required)")
	fl.IntVar(&runs, "runs", 0, fmt.Sprintf("runs the freeze lasts, 1 to %d (default: freeze.expires_after_runs of the config at the record's base_sha)", flakegate.MaxFreezeRuns))
	fl.StringVar(&cfgPath, "config", config.DefaultPath, "the config's `PATH` in the repository, read at the record's base_sha when --runs is not given")
	fl.BoolVar(&replace, "replace", false, "write over an existing freeze of the same triple")
	fl.StringVar(&by, "by", "", "who grants, for the audit log (default $USER, else the owner)")
	fl.BoolVar(&asJSON, "json", false, "print the entry as JSON")
	return cmd
}

// baseFreezeRuns reads freeze.expires_after_runs from the config at the
// record's base_sha in the current directory's repository.
func baseFreezeRuns(ctx context.Context, io *IO, raw []byte, cfgPath string) (int, error) {
	fail := func(msg string, err error) error {
		return &flakegate.Error{Code: flakegate.EINVALID, Op: "freeze grant", Message: msg, Err: err,
			Hint: "pass --runs N, or run inside the repository whose base revision holds the config"}
	}
	var rec struct {
		BaseSHA string `json:"base_sha"`
	}
	if json.Unmarshal(raw, &rec) != nil || rec.BaseSHA == "" {
		fmt.Fprintf(io.ErrOut, "note: the record names no base_sha; the freeze lasts the default %d runs (pass --runs N to choose)\n", config.DefaultExpiresAfterRuns)
		return config.DefaultExpiresAfterRuns, nil
	}
	clean, err := config.CleanRepoPath(cfgPath)
	if err != nil {
		return 0, fail("--config: "+err.Error(), nil)
	}
	b, err := (&git.Client{}).Show(ctx, rec.BaseSHA, clean)
	if err != nil {
		return 0, fail(fmt.Sprintf("no --runs, and %s at the record's base %s cannot be read", clean, shortSHA(rec.BaseSHA)), err)
	}
	cfg, err := config.Load(b, clean)
	if err != nil {
		return 0, err
	}
	return cfg.Freeze.ExpiresAfterRuns, nil
}

// readRecord reads the record file, or stdin for "-".
func readRecord(io *IO, name string) ([]byte, error) {
	var raw []byte
	var err error
	if name == "-" {
		raw, err = readAllLimited(io.In)
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

func newCmdFreezeList(io *IO, ledger *string) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list [--json]",
		Short: "List the freezes, sorted by triple",
		Args:  noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			s, err := openLedger(c.Context(), io, *ledger)
			if err != nil {
				return err
			}
			defer s.Close()
			fs, err := s.ListFreezes(c.Context())
			if err != nil {
				return err
			}
			if asJSON {
				if fs == nil {
					fs = []flakegate.Freeze{}
				}
				return printJSON(io.Out, fs)
			}
			return printFreezes(io.Out, fs)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array of entries")
	return cmd
}

func printFreezes(w io.Writer, fs []flakegate.Freeze) error {
	if len(fs) == 0 {
		_, err := fmt.Fprintln(w, "no freezes")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PROPERTY\tSEED\tFIXTURE\tRUNS LEFT\tOWNER\tRECORD\tGRANTED")
	for _, f := range fs {
		prop := f.PropertyPath
		if f.Name != "" {
			prop += "::" + f.Name
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\n", prop, f.Seed.String(), shortSHA(f.FixtureSHA256),
			f.ExpiresAfterRuns, f.Owner, shortSHA(f.RecordSHA256), f.GrantedAt.UTC().Format(time.RFC3339))
	}
	return tw.Flush()
}

// tripleFlags are the flags that name one triple.
type tripleFlags struct {
	property, seed, fixture, name string
}

func (tf *tripleFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&tf.property, "property", "", "the property path, repository-relative (required)")
	fl.StringVar(&tf.seed, "seed", "", "the seed: an integer or a string of [A-Za-z0-9._:-] (required)")
	fl.StringVar(&tf.fixture, "fixture-sha256", "", "the fixture digest of the triple (required)")
	fl.StringVar(&tf.name, "name", "", "the test name of the triple (none when the config entry has no name)")
}

func (tf *tripleFlags) triple(op string) (flakegate.Triple, error) {
	bad := func(msg string) error {
		return &flakegate.Error{Code: flakegate.EINVALID, Op: op, Message: msg,
			Hint: "name the triple with --property P --seed S --fixture-sha256 H (see 'flakegate freeze list')"}
	}
	switch {
	case strings.TrimSpace(tf.property) == "":
		return flakegate.Triple{}, bad("--property is required")
	case tf.seed == "":
		return flakegate.Triple{}, bad("--seed is required")
	case tf.fixture == "":
		return flakegate.Triple{}, bad("--fixture-sha256 is required")
	}
	seed, err := flakegate.ParseSeed(tf.seed)
	if err != nil {
		return flakegate.Triple{}, bad(err.Error())
	}
	return flakegate.Triple{PropertyPath: path.Clean(filepath.ToSlash(tf.property)), Name: tf.name, Seed: seed, FixtureSHA256: tf.fixture}, nil
}

func newCmdFreezeRevoke(io *IO, ledger *string) *cobra.Command {
	var (
		tf         tripleFlags
		by, reason string
	)
	cmd := &cobra.Command{
		Use:   "revoke --property P --seed S --fixture-sha256 H --by NAME",
		Short: "Remove a freeze before it runs out",
		Args:  noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			t, err := tf.triple("freeze revoke")
			if err != nil {
				return err
			}
			if strings.TrimSpace(by) == "" {
				return &flakegate.Error{Code: flakegate.EINVALID, Op: "freeze revoke", Message: "--by is required",
					Hint: "name who revokes the freeze: --by NAME"}
			}
			s, err := openLedger(c.Context(), io, *ledger)
			if err != nil {
				return err
			}
			defer s.Close()
			if reason == "" {
				reason = "revoked by hand"
			}
			if err := s.Remove(c.Context(), t, flakegate.ActionRevoke, strings.TrimSpace(by), reason); err != nil {
				if flakegate.ErrorCode(err) == flakegate.ENOTFOUND {
					return &flakegate.Error{Code: flakegate.ENOTFOUND, Op: "freeze revoke", Message: err.Error(),
						Hint: "see 'flakegate freeze list' for the frozen triples"}
				}
				return err
			}
			_, err = fmt.Fprintf(io.Out, "revoked %s\n", t)
			return err
		},
	}
	tf.add(cmd)
	cmd.Flags().StringVar(&by, "by", "", "who revokes, for the audit log (required)")
	cmd.Flags().StringVar(&reason, "reason", "", "why, for the audit log")
	return cmd
}

func newCmdFreezeConsume(io *IO, ledger *string) *cobra.Command {
	var (
		tf          tripleFlags
		propertySHA string
		by          string
		asJSON      bool
	)
	cmd := &cobra.Command{
		Use:   "consume --property P --seed S --fixture-sha256 H [--property-sha256 H2]",
		Short: "Count one skip of a frozen triple: exit 0 to skip it, 1 to run it",
		Long: `consume is for those who drive their own runner. It exits 0 when the
triple may be skipped (the skip is counted), 1 when it must run. A freeze
that fails a check (its record changed, or the property file did) is voided.

Without --property-sha256 the property file is digested in the working tree
of the repository in the current directory.`,
		Args: noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			t, err := tf.triple("freeze consume")
			if err != nil {
				return err
			}
			if propertySHA == "" {
				if propertySHA, err = propertyDigest(c.Context(), t.PropertyPath); err != nil {
					return err
				}
			}
			s, err := openLedger(c.Context(), io, *ledger)
			if err != nil {
				return err
			}
			defer s.Close()
			d, err := flakegate.Skip(c.Context(), s, t, propertySHA, actor(io, by, "flakegate freeze consume"))
			if err != nil {
				return err
			}
			if asJSON {
				err = printJSON(io.Out, d)
			} else if d.Skipped {
				_, err = fmt.Fprintf(io.Out, "skip %s: %s\n", t, d.Reason)
			} else {
				_, err = fmt.Fprintf(io.Out, "run %s: %s\n", t, d.Reason)
			}
			if err != nil {
				return err
			}
			if !d.Skipped {
				return &ExitError{Code: ExitReject}
			}
			return nil
		},
	}
	tf.add(cmd)
	fl := cmd.Flags()
	fl.StringVar(&propertySHA, "property-sha256", "", "the property file's digest now (default: digest it in the working tree)")
	fl.StringVar(&by, "by", "", "who skips, for the audit log (default $USER)")
	fl.BoolVar(&asJSON, "json", false, "print the decision as JSON")
	return cmd
}

// propertyDigest digests the property file at the top of the current
// repository's working tree (the current directory outside a repository).
func propertyDigest(ctx context.Context, property string) (string, error) {
	root, err := (&git.Client{}).TopLevel(ctx)
	if err != nil {
		root = "."
	}
	sha, err := digest.Path(ctx, filepath.Join(root, filepath.FromSlash(property)))
	if err != nil {
		return "", &flakegate.Error{Code: flakegate.EINVALID, Op: "freeze consume", Message: "cannot digest the property file", Err: err,
			Hint: "run in the repository, or pass --property-sha256 H"}
	}
	return sha, nil
}

func newCmdFreezeVerify(io *IO, ledger *string) *cobra.Command {
	var (
		by     string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "verify [--json]",
		Short: "Check every freeze and the audit log; void what fails (exit 1)",
		Long: `verify checks that every entry's stored record exists, still hashes to its
record_sha256 and still classifies SCHEDULER, that the audit log's chain is
intact, and that replaying the log gives exactly the ledger (an entry edited
by hand differs). It voids every freeze that fails, with an audit event, and
exits 1 when anything was wrong.`,
		Args: noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			s, err := openLedger(c.Context(), io, *ledger)
			if err != nil {
				return err
			}
			defer s.Close()
			rep, err := flakegate.VerifyLedger(c.Context(), s, actor(io, by, "flakegate freeze verify"))
			if err != nil {
				return err
			}
			if asJSON {
				err = printJSON(io.Out, rep)
			} else {
				err = printVerify(io.Out, rep)
			}
			if err != nil {
				return err
			}
			if !rep.OK() {
				return &ExitError{Code: ExitReject}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&by, "by", "", "who verifies, for the audit log (default $USER)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}

func printVerify(w io.Writer, rep flakegate.VerifyReport) error {
	for _, p := range rep.Problems {
		switch {
		case p.Triple == nil:
			fmt.Fprintf(w, "broken: %s\n", p.Reason)
			fmt.Fprintln(w, "  (this stays until the audit log is restored from a backup; until then verify voids every freeze)")
		case p.Voided:
			fmt.Fprintf(w, "void %s: %s\n", p.Triple, p.Reason)
		default:
			fmt.Fprintf(w, "problem %s: %s\n", p.Triple, p.Reason)
		}
	}
	verdict := "ok"
	if !rep.OK() {
		verdict = fmt.Sprintf("%d problem(s)", len(rep.Problems))
	}
	_, err := fmt.Fprintf(w, "%s: %d freezes, %d audit lines checked\n", verdict, rep.Freezes, rep.AuditLines)
	return err
}
