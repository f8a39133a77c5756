package cli

import (
	"context"
	"encoding/json"
	"io"
	"path"
	"path/filepath"
	"strings"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/cmd/flakegate/internal/store"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/git"
	"github.com/spf13/cobra"
)

// NewCmdFreeze is the freeze ledger: grant, list, revoke, consume, verify.
// Each subcommand is in its own file (freeze_*.go).
func NewCmdFreeze(ios *IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "freeze",
		Short: "Keep the freeze ledger: grant, list, revoke, consume and verify freezes",
		Long: `A freeze lets one SCHEDULER triple (property path, seed, fixture digest) be
skipped for a counted number of runs. Only a record that classifies SCHEDULER
may enter the ledger, with an owner and a run count.

The ledger is --ledger DIR|postgres://..., else $FLAKEGATE_LEDGER, else
<git common dir>/flakegate of the repository in the current directory.
A PostgreSQL ledger's rows are authenticated with the key in
$FLAKEGATE_LEDGER_KEY; without it nothing is granted and nothing skips.`,
		Args: noArgs,
		RunE: func(c *cobra.Command, args []string) error { return c.Help() },
	}
	addLedgerFlag(cmd)
	cmd.AddCommand(
		NewCmdFreezeGrant(ios, nil),
		NewCmdFreezeList(ios, nil),
		NewCmdFreezeRevoke(ios, nil),
		NewCmdFreezeConsume(ios, nil),
		NewCmdFreezeVerify(ios, nil),
	)
	return cmd
}

// addLedgerFlag gives cmd and its subcommands --ledger.
func addLedgerFlag(cmd *cobra.Command) {
	cmd.PersistentFlags().String("ledger", "", "ledger folder or postgres:// DSN (default $FLAKEGATE_LEDGER, else <git common dir>/flakegate)")
}

// ledgerFlag returns the --ledger of a freeze subcommand, else
// $FLAKEGATE_LEDGER; "" is the embedded store of the repository.
func ledgerFlag(ios *IO, c *cobra.Command) string {
	if f := c.Flags().Lookup("ledger"); f != nil && f.Value.String() != "" {
		return f.Value.String()
	}
	return ios.Getenv("FLAKEGATE_LEDGER")
}

// openLedger opens the store spec names (--ledger or $FLAKEGATE_LEDGER),
// or the embedded store of the current repository when spec is "".
func openLedger(ctx context.Context, ios *IO, spec string) (flakegate.Store, error) {
	if spec == "" {
		spec = ios.Getenv("FLAKEGATE_LEDGER")
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
	s, err := store.Open(ctx, spec, common)
	if err != nil {
		return nil, err
	}
	if err := store.UseKey(s, ios.Getenv(config.DefaultLedgerKeyEnv)); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// actor names who runs a command, for the audit log.
func actor(ios *IO, flag, fallback string) string {
	if s := strings.TrimSpace(flag); s != "" {
		return s
	}
	if u := ios.Getenv("USER"); u != "" {
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
