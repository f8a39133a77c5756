// A check set up and never run: the attempts' sandbox and environment
// over a base, and the base side's prepares, built by the check's own
// steps (useBase, setupIsolation, prepareTree), for doctor to look at.
//
// Those steps are site's methods, and site holds what they read and
// set: the checker embeds one for its own attempts, and a Site holds one
// alone, with no checker (TestLayoutBuildsNoPartialChecker holds that
// only newChecker makes a checker).

package check

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	sitepkg "github.com/flakegate/flakegate/site"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/attempt/sandbox"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/git"
	"github.com/flakegate/flakegate/gocache"
	"github.com/flakegate/flakegate/internal/flock"
	"github.com/flakegate/flakegate/transcript"
)

// site is what setting up a check's attempts needs: the base (useBase),
// the output folder no attempt may reach, the isolation and the Go
// caches (setupIsolation, probeSandbox), the worktrees, the prepared
// layers (prepareTree, collectLayers), where notes go (say) and what is
// redacted (redact). Its methods are those steps (the suites' listings
// are package suites', over suitesEnv, suite.go); they name their
// receiver c, as the checker's do, since the checker that embeds a site
// calls them as its own.
type site struct {
	git         *git.Client
	top         string
	common      string
	baseSHA     string
	cfgPath     string
	cfgSHA      string // sha256 of the config bytes at the base
	cfg         *config.Config
	outDir      string
	trees       *sitepkg.Worktrees
	iso         *sitepkg.Isolation
	progress    ProgressHandler
	preparedMu  sync.Mutex               // guards prepared
	prepared    map[string]*preparedTree // by side and prepare (prepare.go)
	prepareMu   sync.Mutex               // one prepare at a time (prepare.go)
	prepareRuns []flakegate.PrepareRun   // under prepareMu
	goc         *gocache.Caches          // the attempts' Go caches (gocachesite.go), nil for none
	suite       suiteState               // the suites' lists, orders and new tests (suite.go)
}

// SiteOptions are what a check's attempts are set up from besides the
// base; each means what it means for Run.
type SiteOptions struct {
	Env       []string
	NoOverlay bool
	Bwrap     string   // "" looks bwrap up on PATH
	Secrets   []string // values never shown
}

// Site is what a check of a base sets up before its first attempt.
type Site struct {
	c     *site         // the check's set-up steps, with no checker
	opts  SiteOptions   // what Setup builds the sandbox from
	notes *noteRecorder // the site's notes (the "sandbox:" line)
}

// NewSite is the site of a check of b; nothing is set up yet.
func NewSite(b *sitepkg.Base, opts SiteOptions) *Site {
	notes := &noteRecorder{}
	c := &site{progress: notes}
	c.useBase(b)
	c.outDir = filepath.Join(b.Common, "flakegate", "out", "doctor") // guarded in the sandbox; never created
	return &Site{c: c, opts: opts, notes: notes}
}

// Setup resolves the sandbox and the environment of the attempts, as a
// check does before its first one.
func (s *Site) Setup(ctx context.Context) error { return s.c.setupIsolation(ctx, s.opts, "") }

// Probe finds the isolation this host gives the attempts, as a check
// does, and returns the line a check prints about it (without its
// "sandbox: ").
func (s *Site) Probe(ctx context.Context) (string, error) {
	if _, _, err := s.c.probeSandbox(ctx, s.c.common); err != nil {
		return "", err
	}
	return strings.TrimPrefix(s.notes.find("sandbox: "), "sandbox: "), nil
}

// Trees says where a check's worktrees are kept and why, as the check's
// "worktrees:" line does ("" when they are on disk and nothing sweeps
// them); after Probe. It may create the user's folder on the tmpfs.
func (s *Site) Trees(ctx context.Context) (string, error) {
	r, err := s.c.treeRoot(ctx, s.c.cfg.Workers)
	return s.c.redact(r.Why), err
}

// Close ends the sandbox's standbys (nothing before Setup).
func (s *Site) Close() { s.c.iso.Close() }

// Sandbox is the attempts' sandbox without its tree (after Setup, and
// Probe for its level).
func (s *Site) Sandbox() sandbox.Sandbox { return s.c.iso.Sandbox }

// SandboxFor is the sandbox of one attempt in tree, nil without bwrap.
func (s *Site) SandboxFor(tree string) *sandbox.Sandbox { return s.c.sandboxFor(tree) }

// Env is the attempts' environment, nil before Setup.
func (s *Site) Env() []string {
	if s.c.iso == nil {
		return nil
	}
	return s.c.iso.Env
}

// Redact replaces every secret value in text.
func (s *Site) Redact(text string) string { return s.c.redact(text) }

// BasePrepare is one distinct prepare of the config (by its digest), run
// once on the base tree as a check's base side runs it.
type BasePrepare struct {
	Where   string            // "prepare" or "properties[I].prepare"
	Prepare *config.Prepare   // the first prepare with this digest
	Shared  []*config.Prepare // every prepare of the config with this digest
	Err     error             // it could not be run
	Failed  string            // it ran and failed: why
	Seconds float64           // how long it ran
	Cached  bool              // its layer was kept from an earlier run
	// Sandbox is the attempts' sandbox over the base tree with the
	// prepared layer under it, when it passed.
	Sandbox *sandbox.Sandbox
}

// BasePrepares is what PrepareBase did: Runs, one per distinct prepare.
// Busy is the error of the worktree lock a running check holds (nothing
// ran); Err, with ErrWhat ("" or what it made), is why nothing could run;
// Uncollected, why the kept layers were not collected afterwards.
type BasePrepares struct {
	Runs        []*BasePrepare
	Busy        error
	Err         error
	ErrWhat     string
	Uncollected error
}

// prepareLockWait is how long PrepareBase waits for the worktree lock a
// running check of the repository holds.
const prepareLockWait = time.Minute

// PrepareBase runs each distinct prepare of the config (its properties',
// and the top-level one a suite's listing runs over) once on the base
// tree, in the check's base worktree and sandbox (after Setup and Probe),
// as a check's base side runs it: the check's base side of the same
// commit reuses the layers. done lets go of the layers and the worktrees.
// Without a prepare nothing runs and nothing is opened.
func (s *Site) PrepareBase(ctx context.Context) (res *BasePrepares, done func()) {
	c := s.c
	res, done = &BasePrepares{}, func() {}
	bySHA := map[string]*BasePrepare{}
	for i := range c.cfg.Properties {
		p := c.cfg.Properties[i].Prepare
		if p == nil {
			continue
		}
		sha := sitepkg.PrepareSHA256(p, c.iso.Env)
		if bp, ok := bySHA[sha]; ok {
			bp.Shared = append(bp.Shared, p)
			continue
		}
		where := "prepare"
		if p != c.cfg.Prepare {
			where = fmt.Sprintf("properties[%d].prepare", i)
		}
		bySHA[sha] = &BasePrepare{Where: where, Prepare: p, Shared: []*config.Prepare{p}}
		res.Runs = append(res.Runs, bySHA[sha])
	}
	// The suites' listing runs over the top-level prepare (suiteLayer),
	// whether or not a property uses it.
	if p := c.cfg.Prepare; p != nil && len(c.cfg.Suites) > 0 {
		if _, ok := bySHA[sitepkg.PrepareSHA256(p, c.iso.Env)]; !ok {
			res.Runs = append(res.Runs, &BasePrepare{Where: "prepare", Prepare: p, Shared: []*config.Prepare{p}})
		}
	}
	if len(res.Runs) == 0 {
		return res, done
	}
	root, err := c.treeRoot(ctx, c.cfg.Workers)
	if err != nil {
		res.Err = err
		return res, done
	}
	lock, err := flock.Lock(ctx, root.Lock, flock.Options{What: "the worktree lock", Op: "doctor", Timeout: prepareLockWait})
	if err != nil {
		res.Busy, res.Runs = err, nil
		return res, done
	}
	sb := c.iso.Sandbox
	c.trees = sitepkg.BaseOnly(c.git, root, c.baseSHA, sb.Overlay || sb.Level.Copy, lock)
	t := c.trees.Workers[0].Base
	c.prepared = map[string]*preparedTree{}
	done = func() {
		c.releasePrepares()
		c.trees.Unlock()
	}
	if err := c.trees.Prepare(ctx, t); err != nil {
		res.Err, res.ErrWhat = err, "the base worktree"
		return res, done
	}
	if err := c.fillGoCache(ctx); err != nil {
		res.Err, res.ErrWhat = err, "the Go build cache"
		return res, done
	}
	for _, bp := range res.Runs {
		sha := sitepkg.PrepareSHA256(bp.Prepare, c.iso.Env)
		pt, err := c.prepareTree(ctx, bp.Prepare, sha, c.trees.Workers[0].Base)
		if err != nil {
			bp.Err = err
			continue
		}
		c.prepared[preparedKey(transcript.SideBase, sha)] = pt // releasePrepares lets go of it
		bp.Seconds, bp.Cached = pt.Seconds, pt.Cached
		if !pt.OK {
			bp.Failed = pt.Reason
			continue
		}
		bp.Sandbox = c.sandboxFor(t.Dir)
		bp.Sandbox.Prepared = pt.Dir
	}
	res.Uncollected = c.collectLayers()
	return res, done
}

// noteRecorder is the progress handler of a Site: it keeps the notes.
type noteRecorder struct {
	discardProgress
	notes []string
}

func (n *noteRecorder) Note(_, msg string) { n.notes = append(n.notes, msg) }

// Notes are the site's notes so far that start with prefix ("prepare ":
// the prepares the suites' listing ran).
func (s *Site) Notes(prefix string) []string {
	var out []string
	for _, m := range s.notes.notes {
		if strings.HasPrefix(m, prefix) {
			out = append(out, m)
		}
	}
	return out
}

// find returns the first note starting with prefix.
func (n *noteRecorder) find(prefix string) string {
	for _, m := range n.notes {
		if strings.HasPrefix(m, prefix) {
			return m
		}
	}
	return ""
}
