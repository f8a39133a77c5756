// Package check is flakegate's main job, the failure-class merge check:
// it reads flakegate.yaml from the pinned base revision, runs every
// (property, fixture, seed) triple on a clean candidate worktree under a
// retry cap fixed in advance, replays each seed once on a clean base
// worktree, writes one run record per triple and labels it with the
// decision table.
//
// The package takes a context and an Options struct; it never reads
// flags, the environment or the process streams (the CLI does), and
// it reports progress to a ProgressHandler it is given (progress.go; the
// CLI passes report.Progress). Labels come from the decision table only
// (flakegate.ClassifyBytes of the record, record.go); the check adds
// reasons, and a triple the ledger skips shows its freeze's SCHEDULER.
//
// Where the code is:
//
//	check.go      Options, Run, the checker: revisions (from site.Base), config,
//	              output folder
//	stages.go     run: the check as a list of named stages, in order, over the
//	              state they hand on (runState): worktrees, go caches, suites,
//	              properties, seeds, corpus, triples, attempts, freezes, new
//	              tests, summary
//	site.go       site: what setting up a check's attempts needs, and those
//	              steps' state (the checker embeds one); Site: a check set up
//	              up to its first attempt, over a site alone, for doctor
//	props.go      per-property state and the check's calls into package grade:
//	              the preflight (digests of both sides, watched paths), what
//	              the prepares wrote, grader edits, the tests the patch changes
//	worktrees.go  the check's use of the worktrees package site opens
//	              (where they live, their lock, the reset after an attempt):
//	              overlay or reset mode, and the progress line saying which
//	sandbox.go    the site's isolation (package site builds it: one builder,
//	              for check and replay alike, and probes it), set up for the check
//	pool.go       the check's side of the worker pool (package fleet runs it):
//	              the runs of a triple alone and of a batch by position, and
//	              each labelled triple's result and progress line
//	shard.go      --shard I/N: the triples' ids for fleet.Shard (package fleet
//	              cuts the shards and merges their summaries)
//	queue.go      --join: the triples for fleet.Join's queue shared with other
//	              runners, a triple given up on, the joined check's summary
//	triple.go     one triple: the ledger lookup and its run (tripleRun), a batch of one
//	              for the Driver (package batch: the order of the attempts)
//	runner.go     the Driver's runners (a triple alone, a batch) and the replay cache it uses
//	attempt.go    one attempt: a clean tree, the command in its sandbox, the transcript
//	batchplan.go  which triples run as one process (a batch; package batch
//	              has each triple's shape, the command and its known answers)
//	batch.go      a batch's processes (the Driver asks, runner.go), each member
//	              judged from its report (batch.Judge)
//	prepare.go    the prepared layer of each tree, and its cache, after the ledger lookup
//	gocachesite.go  the repository's Go caches (package gocache) for the attempts:
//	              set up beside the sandbox, modules fetched, the fill from the
//	              base tree (package site mirrors them on the tmpfs)
//	suite.go      the suites in a check: the graded candidate, the base's lists expanded
//	              into properties (package suites over its Env: the listings, impact:
//	              true decided and its runs planned), the orders noted, the candidate's
//	              tree the patch's new tests run on (package newtests runs them)
//	ledger.go     what a freeze must match, skipped triples, freezes granted
//	probe.go      the records' history of a triple's base seed (the flake origin's)
//	replay.go     the replay key of a base seed, the base tree's check and the replay lock
//	record.go     the run record, its label from the table, the summary line
//	seeds.go      seeds drawn for the candidate with the store's secret
//	output.go     files written and the reproduce command line
//	progress.go   the ProgressHandler interface
//	reason.go     the summary's reasons in words (an attempt that never ran,
//	              a contamination naming each path once)
//	plan.go       PlanCost: which triples share a process, for package plan's
//	              estimate of what a config will cost (check --plan, init)
//	timings.go    what each check measures for the plan (package plan keeps it)
package check

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/flakegate/flakegate/grade"
	sitepkg "github.com/flakegate/flakegate/site"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/batch"
	"github.com/flakegate/flakegate/fleet"
	"github.com/flakegate/flakegate/gocache"
	"github.com/flakegate/flakegate/plan"
)

// Options are the inputs of one check.
type Options struct {
	// Dir is a folder inside the repository (the CLI passes the working
	// directory). Only git reads it: no test input comes from it.
	Dir string
	// Base and Candidate are revisions; Candidate "" means HEAD.
	Base, Candidate string
	// ConfigPath is the config's repo-relative path; "" means flakegate.yaml.
	ConfigPath string
	// OutDir receives records, transcripts, decisions and summary.json;
	// "" means <git common dir>/flakegate/out/<candidate sha>.
	OutDir string
	// OpenStore opens the ledger, record store and replay cache, given the
	// repository's git common directory. Required.
	OpenStore func(ctx context.Context, commonDir string) (flakegate.Store, error)
	// LedgerPath is the file-system path of a file-based ledger ("" for
	// the default one or a database). A ledger inside the work tree is
	// watched like the config.
	LedgerPath string
	// NoReplayCache neither reads nor writes the replay cache.
	NoReplayCache bool
	// RunContaminated runs the attempts of triples the diff alone makes
	// CONTAMINATED, or the fixture digests alone make FIXTURE (by default
	// they are not run; the label is the same).
	RunContaminated bool
	// FreezeOwner, if set, grants a freeze to every SCHEDULER result.
	FreezeOwner string
	// By names who runs the check in the audit log ("" is "flakegate check").
	By string
	// Env is the environment the test commands' allow-list is drawn from
	// (PATH, LANG, LC_ALL, TZ and the config's sandbox.env): the CLI
	// passes flakegate's own, and the check reads no other (nil is an
	// empty one). No secret in it ever reaches a test command.
	Env []string
	// NoOverlay runs each attempt on a fresh copy of its tree instead of
	// an overlay (the CLI sets it from FLAKEGATE_NO_OVERLAY=1).
	NoOverlay bool
	// Secrets are more values never passed to a test command nor written
	// (the ledger DSN); secret-named variables of Env are added.
	Secrets []string
	// Bwrap is the bubblewrap binary; "" looks up bwrap on PATH.
	Bwrap string
	// LockTimeout bounds each wait for a lock another check holds (the
	// worktree lock; the replay lock, plus the wall budget of the attempt
	// its holder runs); 0 waits until ctx ends.
	LockTimeout time.Duration
	// Git is the git binary; "" means git on PATH.
	Git string
	// Progress receives the check's progress: each finished triple, lock
	// waits and queue lines; nil discards it.
	Progress ProgressHandler
	// Now returns the time (tests fix it); nil is time.Now.
	Now func() time.Time
	// Shard, if set, runs only that shard of the triples (--shard I/N).
	Shard *fleet.ShardSpec
	// Join, if set, runs the triples through a queue shared with other
	// runners (--join, fleet.Join).
	Join *fleet.JoinOptions
	// Runner names this runner in records (runner_id, runner_host).
	Runner flakegate.Runner
	// Timings is what the check keeps for check --plan (timings.go).
	Timings plan.TimingsKept
}

// Run performs the check and returns its summary. A reject is a summary
// with verdict "reject", not an error. Errors are *flakegate.Error:
// EINVALID for usage and config problems (exit 2), EINTERNAL when
// flakegate itself failed (exit 3).
func Run(ctx context.Context, opts Options) (*flakegate.Summary, error) {
	started := time.Now()
	c, err := newChecker(ctx, opts)
	if err != nil {
		return nil, err
	}
	c.started = started
	defer c.close()
	return c.run(ctx)
}

// checker holds the state of one check. What setting up its attempts
// needs (the base, the sandbox, the worktrees, the Go caches, the
// prepared layers) is its site (site.go), whose steps are its own.
type checker struct {
	site
	opts          Options
	candSHA       string
	diff          []string      // where the graded tree differs from the base (the candidate's tree, without suites or properties that take files back)
	graded        *grade.Graded // the graded candidate (grade/graded.go)
	watch         []string      // config and in-repo ledger: every triple's watch_paths
	store         flakegate.Store
	props         []*propState
	now           func() time.Time
	secret        []byte        // the store's seed secret, when seeds are drawn (seeds.go)
	grader        *grade.Grader // grades the properties: preflight, prepares' writes, changed tests (props.go)
	histMu        sync.Mutex
	hist          map[string]batch.History // base results of earlier records, by triple (probe.go)
	prepWatchMu   sync.Mutex
	prepWatch     map[int]*grade.PrepareWatch // what the prepares of a property wrote, by its index (props.go)
	started       time.Time                   // when Run began (timings.go)
	times         processTimes                // the attempts' processes (timings.go)
	corpusMu      sync.Mutex
	corpusRefused map[flakegate.CorpusAdd][]string // failing seeds the corpus did not keep, by why (corpus.go)
	knownDraws    batch.KnownDraws                 // the go known answers, one draw per tree and package (batch/knowndraws.go)
	goBuilds      gocache.Builds                   // the go trees' build steps (gocache/build.go)
}

func newChecker(ctx context.Context, opts Options) (*checker, error) {
	if opts.OpenStore == nil {
		return nil, internalf("check: no store opener was given")
	}
	if strings.TrimSpace(opts.Base) == "" {
		return nil, sitepkg.ErrNoBase
	}
	c := &checker{site: site{progress: opts.Progress}, opts: opts, now: opts.Now}
	if c.progress == nil {
		c.progress = discardProgress{}
	}
	if c.now == nil {
		c.now = time.Now
	}
	if c.opts.By == "" {
		c.opts.By = "flakegate check"
	}
	b, err := sitepkg.OpenRepo(ctx, opts.Dir, opts.Git)
	if err != nil {
		return nil, err
	}
	if err := b.Resolve(ctx, opts.Base); err != nil {
		return nil, err
	}
	cand := opts.Candidate
	if cand == "" {
		cand = "HEAD"
	}
	if c.candSHA, err = sitepkg.ResolveRev(ctx, b.Git, "--candidate", cand); err != nil {
		return nil, err
	}
	if err := b.LoadConfig(ctx, opts.ConfigPath); err != nil {
		return nil, err
	}
	c.useBase(b)
	c.goBuilds.Root = gocache.BuildsRoot(c.common)
	c.watch = []string{b.ConfigPath}
	if c.diff, err = c.git.DiffNames(ctx, c.baseSHA, c.candSHA); err != nil {
		return nil, err
	}
	if err := c.watchLedger(); err != nil {
		return nil, err
	}
	if err := c.makeOutDir(); err != nil {
		return nil, err
	}
	key := c.ledgerKey()
	if key != "" {
		// Whatever its name, the key never reaches a test command.
		c.opts.Secrets = append(append([]string(nil), c.opts.Secrets...), key)
	}
	siteOpts := SiteOptions{Env: c.opts.Env, NoOverlay: c.opts.NoOverlay, Bwrap: c.opts.Bwrap, Secrets: c.opts.Secrets}
	if err := c.setupIsolation(ctx, siteOpts, c.opts.LedgerPath); err != nil {
		return nil, err
	}
	if c.store, err = opts.OpenStore(ctx, c.common); err != nil {
		return nil, err
	}
	if err := c.useLedgerKey(key); err != nil {
		c.store.Close()
		c.store = nil
		return nil, err
	}
	return c, nil
}

func (c *checker) close() {
	c.iso.Close() // first: no standby holds a tree or a cache past here
	if c.trees != nil {
		c.trees.Unlock()
	}
	if c.store != nil {
		c.store.Close()
	}
	c.goc.Release()
	c.goBuilds.Close()
}

// useBase takes the repository and the config of b.
func (c *site) useBase(b *sitepkg.Base) {
	c.git, c.top, c.common, c.baseSHA = b.Git, b.Top, b.Common, b.SHA
	c.cfgPath, c.cfgSHA, c.cfg = b.ConfigPath, b.ConfigSHA, b.Config
}

// watchLedger adds a file ledger that lives inside the work tree to the
// watched paths, as a folder prefix.
func (c *checker) watchLedger() error {
	w, err := ledgerWatch(c.top, c.opts.LedgerPath)
	c.watch = append(c.watch, w...)
	return err
}

// ledgerWatch is what a file ledger at ledgerPath adds to the watched
// paths of the work tree top: its folder, when it lives inside.
func ledgerWatch(top, ledgerPath string) ([]string, error) {
	if ledgerPath == "" {
		return nil, nil
	}
	abs, err := filepath.Abs(ledgerPath)
	if err != nil {
		return nil, err
	}
	if r, err := filepath.EvalSymlinks(top); err == nil {
		top = r
	}
	if r, err := sitepkg.EvalExisting(abs); err == nil {
		abs = r
	}
	rel, err := filepath.Rel(top, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, nil
	}
	rel = filepath.ToSlash(rel)
	if rel == "." {
		return nil, &flakegate.Error{Code: flakegate.EINVALID, Op: "check --ledger", Path: ledgerPath,
			Message: "the ledger cannot be the repository root", Hint: "keep the ledger in its own folder"}
	}
	return []string{rel, rel + "/"}, nil
}

func (c *checker) makeOutDir() error {
	dir := c.opts.OutDir
	if dir == "" {
		dir = filepath.Join(c.common, "flakegate", "out", c.candSHA)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	notWritable := func(err error) error {
		return &flakegate.Error{Code: flakegate.EINVALID, Op: "check --out", Path: abs,
			Message: "the output folder is not writable", Err: err,
			Hint: "pass --out with a folder flakegate can create and write"}
	}
	if err := os.MkdirAll(filepath.Join(abs, "transcripts"), 0o755); err != nil {
		return notWritable(err)
	}
	probe, err := os.CreateTemp(abs, ".probe-*")
	if err != nil {
		return notWritable(err)
	}
	probe.Close()
	os.Remove(probe.Name())
	c.outDir = abs
	return nil
}

// warmGoCaches downloads the modules the graded tree's go.sum names,
// fills the build cache from the base and mirrors the caches beside the
// trees; it returns how long the fill took (timings.go).
func (c *checker) warmGoCaches(ctx context.Context, tr sitepkg.TreeRoot) (time.Duration, error) {
	if err := c.fetchGoModules(ctx, c.suite.graded); err != nil {
		return 0, err
	}
	start := time.Now()
	if err := c.fillGoCache(ctx); err != nil {
		return 0, err
	}
	fill := time.Since(start)
	if note := c.iso.MirrorGoCaches(c.goc, tr.Shm); note != "" {
		c.say("worktrees: " + c.redact(note))
	}
	return fill, nil
}

// source returns where the workers take their triples from, the
// positions of the triples this run reports, and the shard it covers.
func (c *checker) source(ctx context.Context, p *pool) (fleet.Source, []int, *flakegate.Shard, error) {
	switch {
	case c.opts.Join != nil:
		src, err := c.joinQueue(ctx, p)
		return src, nil, nil, err
	case c.opts.Shard != nil:
		mine, shard, err := c.shard(ctx, p.jobs)
		if err != nil {
			return nil, nil, nil, err
		}
		return fleet.List(p.units(mine)), mine, shard, nil
	}
	all := make([]int, len(p.jobs))
	for i := range all {
		all[i] = i
	}
	return fleet.List(p.units(all)), all, nil, nil
}

func internalf(format string, args ...any) error {
	return &flakegate.Error{Code: flakegate.EINTERNAL, Message: fmt.Sprintf(format, args...)}
}
