package check

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/flakegate/flakegate/grade"
	sitepkg "github.com/flakegate/flakegate/site"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/batch"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/digest"
	"github.com/flakegate/flakegate/evidence"
	"github.com/flakegate/flakegate/git"
	"github.com/flakegate/flakegate/gocache"
)

// ReplayOptions are the inputs of one replay (flakegate replay): one
// command, once, in a tree, in the sandbox a check builds from the same
// sandbox block. Like Options, they are all it reads: no flag, no
// environment variable.
type ReplayOptions struct {
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
	// the base the check ran against, as CheckoutReplay sets it; "" is
	// the HEAD of the repository of Repo (or Dir). Outside a repository
	// there are none, as in a check of a base without a Go module.
	GoBase string
	// Prepare, when set, is the property's prepare: the command runs over
	// its prepared layer of the commit PrepareTree (the commit Dir holds),
	// the check's own layer when it is kept, else one the replay builds
	// the same way, in the same sandbox.
	Prepare     *config.Prepare
	PrepareTree string
	// Suite, when set, replays one triple of a suite: NewReplay lists
	// the suite and makes Argv the batch the check ran it in
	// (replaysuite.go).
	Suite *ReplaySuite
}

// Replay is a replay whose sandbox is built and probed: Run runs its
// command once.
type Replay struct {
	opts    ReplayOptions
	iso     *sitepkg.Isolation
	fixture string          // the fixture's digest, "" without a fixture
	common  string          // the repository's git common dir, "" outside one
	goc     *gocache.Caches // the repository's Go caches, nil for none
	notes   []string        // what the replay did besides the command (Notes)
	suite   *suiteReplay
}

// ReplayIncomplete is a replay that can be no result: its fixture is
// missing, unreadable or not the one expected. The command did not run.
type ReplayIncomplete struct{ Reason string }

func (e *ReplayIncomplete) Error() string { return "the replay is incomplete: " + e.Reason }

// NewReplay checks the fixture, then builds the replay's sandbox with
// check's own builder: the same shared-path checks, hidden paths,
// environment allow-list and limits the host must enforce. Errors are a
// *ReplayIncomplete for the fixture, else EINVALID (bwrap missing, a
// shared path that reaches the gate's state, a sandbox the host cannot
// run); a command that fails is Run's outcome, not an error.
func NewReplay(ctx context.Context, opts ReplayOptions) (*Replay, error) {
	var fixture string
	if opts.Fixture != "" {
		sum, err := digest.Path(ctx, filepath.Join(opts.Dir, filepath.FromSlash(opts.Fixture)))
		switch {
		case flakegate.ErrorCode(err) == flakegate.ENOTFOUND:
			return nil, &ReplayIncomplete{fmt.Sprintf("fixture %s not found in %s", opts.Fixture, opts.Dir)}
		case err != nil:
			return nil, &ReplayIncomplete{fmt.Sprintf("cannot digest fixture %s: %v", opts.Fixture, err)}
		case opts.FixtureSHA256 != "" && sum != opts.FixtureSHA256:
			return nil, &ReplayIncomplete{fmt.Sprintf("fixture %s has digest %s, expected %s", opts.Fixture, sum, opts.FixtureSHA256)}
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
	spec := sitepkg.Spec{Op: "replay", CfgPath: opts.ConfigPath, Block: &opts.Sandbox, Env: opts.Env,
		NoOverlay: opts.NoOverlay, Bwrap: opts.Bwrap, Guarded: guarded, OptOut: "pass --sandbox none"}
	for _, g := range guarded {
		if g != dir { // the tree itself is what the command runs in
			spec.Hide = append(spec.Hide, g)
		}
	}
	iso, err := sitepkg.BuildIsolation(spec)
	if err != nil {
		return nil, err
	}
	r := &Replay{opts: opts, iso: iso, fixture: fixture, common: common}
	if iso.Mode == sitepkg.IsolationBwrap {
		// The check's Go caches: the repository's, built from the base.
		if common != "" {
			base := opts.GoBase
			if base == "" {
				base = "HEAD"
			}
			if sha, err := repo.RevParse(ctx, base); err == nil {
				if r.goc, err = sitepkg.SetupGoCaches(ctx, repo, common, sha, iso, sitepkg.EnvGetter(opts.Env)); err != nil {
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
	if r.iso.Mode != sitepkg.IsolationBwrap || len(sb.Level.Missing) == 0 {
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
	if r.iso.Mode == sitepkg.IsolationBwrap {
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

// ReplayAtOptions name one seed of a config's property at a commit
// (flakegate replay --repo).
type ReplayAtOptions struct {
	// Repo is a folder of the repository.
	Repo string
	// Rev is the commit the checkout holds; the command comes from the
	// config at ConfigRev ("" is Rev): check writes its reproduce lines
	// with the base there, so the replay runs the command the gate ran.
	Rev, ConfigRev string
	// ConfigPath is the config's clean repo-relative path; "" is
	// flakegate.yaml.
	ConfigPath string
	// Property (clean, repo-relative) and Name pick the config entry.
	Property, Name string
	Seed           flakegate.Seed
	// Suite is the path of a suites: entry (as the config writes it):
	// Property and Name are then one of its tests (the file and name its
	// triple's record has), and the replay runs that test's batch.
	Suite string
}

// ReplayAt is a temporary checkout of a commit and the replay of one
// seed in it, with the command check would run for that triple.
type ReplayAt struct {
	SHA, ConfigSHA, ConfigPath string
	Property                   *config.Property
	// Options replay the seed in the checkout under the config's sandbox
	// block, with the evidence check asks for; NewReplay takes them.
	Options ReplayOptions

	git  *git.Client
	tmp  string
	base string // a suite's: the checkout of the base it is listed in
}

// CheckoutReplay resolves the revisions, reads the config at ConfigRev,
// finds the property, expands its command and makes a checkout of Rev of
// its own (git worktree add --detach, in a temporary folder), which
// Remove deletes. Errors are EINVALID for a revision, config or property
// that does not resolve.
func CheckoutReplay(ctx context.Context, o ReplayAtOptions) (*ReplayAt, error) {
	cfgPath := o.ConfigPath
	if cfgPath == "" {
		cfgPath = config.DefaultPath
	}
	g := &git.Client{Dir: o.Repo}
	if _, err := g.TopLevel(ctx); err != nil {
		return nil, err
	}
	sha, err := g.RevParse(ctx, o.Rev)
	if err != nil {
		return nil, err
	}
	cfgRev := o.ConfigRev
	if cfgRev == "" {
		cfgRev = sha
	}
	cfgSHA, err := g.RevParse(ctx, cfgRev)
	if err != nil {
		return nil, err
	}
	raw, err := g.Show(ctx, cfgSHA, cfgPath)
	if err != nil {
		if flakegate.ErrorCode(err) == flakegate.ENOTFOUND {
			return nil, &flakegate.Error{Code: flakegate.EINVALID, Op: "replay", Path: cfgPath,
				Message: "no such file at " + flakegate.ShortSHA(cfgSHA), Hint: "pass --config-rev with the revision that holds the config (check uses the base)"}
		}
		return nil, err
	}
	cfg, err := config.LoadWith(raw, cfgPath, sitepkg.ShowAt(ctx, g, cfgSHA))
	if err != nil {
		return nil, err
	}
	if o.Suite != "" {
		return checkoutSuiteReplay(ctx, o, g, sha, cfgSHA, cfgPath, cfg)
	}
	return checkoutPropertyReplay(ctx, o, g, sha, cfgSHA, cfgPath, cfg)
}

// checkoutPropertyReplay is CheckoutReplay for a property's triple.
func checkoutPropertyReplay(ctx context.Context, o ReplayAtOptions, g *git.Client, sha, cfgSHA, cfgPath string, cfg *config.Config) (*ReplayAt, error) {
	var p *config.Property
	var ids []string
	for i := range cfg.Properties {
		q := &cfg.Properties[i]
		ids = append(ids, q.ID())
		if q.Path == o.Property && q.Name == o.Name {
			p = q
		}
	}
	if p == nil {
		return nil, &flakegate.Error{Code: flakegate.EINVALID, Op: "replay", Path: cfgPath,
			Message: fmt.Sprintf("no property %s at %s", (&config.Property{Path: o.Property, Name: o.Name}).ID(), flakegate.ShortSHA(cfgSHA)),
			Hint:    "the config names: " + strings.Join(ids, ", ")}
	}
	argv, err := batch.TripleArgv(p, o.Seed)
	if err != nil {
		return nil, err
	}
	// The check runs the graded tree (graded.go): the base's property
	// file and its world over Rev's code.
	gt, err := grade.MakeGraded(ctx, g, cfg, cfgSHA, sha, []string{cfgPath})
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "flakegate-replay-")
	if err != nil {
		return nil, &flakegate.Error{Code: flakegate.EINTERNAL, Op: "replay", Message: "cannot create a temporary folder", Err: err}
	}
	r := &ReplayAt{SHA: sha, ConfigSHA: cfgSHA, ConfigPath: cfgPath, Property: p, git: g, tmp: tmp,
		Options: ReplayOptions{Dir: filepath.Join(tmp, "checkout"), Argv: argv, WallBudget: p.WallBudget,
			Sandbox: cfg.Sandbox, ConfigPath: cfgPath, Repo: o.Repo, Fixture: p.Fixture,
			Framework: batch.EvidenceFramework(p), Name: p.Name, PassMarker: p.PassMarker, FailMarker: p.FailMarker,
			GoBase: cfgSHA, Prepare: p.Prepare, PrepareTree: gt.SHA}}
	if err := g.PrepareWorktree(ctx, r.Options.Dir, gt.SHA); err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	return r, nil
}

// Remove unregisters the checkout and deletes it (the checkout is the
// replay's alone). It runs even when ctx has ended.
func (r *ReplayAt) Remove(ctx context.Context) error {
	err := r.git.RemoveWorktree(context.WithoutCancel(ctx), r.Options.Dir)
	if r.base != "" {
		if berr := r.git.RemoveWorktree(context.WithoutCancel(ctx), r.base); err == nil {
			err = berr
		}
	}
	os.RemoveAll(r.tmp)
	return err
}
