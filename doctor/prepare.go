// Doctor's run of the prepares: each distinct prepare of the config runs
// once on the base tree, as a check's base side runs it
// (check.Site.PrepareBase, in the check's own base worktree and sandbox),
// so that the run lines can look for each property's program in the
// prepared tree, inside the sandbox. The layer is kept as a check keeps
// it: the check's base side of the same commit reuses it.

package doctor

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/attempt/sandbox"
	"github.com/flakegate/flakegate/config"
)

// prepResult is what doctor's run of one prepare gave: the attempts'
// sandbox over the base tree with the prepared layer under it, or why
// the prepare failed.
type prepResult struct {
	sb     *sandbox.Sandbox
	failed string
}

// prepares runs the config's prepares, each once, on the base tree in
// the check's sandbox, and adds one line per prepare. It returns what
// each gave, by prepare, and done, which lets go of the layers and the
// worktrees.
func (d *doctor) prepares(ctx context.Context) (map[*config.Prepare]*prepResult, func()) {
	rep, sha := d.rep, flakegate.ShortSHA(d.base.SHA)
	res, done := d.site.PrepareBase(ctx)
	if res.Busy != nil {
		// Not the config's fault: the run lines say what they can without it.
		rep.add(Warn, "prepare", "not run (a check of this repository may hold its worktrees): %s", errLine(res.Busy))
		return nil, done
	}
	if len(res.Runs) == 0 {
		return nil, done
	}
	preps := map[*config.Prepare]*prepResult{}
	if res.Err != nil {
		what := ""
		if res.ErrWhat != "" {
			what = res.ErrWhat + ": "
		}
		rep.add(Fail, "prepare", "%s%s", what, errLine(res.Err))
	}
	for _, bp := range res.Runs {
		pr := &prepResult{sb: bp.Sandbox}
		switch {
		case res.Err != nil:
			pr.failed = errLine(res.Err)
		case bp.Err != nil:
			pr.failed = errLine(bp.Err)
			rep.add(Fail, "prepare", "%s: %s", bp.Where, pr.failed)
		case bp.Failed != "":
			pr.failed = bp.Failed
			rep.add(Fail, "prepare", "%s %q on the base (%s), in the check's sandbox: %s: every triple of its properties would be INCOMPLETE; fix its command, or drop it when nothing must be built (flakegate init writes a prepare only when one is needed and can run here)",
				bp.Where, strings.Join(bp.Prepare.Run, " "), sha, bp.Failed)
		default:
			cached := "no"
			if bp.Cached {
				cached = "yes"
			}
			rep.add(OK, "prepare", "%s ran on the base (%s) in the check's sandbox: %.1f s (cached: %s); a check of this base reuses its layer", bp.Where, sha, bp.Seconds, cached)
		}
		for _, p := range bp.Shared {
			preps[p] = pr
		}
	}
	if res.Err == nil && res.Uncollected != nil {
		rep.add(Warn, "prepare", "the kept layers were not collected: %s", errLine(res.Uncollected))
	}
	return preps, done
}

// preparedProbe says whether $1, a path relative to the tree, is an
// executable file there.
const preparedProbe = `if [ -f "$1" ] && [ -x "$1" ]; then echo found; elif [ -e "$1" ] || [ -L "$1" ]; then echo "not executable"; else echo missing; fi`

// preparedRun adds the run line of a property whose program prog
// (relative, not in the base tree) the prepare must make: looked for in
// the prepared tree, inside the sandbox, and for a Python one whether it
// has pytest and Hypothesis there.
func (d *doctor) preparedRun(ctx context.Context, key, prog, prepInterp string, pytest bool, dp *prepResult, env []string) {
	rep := d.rep
	if dp.failed != "" {
		rep.add(Fail, "run", "%s: %s is not in the base tree and the prepare that must make it failed (the prepare line says why): every attempt would fail to start", key, prog)
		return
	}
	o := attempt.Run(ctx, attempt.Command{Argv: []string{"sh", "-c", preparedProbe, "sh", prog}, Dir: dp.sb.Tree, Env: env, Sandbox: dp.sb,
		WallBudget: 30 * time.Second, NoTestMarkers: []string{}})
	found := strings.TrimSpace(o.Tail)
	switch {
	case o.Result != attempt.Pass:
		rep.add(Fail, "run", "%s: %s: the sandbox could not look for it in the prepared tree: %s", key, prog, d.site.Redact(strings.TrimSpace(o.Result+" "+o.Reason)))
		return
	case found == "missing":
		rep.add(Fail, "run", "%s: %s is neither in the base tree nor made by the prepare (it ran, and the prepared tree has no %s): every attempt would fail to start; make the prepare create it, commit it, or run a program on PATH (flakegate init writes one that runs)", key, prog, prog)
		return
	case found != "found":
		rep.add(Fail, "run", "%s: the prepare made %s, but it is not an executable file (a link to nothing, or no x bit): every attempt would fail to start; make the prepare leave an executable there (chmod +x)", key, prog)
		return
	}
	if !isPython(prog) {
		rep.add(OK, "run", "%s: %s is made by the prepare (in the prepared tree, in the sandbox)", key, prog)
		return
	}
	path, missing, ok, why := d.sandboxPython(ctx, dp.sb, env, prog)
	switch {
	case why != "" || !ok:
		rep.add(Fail, "run", "%s: %s is made by the prepare, but does not run in the sandbox: %s", key, prog, orNone(why))
	case pytest && len(missing) > 0:
		rep.add(Fail, "run", "%s: %s is made by the prepare, and cannot import %s in the sandbox: the test never runs; make the prepare install it, or run an interpreter outside $HOME that has it (flakegate init picks one)", key, prog, strings.Join(missing, " or "))
	default:
		line := fmt.Sprintf("%s: %s is made by the prepare (%s in the sandbox)", key, prog, path)
		if pytest {
			line += ", with pytest and Hypothesis"
		}
		if prepInterp != "" {
			if pp, _, pfound, _ := d.sandboxPython(ctx, dp.sb, env, prepInterp); pfound {
				line += fmt.Sprintf("; the prepare's %s is %s", prepInterp, pp)
			}
		}
		rep.add(OK, "run", "%s", line)
	}
}
