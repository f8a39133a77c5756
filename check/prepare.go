// The prepare of a tree: run once per tree, command and environment, in
// the attempt's sandbox with the tree writable; what it writes to the
// tree and to the Go build cache is kept as a prepared layer, laid
// read-only under every attempt of that tree, and cached across checks
// under <git common dir>/flakegate/prepared (which no attempt can see).

package check

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/internal/atomicfile"
	"github.com/flakegate/flakegate/runner"
	"github.com/flakegate/flakegate/transcript"
)

// preparedTree is the prepared layer of one side's tree for one prepare.
type preparedTree struct {
	side    string
	sha256  string // prepare_sha256: its command and environment
	dir     string // the layer (tree/, gocache/), when ok
	ok      bool
	reason  string // why it failed: "prepare failed: exit 1: <tail>"
	seconds float64
	cached  bool
	exit    int
}

// prepareMeta is what a cached layer says about the prepare that built it.
type prepareMeta struct {
	Command  []string  `json:"command"`
	Seconds  float64   `json:"seconds"`
	ExitCode int       `json:"exit_code"`
	At       time.Time `json:"at"`
	Tail     string    `json:"tail"`
}

// prepareSHA256 is the digest of a prepare's command and environment
// (the records' extra key "prepare_sha256").
func prepareSHA256(p *config.Prepare, env []string) string {
	b, _ := json.Marshal(struct {
		Run     []string `json:"run"`
		Network bool     `json:"network"`
		Env     []string `json:"env"`
	}{p.Run, p.Network, env})
	return sha256Hex(b)
}

func preparedKey(side, sha string) string { return side + "\x00" + sha }

// runPrepares prepares the trees the properties need, before any
// attempt: per side and per distinct prepare, once. It says one line per
// tree ("prepare candidate: 38.2 s (cached: no)").
func (c *checker) runPrepares(ctx context.Context) error {
	c.prepared = map[string]*preparedTree{}
	for _, ps := range c.props {
		p := ps.prop.Prepare
		if p == nil {
			continue
		}
		ps.prepareSHA256 = prepareSHA256(p, c.iso.env)
		if len(ps.contaminated) > 0 && !c.opts.RunContaminated {
			continue // no attempt runs
		}
		for _, side := range []string{transcript.SideCandidate, transcript.SideBase} {
			k := preparedKey(side, ps.prepareSHA256)
			if c.prepared[k] != nil {
				continue
			}
			pt, err := c.prepareTree(ctx, side, p, ps.prepareSHA256)
			if err != nil {
				return err
			}
			c.prepared[k] = pt
			cached := "no"
			if pt.cached {
				cached = "yes"
			}
			line := fmt.Sprintf("prepare %s: %.1f s (cached: %s)", side, pt.seconds, cached)
			if !pt.ok {
				line += ": " + pt.reason
			}
			c.say(line)
			c.prepareRuns = append(c.prepareRuns, flakegate.PrepareRun{Side: side, PrepareSHA256: pt.sha256, Command: p.Run,
				Seconds: pt.seconds, Cached: pt.cached, ExitCode: pt.exit, OK: pt.ok, Reason: pt.reason})
		}
	}
	return nil
}

// prepareTree returns the side's prepared layer for p: cached, or built
// now. A prepare that fails is not an error of the check: the layer says
// why, and every triple of that tree is INCOMPLETE. Nothing of a failed
// prepare is kept.
func (c *checker) prepareTree(ctx context.Context, side string, p *config.Prepare, sha string) (*preparedTree, error) {
	pt := &preparedTree{side: side, sha256: sha, exit: -1}
	wt := c.trees.workers[0]
	t := wt.base
	if side == transcript.SideCandidate {
		t = wt.cand[0]
	}
	if c.iso.mode != IsolationBwrap || !c.iso.sandbox.Overlay || !c.iso.sandbox.Level.Root {
		pt.reason = "prepare failed: a prepare needs attempts on overlays (flakegate as root, with overlayfs), so that its layer can lie under them"
		return pt, nil
	}
	sb := c.sandboxFor(t.dir)
	key := preparedLayerKey(t.sha, sha, c.iso.label(), sb.GoCache, sb.Level.UID, p.Budget)
	root := filepath.Join(c.common, "flakegate", "prepared")
	final := filepath.Join(root, key)
	if m, ok := readPrepareMeta(final); ok {
		pt.dir, pt.ok, pt.cached, pt.seconds, pt.exit = final, true, true, m.Seconds, m.ExitCode
		return pt, nil
	}
	if err := os.MkdirAll(root, 0o700); err != nil { // root only: no attempt walks into it
		return nil, &flakegate.Error{Code: flakegate.EINTERNAL, Op: "check", Path: root, Message: "cannot create the prepared layers' folder", Err: err}
	}
	if err := t.acquire(); err != nil {
		return nil, &flakegate.Error{Code: flakegate.EINTERNAL, Op: "check", Path: t.dir, Message: "cannot prepare the worktree", Err: err}
	}
	if side == transcript.SideBase {
		if err := c.trees.prove(ctx, t); err != nil {
			return nil, err
		}
	}
	// The layer is built in place: the worktree lock keeps other checks of
	// this repository out, and a layer without meta.json (a check killed
	// while preparing, or a failed prepare) is never used and is removed.
	if err := os.RemoveAll(final); err != nil {
		return nil, &flakegate.Error{Code: flakegate.EINTERNAL, Op: "check", Path: final, Message: "cannot remove an unfinished prepared layer", Err: err}
	}
	keep := false
	defer func() {
		if !keep {
			os.RemoveAll(final)
		}
	}()
	for _, d := range []string{"", "tree", "tree.work", "gocache", "gocache.work"} {
		if err := os.Mkdir(filepath.Join(final, d), 0o755); err != nil {
			return nil, &flakegate.Error{Code: flakegate.EINTERNAL, Op: "check", Path: final, Message: "cannot create a prepared layer", Err: err}
		}
	}
	sb.Persist, sb.Network = final, p.Network
	out := runner.Run(ctx, runner.Command{Argv: p.Run, Dir: t.dir, Env: c.iso.env, WallBudget: p.Budget, Sandbox: sb, NoTestMarkers: []string{}})
	if ctx.Err() != nil {
		return nil, interrupted(ctx)
	}
	pt.seconds, pt.exit = roundSeconds(out.Wall), out.ExitCode
	tail := c.redact(out.Tail)
	switch out.Result {
	case runner.Pass:
	case runner.Timeout:
		pt.reason = fmt.Sprintf("prepare failed: ran past its budget %s: %s", p.Budget, shortTail(tail))
		if out.Limit != "" {
			pt.reason = fmt.Sprintf("prepare failed: sandbox %s reached: %s", out.Limit, shortTail(tail))
		}
		return pt, nil
	default:
		why := fmt.Sprintf("exit %d", out.ExitCode)
		if out.ExitCode < 0 {
			why = c.redact(out.Reason)
		}
		pt.reason = "prepare failed: " + why + ": " + shortTail(tail)
		return pt, nil
	}
	for _, d := range []string{"tree.work", "gocache.work"} {
		os.RemoveAll(filepath.Join(final, d))
	}
	m := prepareMeta{Command: p.Run, Seconds: pt.seconds, ExitCode: out.ExitCode, At: time.Now().UTC(), Tail: tail}
	b, _ := json.Marshal(m)
	if err := atomicfile.WriteFile(filepath.Join(final, "meta.json"), b, 0o644); err != nil {
		return nil, &flakegate.Error{Code: flakegate.EINTERNAL, Op: "check", Path: final, Message: "cannot keep the prepared layer", Err: err}
	}
	keep = true
	pt.dir, pt.ok = final, true
	return pt, nil
}

// preparedLayerKey names the prepared layer of a tree's commit for one
// prepare (check and replay alike: the replay finds the check's layer).
func preparedLayerKey(treeSHA, prepareSHA, isolation, goCache string, uid int, budget time.Duration) string {
	kb, _ := json.Marshal(struct {
		Tree, Prepare, Isolation, GoCache, Version string
		UID                                        int
		Budget                                     float64
	}{treeSHA, prepareSHA, isolation, goCache, flakegate.Version, uid, budget.Seconds()})
	return sha256Hex(kb)
}

func readPrepareMeta(dir string) (prepareMeta, bool) {
	var m prepareMeta
	b, err := os.ReadFile(filepath.Join(dir, "meta.json"))
	if err != nil || json.Unmarshal(b, &m) != nil {
		return m, false
	}
	return m, true
}

// shortTail is the end of a prepare's output for a reason: its last
// lines, at most 400 bytes, on one line.
func shortTail(tail string) string {
	tail = strings.TrimSpace(tail)
	if len(tail) > 400 {
		tail = "..." + tail[len(tail)-400:]
	}
	tail = strings.Join(strings.Fields(strings.ReplaceAll(tail, "\n", " | ")), " ")
	if tail == "" {
		return "(no output)"
	}
	return tail
}

// preparedFor returns the side's prepared layer of ps, nil without prepare.
func (c *checker) preparedFor(ps *propState, side string) *preparedTree {
	if ps.prop.Prepare == nil || c.prepared == nil {
		return nil
	}
	return c.prepared[preparedKey(side, ps.prepareSHA256)]
}

// prepareFailure says why the triples of ps cannot run: a failed prepare
// of the candidate's tree or of the base's ("" when none failed).
func (c *checker) prepareFailure(ps *propState) string {
	var why []string
	for _, side := range []string{transcript.SideCandidate, transcript.SideBase} {
		if pt := c.preparedFor(ps, side); pt != nil && !pt.ok {
			why = append(why, side+" "+pt.reason)
		}
	}
	return strings.Join(why, "; ")
}

// attemptSandbox is the sandbox of one attempt of ps in t: with the
// prepared layer of t's side under it.
func (c *checker) attemptSandbox(t *tree, ps *propState) *runner.Sandbox {
	sb := c.sandboxFor(t.dir)
	if sb == nil {
		return nil
	}
	if pt := c.preparedFor(ps, t.side); pt != nil && pt.ok {
		sb.Prepared = pt.dir
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
		write(transcript.Event{Type: transcript.EventPrepare, Side: side, ExitCode: pt.exit, WallSeconds: pt.seconds, FromCache: pt.cached, Reason: pt.reason})
	}
}

// prepareSeconds is the wall time of the prepare of ps on side, nil
// without one.
func (c *checker) prepareSeconds(ps *propState, side string) *float64 {
	pt := c.preparedFor(ps, side)
	if pt == nil {
		return nil
	}
	s := pt.seconds
	return &s
}
