package cli

import (
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/check"
	"github.com/flakegate/flakegate/fleet"
	"github.com/flakegate/flakegate/postgres"
	"github.com/spf13/pflag"
)

// fleetFlags are the flags of `flakegate check` that split one check over
// many runners: --shard, and --join with its queue settings.
type fleetFlags struct {
	shard, checkID, runnerID string
	join                     bool
	lease                    time.Duration
	maxLeaseExpiries         int
}

func addFleetFlags(fl *pflag.FlagSet, f *fleetFlags) {
	fl.StringVar(&f.shard, "shard", "", "run only shard `I/N` of the triples (then merge the shard summaries with 'flakegate verdict')")
	fl.BoolVar(&f.join, "join", false, "work on the check --check-id together with other runners, through the PostgreSQL --ledger")
	fl.StringVar(&f.checkID, "check-id", "", "the `ID` of a check shared by runners (with --join), e.g. the CI pipeline id")
	fl.StringVar(&f.runnerID, "runner-id", "", "name of this runner in records and the queue (default $FLAKEGATE_RUNNER_ID, else <host name>-<pid>)")
	fl.DurationVar(&f.lease, "lease", fleet.DefaultLease, "with --join: a claimed triple is taken over by another runner when its lease is not renewed for this long")
	fl.IntVar(&f.maxLeaseExpiries, "max-lease-expiries", fleet.DefaultMaxLeaseExpiries, "with --join: label a triple INCOMPLETE once its lease has expired more than `K` times")
}

// apply sets the runner identity and the --shard and --join options of
// a check whose ledger is spec, refusing combinations that cannot work.
func (f *fleetFlags) apply(ios *IO, spec string, opts *check.Options) error {
	usage := func(msg, hint string) error {
		return &flakegate.Error{Code: flakegate.EINVALID, Op: "check", Message: msg, Hint: hint}
	}
	opts.Runner = runnerIdentity(ios, f.runnerID)
	if f.shard != "" {
		s, err := fleet.ParseShard(f.shard)
		if err != nil {
			return err
		}
		opts.Shard = &s
	}
	switch {
	case f.join && f.shard != "":
		return usage("--join and --shard exclude each other", "use --join with a PostgreSQL ledger (runners share the triples as they go), or --shard I/N with any store")
	case f.join && strings.TrimSpace(f.checkID) == "":
		return usage("--join needs --check-id ID", "pass an id every runner of this check shares, e.g. --check-id \"$GITHUB_RUN_ID-$GITHUB_RUN_ATTEMPT\"")
	case !f.join && f.checkID != "":
		return usage("--check-id needs --join", "add --join to work on the check with other runners")
	case f.join && !postgres.IsDSN(spec):
		return usage("--join needs a PostgreSQL ledger", "pass --ledger postgres://... (or set FLAKEGATE_LEDGER), or use --shard I/N with any store")
	case f.lease < 3*time.Second:
		return usage("--lease must be at least 3s", "a lease is renewed every third of its length; give it room, e.g. --lease 30s")
	case f.maxLeaseExpiries < 0:
		return usage("--max-lease-expiries must be 0 or more", "the default is 2")
	}
	if f.join {
		opts.Join = &fleet.JoinOptions{CheckID: strings.TrimSpace(f.checkID), Lease: f.lease, MaxLeaseExpiries: f.maxLeaseExpiries}
	}
	return nil
}

// runnerIdentity names this runner: --runner-id, else
// $FLAKEGATE_RUNNER_ID, else <host name>-<pid>.
func runnerIdentity(ios *IO, flag string) flakegate.Runner {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown-host"
	}
	id := strings.TrimSpace(flag)
	if id == "" {
		id = strings.TrimSpace(ios.Getenv("FLAKEGATE_RUNNER_ID"))
	}
	if id == "" {
		id = host + "-" + strconv.Itoa(os.Getpid())
	}
	return flakegate.Runner{ID: id, Host: host}
}
