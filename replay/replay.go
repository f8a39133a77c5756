package replay

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"github.com/flakegate/flakegate/site"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/digest"
	"github.com/flakegate/flakegate/evidence"
	"github.com/flakegate/flakegate/git"
	"github.com/flakegate/flakegate/gocache"
)

// Options are the inputs of one replay (flakegate replay): one
// command, once, in a tree, in the sandbox a check builds from the same
// sandbox block. Like check.Options, they are all it reads: no flag, no
// environment variable.
type Options struct {
	// Dir is the tree the command runs in: a clean checkout.
	Dir string
	// Argv is the command, its placeholders filled in.
	Argv []string
	// WallBudget kills the command after this long; 0 is no limit.
	WallBudget time.Duration
	// Sandbox is the sandbox block the command runs under: the config's,
	// or one the CLI makes of its flags. Its ro and rw paths are checked
	// as check checks them.
	Sandbox config.Sandbox
	// ConfigPath names the config the block comes from, in errors ("" for
	// flags).
	ConfigPath string
	// Repo is the repository Dir was checked out from ("" when Dir is the
	// checkout given): its work tree and git folder are the gate's own
	// state, hidden from the command, which no shared path may reach.
	// Without it, Dir and its git folder are.
	Repo string
	// LedgerPath is a file-based ledger no shared path may reach ("" for
	// none or a database).
	LedgerPath string
	// Env is flakegate's environment, the only source of the command's
	// (an allow-list, never a secret); nil is an empty one.
	Env []string
	// NoOverlay replays on a fresh copy of the tree instead of on an
	// overlay (FLAKEGATE_NO_OVERLAY=1).
	NoOverlay bool
	// Bwrap is the bubblewrap binary; "" looks up bwrap on PATH.
	Bwrap string
	// Fixture is the fixture's path relative to Dir (slash-separated; ""
	// for none). With FixtureSHA256 the fixture must have that digest, or
	// the replay is incomplete and the command does not run: a replay on
	// a fixture the base does not own is no evidence about the base.
	// Without it the digest is only taken (Replay.FixtureSHA256).
	Fixture, FixtureSHA256 string
	// Framework, Name, PassMarker and FailMarker ask for positive
	// evidence in the output, as check does (evidence.New); all zero
	// keeps an exit 0 a pass and an exit 1 a failure.
	Framework, Name        string
	PassMarker, FailMarker *regexp.Regexp
	// GoBase is the commit whose Go caches the command gets (gocache/):
	// the base the check ran against, as Checkout sets it; "" is
	// the HEAD of the repository of Repo (or Dir). Outside a repository
	// there are none, as in a check of a base without a Go module.
	GoBase string
	// Prepare, when set, is the property's prepare: the command runs over
	// its prepared layer of the commit PrepareTree (the commit Dir holds),
	// the check's own layer when it is kept, else one the replay builds
	// the same way, in the same sandbox.
	Prepare     *config.Prepare
	PrepareTree string
	// Suite, when set, replays one triple of a suite: New lists
	// the suite and makes Argv the batch the check ran it in
	// (suite.go).
	Suite *Suite
}

// Replay is a replay whose sandbox is built and probed: Run runs its
// command once.
type Replay struct {
	opts    Options
	iso     *site.Isolation
	fixture string          // the fixture's digest, "" without a fixture
	common  string          // the repository's git common dir, "" outside one
	goc     *gocache.Caches // the repository's Go caches, nil for none
	notes   []string        // what the replay did besides the command (Notes)
	suite   *suiteReplay
}

// Incomplete is a replay that can be no result: its fixture is
// missing, unreadable or not the one expected. The command did not run.
type Incomplete struct{ Reason string }

func (e *Incomplete) Error() string { return "the replay is incomplete: " + e.Reason }

// New checks the fixture, then builds the replay's sandbox with
// check's own builder: the same shared-path checks, hidden paths,
// environment allow-list and limits the host must enforce. Errors are a
// *Incomplete for the fixture, else EINVALID (bwrap missing, a
// shared path that reaches the gate's state, a sandbox the host cannot
// run); a command that fails is Run's outcome, not an error.
func New(ctx context.Context, opts Options) (*Replay, error) {
	var fixture string
	if opts.Fixture != "" {
		sum, err := digest.Path(ctx, filepath.Join(opts.Dir, filepath.FromSlash(opts.Fixture)))
		switch {
		case flakegate.ErrorCode(err) == flakegate.ENOTFOUND:
			return nil, &Incomplete{fmt.Sprintf("fixture %s not found in %s", opts.Fixture, opts.Dir)}
		case err != nil:
			return nil, &Incomplete{fmt.Sprintf("cannot digest fixture %s: %v", opts.Fixture, err)}
		case opts.FixtureSHA256 != "" && sum != opts.FixtureSHA256:
			return nil, &Incomplete{fmt.Sprintf("fixture %s has digest %s, expected %s", opts.Fixture, sum, opts.FixtureSHA256)}
		}
		fixture = sum
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, &flakegate.Error{Code: flakegate.EINVALID, Op: "replay", Path: opts.Dir, Err: err}
	}
	opts.Dir = dir // the sandbox binds the tree by its absolute path
	var guarded []string
	if opts.Repo != "" {
		g := &git.Client{Dir: opts.Repo}
		for _, find := range []func(context.Context) (string, error){g.TopLevel, g.CommonDir} {
			if p, err := find(ctx); err == nil {
				guarded = append(guarded, p)
			}
		}
	} else {
		guarded = append(guarded, dir)
	}
	if common, err := (&git.Client{Dir: dir}).CommonDir(ctx); err == nil {
		guarded = append(guarded, common)
	}
	repo := &git.Client{Dir: dir}
	if opts.Repo != "" {
		repo = &git.Client{Dir: opts.Repo}
	}
	common, _ := repo.CommonDir(ctx)
	if opts.LedgerPath != "" {
		if abs, err := filepath.Abs(opts.LedgerPath); err == nil {
			guarded = append(guarded, abs)
		}
	}
	spec := site.Spec{Op: "replay", CfgPath: opts.ConfigPath, Block: &opts.Sandbox, Env: opts.Env,
		NoOverlay: opts.NoOverlay, Bwrap: opts.Bwrap, Guarded: guarded, OptOut: "pass --sandbox none"}
	for _, g := range guarded {
		if g != dir { // the tree itself is what the command runs in
			spec.Hide = append(spec.Hide, g)
		}
	}
	iso, err := site.BuildIsolation(spec)
	if err != nil {
		return nil, err
	}
	r := &Replay{opts: opts, iso: iso, fixture: fixture, common: common}
	if iso.Mode == site.IsolationBwrap {
		// The check's Go caches: the repository's, built from the base.
		if common != "" {
			base := opts.GoBase
			if base == "" {
				base = "HEAD"
			}
			if sha, err := repo.RevParse(ctx, base); err == nil {
				if r.goc, err = site.SetupGoCaches(ctx, repo, common, sha, iso, site.EnvGetter(opts.Env)); err != nil {
					return nil, err
				}
			}
		}
		// The same hardening as check: no privilege, as nobody when run
		// as root, on a throwaway overlay where the kernel allows it, so
		// the command never writes the tree it replays in.
		if err := iso.Probe(ctx, ""); err != nil {
			r.Close()
			return nil, err
		}
		// What the module cache lacks (a fresh runner's is empty, and the
		// commit replayed may add a module), downloaded as a check does.
		if r.goc != nil {
			line, err := r.goc.Fetch(ctx, repo, &iso.Sandbox, iso.Env, opts.PrepareTree, "replay")
			if err != nil {
				r.Close()
				return nil, err
			}
			if line != "" {
				r.notes = append(r.notes, iso.Redact(line))
			}
		}
		if err := r.fillGoCache(ctx, repo); err != nil {
			r.Close()
			return nil, err
		}
	}
	if opts.Suite != nil {
		if err := r.planSuite(ctx); err != nil {
			r.Close()
			return nil, err
		}
	}
	return r, nil
}

// Close lets go of the replay's hold on the repository's Go caches.
func (r *Replay) Close() {
	r.iso.Close()
	r.goc.Release()
}

// Notes say what the replay did besides the command: the Go build cache
// it filled, the prepared layer it used or built.
func (r *Replay) Notes() []string { return r.notes }

// fillGoCache fills the repository's Go build cache from the base, as
// the check does, when no check has filled it from that base yet: in a
// checkout of the base of its own, removed after.
func (r *Replay) fillGoCache(ctx context.Context, repo *git.Client) error {
	gc := r.goc
	if gc == nil || r.iso.Sandbox.GoCache == "" || gc.Filled(gc.BaseKey()) {
		return nil
	}
	tmp, err := os.MkdirTemp("", "flakegate-replay-base-")
	if err != nil {
		return &flakegate.Error{Code: flakegate.EINTERNAL, Op: "replay", Message: "cannot create a temporary folder", Err: err}
	}
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "checkout")
	if err := repo.PrepareWorktree(ctx, dir, gc.Base()); err != nil {
		return err
	}
	defer repo.RemoveWorktree(context.WithoutCancel(ctx), dir) //nolint:errcheck // the folder goes with tmp
	sb := r.iso.Sandbox
	sb.Tree = dir
	line, err := gc.Fill(ctx, sb, r.iso.Env, dir, "replay")
	if err != nil {
		return err
	}
	if line != "" {
		r.notes = append(r.notes, r.iso.Redact(line))
	}
	return nil
}

// FixtureSHA256 is the digest of the replay's fixture, "" without one.
func (r *Replay) FixtureSHA256() string { return r.fixture }

// Shortfall says what the host withholds from the full sandbox (a limit
// it cannot enforce, no overlay...), "" when it gives all of it.
func (r *Replay) Shortfall() string {
	sb := &r.iso.Sandbox
	if r.iso.Mode != site.IsolationBwrap || len(sb.Level.Missing) == 0 {
		return ""
	}
	return r.iso.Redact(sb.Level.Describe(sb.Limits, sb.Overlay))
}

// Run runs the command once in its sandbox, its output (stdout and
// stderr interleaved) going to output as it comes, and judges the outcome
// by the evidence the options ask for. It never returns an error: a
// command that cannot start is an Errored outcome.
func (r *Replay) Run(ctx context.Context, output io.Writer) attempt.Outcome {
	cmd := attempt.Command{Argv: r.opts.Argv, Dir: r.opts.Dir, Env: r.iso.Env, WallBudget: r.opts.WallBudget, Output: output,
		NoTestMarkers: evidence.NoTestMarkers}
	if r.iso.Mode == site.IsolationBwrap {
		sb := r.iso.Sandbox
		sb.Tree = r.opts.Dir
		cmd.Sandbox = &sb
		done, why := r.prepare(ctx, &sb)
		defer done()
		if why != "" {
			return attempt.Outcome{Result: attempt.Errored, ExitCode: -1, Started: time.Now(), Reason: why}
		}
	} else if r.opts.Prepare != nil {
		return attempt.Outcome{Result: attempt.Errored, ExitCode: -1, Started: time.Now(),
			Reason: "prepare failed: a prepare needs the sandbox on overlays, so that its layer can lie under the command"}
	}
	if r.suite != nil {
		return r.runSuite(ctx, cmd, output)
	}
	ev := evidence.New(r.opts.Framework, r.opts.Name, r.opts.PassMarker, r.opts.FailMarker)
	if ev != nil {
		// The evidence reads the exact bytes; output gets them as well.
		cmd.Output = teeWriter{output, ev}
	}
	o := attempt.Run(ctx, cmd)
	ev.Judge(&o)
	return o
}

// teeWriter writes to both; an error of the first stops nothing.
type teeWriter struct {
	a io.Writer
	b *evidence.Checker
}

func (t teeWriter) Write(p []byte) (int, error) {
	if t.a != nil {
		t.a.Write(p) //nolint:errcheck // the console's error must not end the attempt
	}
	return t.b.Write(p)
}
