package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/attempt/sandbox"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/internal/termsafe"
	"github.com/flakegate/flakegate/postgres"
	"github.com/flakegate/flakegate/replay"
	"github.com/flakegate/flakegate/template"
	"github.com/spf13/cobra"
)

// ReplayOptions are the inputs of `flakegate replay`.
type ReplayOptions struct {
	IO                  *IO
	ctx                 context.Context
	Workdir             string
	Seed                string
	ExpectFixtureSHA256 string
	Fixture             string
	Property            string
	Samples             int
	Timeout             time.Duration
	Argv                []string

	// The --repo mode: a checkout of Rev of its own, the command of the
	// config at ConfigRev (Rev when empty).
	Repo, Rev, ConfigRev, Config, Name string
	// Suite is the path of a suites: entry: --property and --name are
	// one of its tests, and the replay runs that test's batch.
	Suite string
	// Sandbox is auto (= bwrap), bwrap or none; Env names more variables
	// to pass; Network keeps the network inside the sandbox.
	Sandbox string
	Env     []string
	Network bool
}

// NewCmdReplay builds `flakegate replay`.
// runF, when not nil, replaces the run step (tests of flag parsing).
func NewCmdReplay(ios *IO, runF func(*ReplayOptions) error) *cobra.Command {
	opts := &ReplayOptions{IO: ios}
	cmd := &cobra.Command{
		DisableFlagsInUseLine: true,
		Use: "replay --repo DIR --rev SHA [--config-rev SHA] [--config PATH] [--suite PATH] --property P [--name N] --seed S\n" +
			"  flakegate replay --workdir DIR --seed S --expect-fixture-sha256 H [--fixture PATH] [--property P] [--samples N] [--timeout D] [--sandbox MODE] [--env NAME] -- CMD [ARG ...]",
		Short: "Run one seed once in a clean checkout, after checking the fixture digest",
		Long: `With --repo, makes a temporary checkout of the commit --rev of the repository DIR
(git worktree add --detach, in a temporary folder), reads flakegate.yaml (or --config)
at --config-rev, finds the property --property (and --name), runs its command once
for the seed with the entry's wall budget, prints pass or fail, and removes the
checkout. With --suite, the property is one test of that suites: entry (--property
its file, --name its name, as its record has them): the replay lists the suite on a
checkout of --config-rev as check does, runs the whole batch the check ran the test
in (its Go package, or the pytest suite, in the order of the seed) on the base's test
files over --rev's code, and prints and exits with that test's own result. The
command comes from --config-rev, not from --rev: check writes its
reproduce lines with the base revision there, so the replay runs the command the
gate ran; without --config-rev the config of --rev itself is used. Nothing else
resets that checkout, so the line reproduces as long as the commits exist.

With --workdir, runs CMD once in DIR, with no shell and no retry, after checking that the fixture
(--fixture, a file or folder relative to DIR) still has the digest H. The command's
arguments may hold the placeholders {path} (--property), {seed}, {samples}
(--samples) and {fixture}; they are filled in before the command runs. The
command's output goes to stdout between an opening and a closing line, each
of its lines marked "  │ ", with escape sequences, control characters and
invalid UTF-8 shown as text (\x1b[8m); one line on stderr says what happened,
after all of the output.

Exit status: 0 the command passed (exit 0), 1 it failed (exit 1), 3 the replay is
incomplete: the fixture is missing or its digest differs (the command does not
run), no --fixture was given, the command could not start, was killed, timed out
(--timeout, or an interrupt), exited with another code, or printed a no-test
marker ("no tests ran"). 2 is a usage error. Map 0 to pass and 1 to fail; treat
anything else as incomplete, never as a result.`,
		Example: `  flakegate replay --repo . --rev 4f2a9c1e --config-rev origin/main \
    --property tests/props/test_retry_budget.py --seed 1402

  flakegate replay --workdir ../base --seed 1402 \
    --expect-fixture-sha256 "$FIXTURE_SHA" --fixture tests/fixtures/retry \
    --property tests/props/test_retry_budget.py --timeout 60s \
    -- pytest -q {path} --hypothesis-seed={seed}`,
		RunE: func(c *cobra.Command, args []string) error {
			opts.Argv = args
			opts.ctx = c.Context()
			if err := opts.checkFlags(); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runReplay(opts)
		},
	}
	f := cmd.Flags()
	f.SetInterspersed(false) // everything from CMD on belongs to CMD
	f.StringVar(&opts.Workdir, "workdir", "", "run the command in `DIR` (a clean checkout of the base)")
	f.StringVar(&opts.Seed, "seed", "", "the seed `S` to replay: an integer or a string of [A-Za-z0-9._:-]")
	f.StringVar(&opts.ExpectFixtureSHA256, "expect-fixture-sha256", "", "the fixture digest `H` the replay must see (as flakegate digest prints it)")
	f.StringVar(&opts.Fixture, "fixture", "", "the fixture file or folder `PATH`, relative to DIR; {fixture}")
	f.StringVar(&opts.Property, "property", "", "the property path `P`, relative to DIR; {path}")
	f.IntVar(&opts.Samples, "samples", 0, "the sample count `N`; {samples}")
	f.DurationVar(&opts.Timeout, "timeout", 0, "kill the command and its children after `D` (0: no limit)")
	f.StringVar(&opts.Repo, "repo", "", "replay in a temporary checkout of the repository `DIR` (with --rev)")
	f.StringVar(&opts.Rev, "rev", "", "the commit `SHA` to check out (with --repo)")
	f.StringVar(&opts.ConfigRev, "config-rev", "", "read the config at `REV` (default --rev; check passes the base)")
	f.StringVar(&opts.Config, "config", "", "the config's `PATH` in the repository (default flakegate.yaml)")
	f.StringVar(&opts.Name, "name", "", "the test `NAME` of the property's config entry")
	f.StringVar(&opts.Suite, "suite", "", "replay a test of the suites: entry at `PATH` (with --property FILE --name NAME): its whole batch")
	f.StringVar(&opts.Sandbox, "sandbox", "auto", "run the command in a bubblewrap sandbox: auto (= bwrap), bwrap or none")
	f.StringArrayVar(&opts.Env, "env", nil, "pass the variable `NAME` from flakegate's environment (repeatable)")
	f.BoolVar(&opts.Network, "network", false, "keep the network inside the sandbox")
	return cmd
}

func runReplay(opts *ReplayOptions) error {
	ctx := opts.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	if opts.repoMode() {
		return runReplayRepo(ctx, opts)
	}
	argv, err := opts.validate()
	if err != nil {
		return err
	}

	// The fixture pin comes first (replay.New): a replay on a fixture
	// the base does not own is no evidence about the base, so the command
	// does not run.
	if opts.Fixture == "" {
		return replayIncomplete(opts, "no --fixture given, so the expected fixture digest cannot be checked")
	}
	return replayRun(ctx, opts, replay.Options{Dir: opts.Workdir, Argv: argv, WallBudget: opts.Timeout, Sandbox: opts.sandbox(nil),
		Fixture: filepath.ToSlash(opts.Fixture), FixtureSHA256: opts.ExpectFixtureSHA256}, nil)
}

// replayRun checks the fixture and builds the replay's sandbox
// (replay.New: a fixture that is not the expected one makes the
// replay incomplete, exit 3; a sandbox it cannot build is an error, exit
// 2), runs the command once between the output's opening and closing
// lines and says what it did. before, if set, runs after the command and
// before the outcome line.
func replayRun(ctx context.Context, opts *ReplayOptions, ro replay.Options, before func()) error {
	ro.Env = opts.IO.environ()
	ro.NoOverlay = opts.IO.Getenv(sandbox.NoOverlayEnv) == "1"
	if spec := opts.IO.Getenv("FLAKEGATE_LEDGER"); spec != "" && !postgres.IsDSN(spec) {
		ro.LedgerPath = spec
	}
	r, err := replay.New(ctx, ro)
	var inc *replay.Incomplete
	if errors.As(err, &inc) {
		return replayIncomplete(opts, inc.Reason)
	}
	if err != nil {
		return err
	}
	defer r.Close()
	if opts.repoMode() && ro.Fixture != "" {
		fmt.Fprintf(opts.IO.ErrOut, "replay: fixture %s sha256 %s\n", termsafe.Line(ro.Fixture), r.FixtureSHA256())
	}
	if why := r.Shortfall(); why != "" { // say it when the machine gives less than the full sandbox
		fmt.Fprintf(opts.IO.ErrOut, "sandbox: %s\n", termsafe.Line(why))
	}
	ro.Argv = r.Argv() // a suite's batch is known once the suite is listed
	out := startOutput(opts.IO.Out, ro.Argv)
	o := r.Run(ctx, out)
	endOutput(opts.IO.Out, out, o)
	for _, n := range r.Notes() { // the Go cache filled, the prepared layer used
		fmt.Fprintf(opts.IO.ErrOut, "replay: %s\n", termsafe.Line(n))
	}
	if before != nil {
		before()
	}
	if j := r.Judged(); j != "" {
		return replayJudged(opts, j, o)
	}
	return replayOutcome(opts, ro.Argv, o)
}

// replayJudged says what a suite's batch said of the replayed test
// (judged) and maps it to the exit status, as replayOutcome does.
func replayJudged(opts *ReplayOptions, judged string, o attempt.Outcome) error {
	took := strconv.FormatFloat(o.Wall.Seconds(), 'f', 2, 64) + "s"
	if o.Result == attempt.Pass {
		fmt.Fprintf(opts.IO.ErrOut, "replay: pass: %s, its own time %s\n", termsafe.Line(judged), took)
		return nil
	}
	fmt.Fprintf(opts.IO.ErrOut, "replay: fail: %s, its own time %s\n", termsafe.Line(judged), took)
	return &ExitError{Code: ExitReject}
}

// outputPrefix marks every line of the command's output that replay
// shows, so a line at column 0 is always flakegate's own.
const outputPrefix = "  │ "

// startOutput writes the line that opens the command's output on w and
// returns the writer the output goes through: rendered by termsafe (no
// escape sequence, C1 control, bare CR or invalid UTF-8 reaches the
// terminal) and marked line by line with outputPrefix.
func startOutput(w io.Writer, argv []string) *termsafe.Writer {
	fmt.Fprintf(w, "── output of %s ──\n", termsafe.Line(strings.Join(argv, " ")))
	return termsafe.NewWriter(w, outputPrefix)
}

// endOutput ends the command's output: its unfinished last line, then the
// closing line. attempt.Run has returned, so nothing writes to out any more
// and the outcome line that follows comes after all of the output.
func endOutput(w io.Writer, out *termsafe.Writer, o attempt.Outcome) {
	out.Close() //nolint:errcheck // the console's error must not change the result
	switch n := out.Lines(); {
	case o.OutputBytes == 0:
		fmt.Fprintln(w, "── end of output: none ──")
	case n == 1:
		fmt.Fprintf(w, "── end of output: 1 line, %d bytes ──\n", o.OutputBytes)
	default:
		fmt.Fprintf(w, "── end of output: %d lines, %d bytes ──\n", n, o.OutputBytes)
	}
}

// replayOutcome says what one replay did and maps it to the exit status:
// 0 pass, 1 fail, 3 anything else (never a result).
func replayOutcome(opts *ReplayOptions, argv []string, o attempt.Outcome) error {
	took := strconv.FormatFloat(o.Wall.Seconds(), 'f', 2, 64) + "s"
	switch o.Result {
	case attempt.Pass:
		fmt.Fprintf(opts.IO.ErrOut, "replay: pass: %s exited 0 after %s\n", termsafe.Line(argv[0]), took)
		return nil
	case attempt.Fail:
		fmt.Fprintf(opts.IO.ErrOut, "replay: fail: %s exited 1 after %s\n", termsafe.Line(argv[0]), took)
		return &ExitError{Code: ExitReject}
	case attempt.Timeout:
		return replayIncomplete(opts, fmt.Sprintf("%s was killed after %s: %s", argv[0], took, o.Reason))
	default:
		return replayIncomplete(opts, fmt.Sprintf("%s after %s: %s", argv[0], took, o.Reason))
	}
}

// sandbox is the sandbox block of the replay: the flags' (--sandbox,
// --env, --network) over the config's block cs (--repo; nil without).
// The config's block is the one the check ran under, but its mode: none
// is not followed: the config may be the patch's own (--config-rev is
// not given, or names the patch), and it would run a program of the
// checkout on the host. Only an explicit --sandbox none turns the
// sandbox off, on the user's own say (check writes it into the
// reproduce lines of a check that ran without one).
func (opts *ReplayOptions) sandbox(cs *config.Sandbox) config.Sandbox {
	sb := config.Sandbox{Mode: opts.Sandbox, Limits: config.DefaultLimits()}
	if cs != nil {
		sb = *cs
		sb.Mode = config.SandboxBwrap
		if opts.Sandbox == config.SandboxNone {
			sb.Mode = config.SandboxNone
		}
	}
	if sb.Mode == "" || sb.Mode == config.SandboxAuto {
		sb.Mode = config.SandboxBwrap
	}
	sb.Env = append(append([]string(nil), opts.Env...), sb.Env...)
	sb.Network = sb.Network || opts.Network
	return sb
}

// replayIncomplete says why the replay is no result. why may quote the
// command's output (a reason of attempt.Run), so it is rendered on one line.
func replayIncomplete(opts *ReplayOptions, why string) error {
	fmt.Fprintf(opts.IO.ErrOut, "replay: incomplete: %s\n", termsafe.Line(why))
	return &ExitError{Code: ExitInternal}
}

func replayUsage(format string, args ...any) error {
	return &flakegate.Error{Code: flakegate.EINVALID, Op: "replay", Message: fmt.Sprintf(format, args...), Hint: "run 'flakegate replay --help'"}
}

// checkFlags refuses missing or out-of-range flags, before anything is
// read from disk.
func (opts *ReplayOptions) checkFlags() error {
	switch opts.Sandbox {
	case "", config.SandboxAuto, config.SandboxBwrap, config.SandboxNone:
	default:
		return replayUsage("--sandbox %q: want auto, bwrap or none", opts.Sandbox)
	}
	for _, name := range opts.Env {
		if config.SecretName(name) {
			return replayUsage("--env %s: flakegate never passes a variable that may hold a secret (FLAKEGATE_*, PG*, tokens, passwords)", name)
		}
	}
	if opts.repoMode() {
		return opts.checkRepoFlags()
	}
	if opts.Suite != "" {
		return replayUsage("--suite goes with --repo and --rev: the config names the suite's tests")
	}
	for _, req := range []struct{ flag, val string }{
		{"--workdir", opts.Workdir}, {"--seed", opts.Seed}, {"--expect-fixture-sha256", opts.ExpectFixtureSHA256},
	} {
		if req.val == "" {
			return replayUsage("%s is required", req.flag)
		}
	}
	if opts.Samples < 0 {
		return replayUsage("--samples %d: want a count >= 0", opts.Samples)
	}
	if opts.Timeout < 0 {
		return replayUsage("--timeout %s: want a duration >= 0", opts.Timeout)
	}
	if len(opts.Argv) == 0 {
		return replayUsage("no command given: put it after --")
	}
	return nil
}

// validate checks the flags and the work folder and returns the expanded
// command.
func (opts *ReplayOptions) validate() ([]string, error) {
	usage := replayUsage
	if err := opts.checkFlags(); err != nil {
		return nil, err
	}
	if fi, err := os.Stat(opts.Workdir); err != nil || !fi.IsDir() {
		msg := "not a folder"
		var pe *os.PathError
		if errors.As(err, &pe) {
			msg = pe.Err.Error()
		} else if err != nil {
			msg = err.Error()
		}
		return nil, &flakegate.Error{Code: flakegate.EINVALID, Op: "replay", Path: opts.Workdir, Message: "--workdir: " + msg}
	}
	seed, err := flakegate.ParseSeed(opts.Seed)
	if err != nil {
		return nil, err
	}
	for _, p := range []struct {
		flag string
		val  *string
	}{{"--fixture", &opts.Fixture}, {"--property", &opts.Property}} {
		if *p.val == "" {
			continue
		}
		clean, ok := replayLocalPath(*p.val)
		if !ok {
			return nil, usage("%s %q: want a path relative to --workdir, inside it", p.flag, *p.val)
		}
		*p.val = clean
	}
	vars := template.Vars{Path: opts.Property, Seed: seed.String(), Fixture: opts.Fixture}
	if opts.Samples > 0 {
		vars.Samples = strconv.Itoa(opts.Samples)
	}
	argv, err := template.Expand(opts.Argv, vars)
	if err != nil {
		var fe *flakegate.Error
		if errors.As(err, &fe) && strings.Contains(fe.Message, "has no value") {
			fe.Hint = "give the flag that fills it: {path} --property, {samples} --samples, {fixture} --fixture"
		}
		return nil, err
	}
	return argv, nil
}

// replayLocalPath cleans p and reports whether it is relative and stays
// inside the folder it is relative to.
func replayLocalPath(p string) (string, bool) {
	if filepath.IsAbs(p) || !filepath.IsLocal(p) {
		return "", false
	}
	return filepath.Clean(p), true
}
