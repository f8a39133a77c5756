// Doctor's run of the prepares: each distinct prepare of the config runs
// once on the base tree, as a check's base side runs it (prepareTree, in
// the check's own base worktree and sandbox), so that the run lines can
// look for each property's program in the prepared tree, inside the
// sandbox. The layer is kept as a check keeps it: the check's base side
// of the same commit reuses it.

package check

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/internal/flock"
	"github.com/flakegate/flakegate/runner"
	"github.com/flakegate/flakegate/transcript"
)

// doctorLockWait is how long doctor waits for the worktree lock a
// running check of the repository holds.
const doctorLockWait = time.Minute

// doctorPrep is what doctor's run of one prepare gave: the attempts'
// sandbox over the base tree with the prepared layer under it, or why
// the prepare failed.
type doctorPrep struct {
	sb     *runner.Sandbox
	failed string
}

// doctorPrepares runs the config's prepares, each once, on the base tree
// in the check's sandbox, and adds one line per prepare. It returns what
// each gave, by prepare, and done, which lets go of the layers and the
// worktrees. Without a prepare nothing runs and nothing is opened.
func (c *checker) doctorPrepares(ctx context.Context, rep *DoctorReport) (preps map[*config.Prepare]*doctorPrep, done func()) {
	done = func() {}
	type prep struct {
		p          *config.Prepare
		sha, where string
	}
	var todo []prep
	bySHA := map[string][]*config.Prepare{}
	for i := range c.cfg.Properties {
		p := c.cfg.Properties[i].Prepare
		if p == nil {
			continue
		}
		sha := prepareSHA256(p, c.iso.env)
		if _, ok := bySHA[sha]; !ok {
			where := "prepare"
			if p != c.cfg.Prepare {
				where = fmt.Sprintf("properties[%d].prepare", i)
			}
			todo = append(todo, prep{p, sha, where})
		}
		bySHA[sha] = append(bySHA[sha], p)
	}
	if len(todo) == 0 {
		return nil, done
	}
	preps = map[*config.Prepare]*doctorPrep{}
	set := func(sha string, dp *doctorPrep) {
		for _, p := range bySHA[sha] {
			preps[p] = dp
		}
	}
	failAll := func(why string) {
		for _, pr := range todo {
			set(pr.sha, &doctorPrep{failed: why})
		}
	}
	root, err := makeWorktreeRoot(c.common)
	if err != nil {
		rep.add(DoctorFail, "prepare", "%s", errLine(err))
		failAll(errLine(err))
		return preps, done
	}
	lock, err := flock.Lock(ctx, filepath.Join(root, ".lock"), flock.Options{What: "the worktree lock", Op: "doctor", Timeout: doctorLockWait})
	if err != nil {
		// Not the config's fault: the run lines say what they can without it.
		rep.add(DoctorWarn, "prepare", "not run (a check of this repository may hold its worktrees): %s", errLine(err))
		return nil, done
	}
	sb := c.iso.sandbox
	t := &tree{dir: filepath.Join(root, "base-0"), side: transcript.SideBase, sha: c.baseSHA, overlay: sb.Overlay || sb.Level.Copy}
	c.trees = &worktrees{workers: []*workerTrees{{base: t}}, lock: lock, git: c.git, overlay: t.overlay}
	c.prepared = map[string]*preparedTree{}
	done = func() {
		c.releasePrepares()
		c.trees.unlock()
	}
	if err := c.trees.prepare(ctx, t); err != nil {
		rep.add(DoctorFail, "prepare", "the base worktree: %s", errLine(err))
		failAll(errLine(err))
		return preps, done
	}
	if err := c.fillGoCache(ctx); err != nil {
		rep.add(DoctorFail, "prepare", "the Go build cache: %s", errLine(err))
		failAll(errLine(err))
		return preps, done
	}
	for _, pr := range todo {
		pt, err := c.prepareTree(ctx, transcript.SideBase, pr.p, pr.sha, c.trees.workers[0])
		if err != nil {
			rep.add(DoctorFail, "prepare", "%s: %s", pr.where, errLine(err))
			set(pr.sha, &doctorPrep{failed: errLine(err)})
			continue
		}
		c.prepared[preparedKey(transcript.SideBase, pr.sha)] = pt // releasePrepares lets go of it
		if !pt.ok {
			rep.add(DoctorFail, "prepare", "%s %q on the base (%s), in the check's sandbox: %s: every triple of its properties would be INCOMPLETE; fix its command, or drop it when nothing must be built (flakegate init writes a prepare only when one is needed and can run here)",
				pr.where, strings.Join(pr.p.Run, " "), flakegate.ShortSHA(c.baseSHA), pt.reason)
			set(pr.sha, &doctorPrep{failed: pt.reason})
			continue
		}
		cached := "no"
		if pt.cached {
			cached = "yes"
		}
		rep.add(DoctorOK, "prepare", "%s ran on the base (%s) in the check's sandbox: %.1f s (cached: %s); a check of this base reuses its layer", pr.where, flakegate.ShortSHA(c.baseSHA), pt.seconds, cached)
		psb := c.sandboxFor(t.dir)
		psb.Prepared = pt.dir
		set(pr.sha, &doctorPrep{sb: psb})
	}
	if err := c.collectLayers(); err != nil {
		rep.add(DoctorWarn, "prepare", "the kept layers were not collected: %s", errLine(err))
	}
	return preps, done
}

// preparedProbe says whether $1, a path relative to the tree, is an
// executable file there.
const preparedProbe = `if [ -f "$1" ] && [ -x "$1" ]; then echo found; elif [ -e "$1" ] || [ -L "$1" ]; then echo "not executable"; else echo missing; fi`

// doctorPreparedRun adds the run line of a property whose program prog
// (relative, not in the base tree) the prepare must make: looked for in
// the prepared tree, inside the sandbox, and for a Python one whether it
// has pytest and Hypothesis there.
func (c *checker) doctorPreparedRun(ctx context.Context, rep *DoctorReport, key, prog, prepInterp string, pytest bool, dp *doctorPrep, env []string) {
	if dp.failed != "" {
		rep.add(DoctorFail, "run", "%s: %s is not in the base tree and the prepare that must make it failed (the prepare line says why): every attempt would fail to start", key, prog)
		return
	}
	o := runner.Run(ctx, runner.Command{Argv: []string{"sh", "-c", preparedProbe, "sh", prog}, Dir: dp.sb.Tree, Env: env, Sandbox: dp.sb,
		WallBudget: 30 * time.Second, NoTestMarkers: []string{}})
	found := strings.TrimSpace(o.Tail)
	switch {
	case o.Result != runner.Pass:
		rep.add(DoctorFail, "run", "%s: %s: the sandbox could not look for it in the prepared tree: %s", key, prog, c.redact(strings.TrimSpace(o.Result+" "+o.Reason)))
		return
	case found == "missing":
		rep.add(DoctorFail, "run", "%s: %s is neither in the base tree nor made by the prepare (it ran, and the prepared tree has no %s): every attempt would fail to start; make the prepare create it, commit it, or run a program on PATH (flakegate init writes one that runs)", key, prog, prog)
		return
	case found != "found":
		rep.add(DoctorFail, "run", "%s: the prepare made %s, but it is not an executable file (a link to nothing, or no x bit): every attempt would fail to start; make the prepare leave an executable there (chmod +x)", key, prog)
		return
	}
	if !isPython(prog) {
		rep.add(DoctorOK, "run", "%s: %s is made by the prepare (in the prepared tree, in the sandbox)", key, prog)
		return
	}
	path, missing, ok, why := c.sandboxPython(ctx, dp.sb, env, prog)
	switch {
	case why != "" || !ok:
		rep.add(DoctorFail, "run", "%s: %s is made by the prepare, but does not run in the sandbox: %s", key, prog, orNone(why))
	case pytest && len(missing) > 0:
		rep.add(DoctorFail, "run", "%s: %s is made by the prepare, and cannot import %s in the sandbox: the test never runs; make the prepare install it, or run an interpreter outside $HOME that has it (flakegate init picks one)", key, prog, strings.Join(missing, " or "))
	default:
		line := fmt.Sprintf("%s: %s is made by the prepare (%s in the sandbox)", key, prog, path)
		if pytest {
			line += ", with pytest and Hypothesis"
		}
		if prepInterp != "" {
			if pp, _, pfound, _ := c.sandboxPython(ctx, dp.sb, env, prepInterp); pfound {
				line += fmt.Sprintf("; the prepare's %s is %s", prepInterp, pp)
			}
		}
		rep.add(DoctorOK, "run", "%s", line)
	}
}
