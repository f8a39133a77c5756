package cli

import (
	"context"
	"fmt"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/postgres"
	"github.com/spf13/cobra"
)

// NewCmdDB builds `flakegate db`, the commands for a shared PostgreSQL
// ledger.
func NewCmdDB(ios *IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "db",
		Short: "Manage a shared PostgreSQL ledger",
		Args:  noArgs,
	}
	cmd.AddCommand(NewCmdDBMigrate(ios, nil))
	return cmd
}

// DBMigrateOptions are the inputs of `flakegate db migrate`.
type DBMigrateOptions struct {
	IO     *IO
	Ledger string
}

// NewCmdDBMigrate builds `flakegate db migrate`.
// runF, when not nil, replaces the run step (tests of flag parsing).
func NewCmdDBMigrate(ios *IO, runF func(*DBMigrateOptions) error) *cobra.Command {
	opts := &DBMigrateOptions{IO: ios}
	cmd := &cobra.Command{
		Use:   "migrate [--ledger postgres://...]",
		Short: "Create or upgrade the flakegate schema in a PostgreSQL database",
		Long: `Creates the flakegate schema in the database named by --ledger (or
FLAKEGATE_LEDGER), or upgrades it to the version this flakegate knows, and prints
the schema version. Safe to run again and from many runners at once. The role
needs CREATE on the database; runners that only check and skip do not.

A database whose schema is newer than this flakegate is refused (exit 3).`,
		Args: noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if opts.Ledger == "" {
				opts.Ledger = ios.Getenv("FLAKEGATE_LEDGER")
			}
			if runF != nil {
				return runF(opts)
			}
			return runDBMigrate(c.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Ledger, "ledger", "", "the database: postgres://USER:PASSWORD@HOST:PORT/DATABASE (default $FLAKEGATE_LEDGER)")
	return cmd
}

func runDBMigrate(ctx context.Context, opts *DBMigrateOptions) error {
	const op = "db migrate"
	switch {
	case opts.Ledger == "":
		return &flakegate.Error{Code: flakegate.EINVALID, Op: op, Message: "no database named",
			Hint: "pass --ledger postgres://USER:PASSWORD@HOST:PORT/DATABASE or set FLAKEGATE_LEDGER"}
	case !postgres.IsDSN(opts.Ledger):
		return &flakegate.Error{Code: flakegate.EINVALID, Op: op, Path: postgres.Redact(opts.Ledger),
			Message: "not a PostgreSQL DSN; a folder ledger needs no migration",
			Hint:    "pass --ledger postgres://USER:PASSWORD@HOST:PORT/DATABASE"}
	}
	before, after, err := postgres.MigrateVersions(ctx, opts.Ledger)
	if err != nil {
		return err
	}
	what := "up to date"
	if before != after {
		what = fmt.Sprintf("migrated from %d", before)
	}
	_, err = fmt.Fprintf(opts.IO.Out, "%s: schema version %d (%s)\n", postgres.Redact(opts.Ledger), after, what)
	return err
}
