// The prepare of a tree: run once per tree, command and environment, in
// the attempt's sandbox with the tree writable; what it writes to the
// tree and to the Go build cache is kept as a prepared layer, laid
// read-only under every attempt of that tree, and cached across checks
// under <git common dir>/flakegate/prepared (which no attempt can see).

package check

import (
	"context"
	"fmt"
	"strings"

	sitepkg "github.com/flakegate/flakegate/site"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/attempt/sandbox"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/grade"
	"github.com/flakegate/flakegate/transcript"
)

// preparedTree is the prepared layer of one side's tree for one prepare.
type preparedTree struct {
	*sitepkg.Prepared
	// wrote lists what the prepare wrote to the tree (grade/preparewatch.go).
	wrote []grade.LayerEntry
}

func preparedKey(side, sha string) string { return side + "\x00" + sha }

// initPrepares names the prepare of every property; nothing runs yet.
// A property's prepares run when its first triple that runs attempts
// needs them (ensurePrepared), after that triple's ledger lookup.
func (c *checker) initPrepares() {
	c.preparedMu.Lock()
	if c.prepared == nil { // else the suites' listing prepared the base already (suiteLayer)
		c.prepared = map[string]*preparedTree{}
	}
	c.preparedMu.Unlock()
	c.prepWatch = map[int]*grade.PrepareWatch{}
	for _, ps := range c.props {
		if p := ps.prop.Prepare; p != nil {
			ps.prepareSHA256 = sitepkg.PrepareSHA256(p, c.iso.Env)
		}
	}
}

// ensurePrepared prepares the trees of ps, per side, once per check: on
// the trees of worker w, which is about to run a triple of ps whose
// ledger lookup did not skip it. So a triple the ledger skips never waits
// for a prepare, and no prepare runs before the check has read the
// ledger for a triple that needs it. One prepare runs at a time; it says
// one line per tree ("prepare candidate: 38.2 s (cached: no)"). Then the
// kept layers are collected down to their bound (site/layergc.go), and what
// the prepares wrote is held against what ps is graded on
// (grade/preparewatch.go).
func (c *checker) ensurePrepared(ctx context.Context, w int, ps *propState) error {
	p := ps.prop.Prepare
	if p == nil {
		return nil
	}
	c.prepareMu.Lock()
	defer c.prepareMu.Unlock()
	if c.preparedWatch(ps) != nil {
		return nil // prepared for an earlier triple
	}
	for _, side := range []string{transcript.SideCandidate, transcript.SideBase} {
		k := preparedKey(side, ps.prepareSHA256)
		if c.preparedFor(ps, side) != nil {
			continue
		}
		if cand := c.preparedFor(ps, transcript.SideCandidate); side == transcript.SideBase && cand != nil && !cand.OK {
			break // its triples are INCOMPLETE whatever the base's prepare does
		}
		t := c.trees.Workers[w].Base
		if side == transcript.SideCandidate {
			t = c.trees.Workers[w].Cand[0]
		}
		pt, err := c.prepareTree(ctx, p, ps.prepareSHA256, t)
		if err != nil {
			return err
		}
		c.keepPrepared(k, p, pt, side)
	}
	if err := c.collectLayers(); err != nil {
		return err
	}
	return c.watchPrepares(ctx, ps)
}

// keepPrepared keeps the prepared layer pt of p under key k, says one
// line of it ("prepare candidate: 38.2 s (cached: no)", what names the
// tree) and adds it to the summary's prepares (under prepareMu).
func (c *site) keepPrepared(k string, p *config.Prepare, pt *preparedTree, what string) {
	c.preparedMu.Lock()
	c.prepared[k] = pt
	c.preparedMu.Unlock()
	cached := "no"
	if pt.Cached {
		cached = "yes"
	}
	line := fmt.Sprintf("prepare %s: %.1f s (cached: %s)", what, pt.Seconds, cached)
	if !pt.OK {
		line += ": " + pt.Reason
	}
	c.say(line)
	c.prepareRuns = append(c.prepareRuns, flakegate.PrepareRun{Side: pt.Side, PrepareSHA256: pt.SHA256, Command: p.Run,
		Seconds: pt.Seconds, Cached: pt.Cached, ExitCode: pt.Exit, OK: pt.OK, Reason: pt.Reason})
}

// suiteLayer is the prepared layer of the config's top-level prepare on
// t, which a suite's listing and new tests in t run over, as its
// triples do (their prepare is the top-level one): "" without a
// top-level prepare or a sandbox. The prepare runs once per tree and
// check, and is cached across checks, as a property's is; why says why
// it failed ("" when it did not).
func (c *site) suiteLayer(ctx context.Context, t *sitepkg.Tree) (dir, why string, err error) {
	p := c.cfg.Prepare
	if p == nil || c.iso.Mode != sitepkg.IsolationBwrap {
		return "", "", nil
	}
	c.prepareMu.Lock()
	defer c.prepareMu.Unlock()
	sha := sitepkg.PrepareSHA256(p, c.iso.Env)
	k, what := preparedKey(t.Side, sha), t.Side
	if t.Side == transcript.SideCandidate && t.SHA != c.suite.graded {
		// The candidate's own tree, whose new tests run: not the
		// graded tree of its triples.
		k, what = preparedKey("own "+t.Side, sha), "candidate (its own tree, for its new tests)"
	}
	c.preparedMu.Lock()
	if c.prepared == nil {
		c.prepared = map[string]*preparedTree{}
	}
	pt := c.prepared[k]
	c.preparedMu.Unlock()
	if pt == nil {
		if pt, err = c.prepareTree(ctx, p, sha, t); err != nil {
			return "", "", err
		}
		c.keepPrepared(k, p, pt, what)
	}
	if !pt.OK {
		return "", pt.Reason, nil
	}
	return pt.Dir, "", nil
}

// releasePrepares lets go of the layers this check used: a later
// collection may remove them.
func (c *site) releasePrepares() {
	c.preparedMu.Lock()
	defer c.preparedMu.Unlock()
	for _, pt := range c.prepared {
		if pt.Lock != nil {
			pt.Lock.Close()
			pt.Lock = nil
		}
	}
}

// prepareTree returns the prepared layer of tree t for p
// (site.PrepareTree), with what it wrote to the tree when it is kept.
func (c *site) prepareTree(ctx context.Context, p *config.Prepare, sha string, t *sitepkg.Tree) (*preparedTree, error) {
	sp, err := c.iso.PrepareTree(ctx, c.trees, c.preparedRoot(), p, sha, t)
	if err != nil {
		return nil, err
	}
	pt := &preparedTree{Prepared: sp}
	if !sp.OK {
		return pt, nil
	}
	return pt, c.layerWrites(pt)
}

// collectLayers removes the least recently used layers until those kept
// fit the config's bound (sitepkg.CollectLayers).
func (c *site) collectLayers() error {
	return sitepkg.CollectLayers(c.preparedRoot(), c.cfg.PrepareKeep(), c.say)
}

// preparedRoot is the folder of the repository's prepared layers.
func (c *site) preparedRoot() string { return sitepkg.PreparedRoot(c.common) }

// preparedFor returns the side's prepared layer of ps, nil without
// prepare or before it ran.
func (c *checker) preparedFor(ps *propState, side string) *preparedTree {
	if ps.prop.Prepare == nil {
		return nil
	}
	c.preparedMu.Lock()
	defer c.preparedMu.Unlock()
	return c.prepared[preparedKey(side, ps.prepareSHA256)]
}

// prepareFailure says why the triples of ps cannot run: a failed prepare
// of the candidate's tree or of the base's ("" when none failed).
func (c *checker) prepareFailure(ps *propState) string {
	var why []string
	for _, side := range []string{transcript.SideCandidate, transcript.SideBase} {
		if pt := c.preparedFor(ps, side); pt != nil && !pt.OK {
			why = append(why, side+" "+pt.Reason)
		}
	}
	if w := c.basePrepareWrote(ps); w != "" {
		why = append(why, w)
	}
	return strings.Join(why, "; ")
}

// attemptSandbox is the sandbox of one attempt of ps in t: with the
// prepared layer of t's side under it.
func (c *checker) attemptSandbox(t *sitepkg.Tree, ps *propState) *sandbox.Sandbox {
	sb := c.sandboxFor(t.Dir)
	if sb == nil {
		return nil
	}
	if pt := c.preparedFor(ps, t.Side); pt != nil && pt.OK {
		sb.Prepared = pt.Dir
	}
	return sb
}

// prepareEvents writes the prepares of ps into a transcript.
func (c *checker) prepareEvents(ps *propState, write func(transcript.Event)) {
	for _, side := range []string{transcript.SideCandidate, transcript.SideBase} {
		pt := c.preparedFor(ps, side)
		if pt == nil {
			continue
		}
		write(transcript.Event{Type: transcript.EventPrepare, Side: side, ExitCode: pt.Exit, WallSeconds: pt.Seconds, FromCache: pt.Cached, Reason: pt.Reason})
	}
}

// prepareSeconds is the wall time of the prepare of ps on side, nil
// without one.
func (c *checker) prepareSeconds(ps *propState, side string) *float64 {
	pt := c.preparedFor(ps, side)
	if pt == nil {
		return nil
	}
	s := pt.Seconds
	return &s
}
