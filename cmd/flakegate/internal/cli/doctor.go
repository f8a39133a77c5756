package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/flakegate/flakegate/attempt/sandbox"
	"github.com/flakegate/flakegate/cmd/flakegate/internal/store"
	"github.com/flakegate/flakegate/doctor"
	"github.com/flakegate/flakegate/internal/termsafe"
	"github.com/flakegate/flakegate/postgres"
	"github.com/spf13/cobra"
)

// DoctorOptions are the inputs of `flakegate doctor`.
type DoctorOptions struct {
	IO *IO

	Base, Config string
	// Ledger is --ledger, else $FLAKEGATE_LEDGER, as for check.
	Ledger string
}

// NewCmdDoctor says what a check would meet on this machine.
// runF, when not nil, replaces the run step (tests of flag parsing).
func NewCmdDoctor(ios *IO, runF func(*DoctorOptions) error) *cobra.Command {
	opts := &DoctorOptions{IO: ios}
	cmd := &cobra.Command{
		Use:   "doctor [--base REV] [--ledger DIR|postgres://...]",
		Short: "Say what a check would meet here: config, bwrap, sandbox level, toolchains, prepare, env, store",
		Long: `doctor looks at what a check on this machine would meet, without running
one (only the base's prepare, when the config has one), and prints one line per finding, each ok, warn or fail:

  config       flakegate.yaml at --base (default HEAD), loaded as check loads it
  bwrap        found on PATH, and its version (else the apt-get line that installs it)
  sandbox      the level the check's own probe reaches here, and each reason it
               does not reach more (no cgroup, no overlay, AppArmor's restriction
               of unprivileged user namespaces)
  toolchain    each program the config's run and prepare commands name (argv[0],
               and python, node, go... behind env and sh -c), looked up on your
               PATH (never started there: the config may be a patch's) and asked
               its version inside the sandbox the check builds: a warning when
               the two paths differ
  prepare      each prepare, run once on the base tree in the check's sandbox
               (its layer is kept: a check of that base reuses it); a failed
               one is a fail with its reason
  run          each property's program as the attempt finds it (in the base
               tree, in the tree the prepare made, or in the sandbox), and for
               pytest whether that interpreter, inside the sandbox, has pytest
               and Hypothesis and is the one the prepare gets
  sandbox.env  names the config passes that are unset here
  store        the ledger --ledger or $FLAKEGATE_LEDGER names (default the
               embedded one): reachable, writable, its schema version

Exit status: 0 nothing failed (warnings allowed), 1 a line says fail,
2 usage error (a bad flag, a --base that does not resolve).`,
		Args: noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if opts.Ledger == "" {
				opts.Ledger = ios.Getenv("FLAKEGATE_LEDGER")
			}
			if runF != nil {
				return runF(opts)
			}
			return runDoctor(c.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Base, "base", "", "revision whose config is read (default HEAD)")
	fl.StringVar(&opts.Config, "config", "flakegate.yaml", "config path in the repository, read at --base")
	fl.StringVar(&opts.Ledger, "ledger", "", "ledger folder or postgres:// DSN (default $FLAKEGATE_LEDGER, else <git common dir>/flakegate)")
	return cmd
}

func runDoctor(ctx context.Context, opts *DoctorOptions) error {
	var secrets []string
	if postgres.IsDSN(opts.Ledger) {
		secrets = append(secrets, opts.Ledger)
	}
	rep, err := doctor.Doctor(ctx, doctor.Options{Dir: ".", Base: opts.Base, ConfigPath: opts.Config, Secrets: secrets,
		Env: opts.IO.environ(), NoOverlay: opts.IO.Getenv(sandbox.NoOverlayEnv) == "1"})
	if err != nil {
		return err
	}
	h := store.Status(ctx, opts.Ledger, rep.CommonDir)
	status := doctor.OK
	switch {
	case h.Fail:
		status = doctor.Fail
	case h.Warn:
		status = doctor.Warn
	}
	rep.Lines = append(rep.Lines, doctor.Line{Status: status, Topic: "store", Text: h.Text})
	counts := map[string]int{}
	for _, l := range rep.Lines {
		counts[l.Status]++
		text := l.Text
		for _, s := range secrets {
			text = strings.ReplaceAll(text, s, postgres.Redact(s)) // never the password
		}
		fmt.Fprintf(opts.IO.Out, "%-4s %s: %s\n", l.Status, l.Topic, termsafe.Line(text))
	}
	fmt.Fprintf(opts.IO.Out, "doctor: %d ok, %d warn, %d fail\n", counts[doctor.OK], counts[doctor.Warn], counts[doctor.Fail])
	if counts[doctor.Fail] > 0 {
		return &ExitError{Code: ExitReject}
	}
	return nil
}
