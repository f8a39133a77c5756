// Doctor's look at what check will run: each property's run[0] (after
// env), as the attempt will find it (in the base tree, in the tree the
// prepare made, which prepare.go runs, or on the sandbox's PATH), and for pytest properties whether
// that interpreter has pytest and Hypothesis, inside the sandbox, and
// whether the interpreter the prepare gets is the one the attempts get.

package doctor

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/attempt/sandbox"
	"github.com/flakegate/flakegate/batch"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/evidence"
	"github.com/flakegate/flakegate/template"
)

// runProgram is the program an argv runs: argv[0], or after env (its
// options and NAME=VALUE assignments) the first other word.
func runProgram(argv []string) string {
	if len(argv) == 0 {
		return ""
	}
	if filepath.Base(argv[0]) != "env" {
		return argv[0]
	}
	rest := argv[1:]
	for len(rest) > 0 && (strings.HasPrefix(rest[0], "-") || strings.Contains(rest[0], "=")) {
		if rest[0] == "-u" || rest[0] == "-C" || rest[0] == "--unset" || rest[0] == "--chdir" {
			rest = rest[1:]
		}
		if len(rest) > 0 {
			rest = rest[1:]
		}
	}
	if len(rest) == 0 {
		return ""
	}
	return rest[0]
}

// isPython reports whether prog names a Python interpreter.
func isPython(prog string) bool {
	b := filepath.Base(prog)
	return b == "python" || strings.HasPrefix(b, "python3")
}

// prepareInterpreter is the Python interpreter a prepare's command
// starts (its argv[0], or the first python word of its sh -c script); ""
// when it names none.
func prepareInterpreter(run []string) string {
	if len(run) == 0 {
		return ""
	}
	if p := runProgram(run); isPython(p) {
		return p
	}
	switch filepath.Base(run[0]) {
	case "sh", "bash", "dash", "zsh":
		if i := slices.Index(run, "-c"); i > 0 && i+1 < len(run) {
			for _, w := range strings.FieldsFunc(run[i+1], func(r rune) bool { return strings.ContainsRune(" \t\n;|&()`$<>'\"", r) }) {
				if isPython(w) && !strings.Contains(w, "/") || filepath.IsAbs(w) && isPython(w) {
					return w
				}
			}
		}
	}
	return ""
}

// pytestProbe prints the path the interpreter runs and the modules among
// pytest and hypothesis it cannot import.
const pytestProbe = `p=$(command -v "$1") || { echo "not found"; exit 0; }; echo "$p"; "$p" -I -c 'import importlib.util, sys
print(" ".join(m for m in ("pytest", "hypothesis") if importlib.util.find_spec(m) is None) or "-")' 2>&1`

// sandboxPython asks prog, inside sb with the attempts' environment,
// where it is and whether it has pytest and Hypothesis. found is false
// when the sandbox has no such program; missing lists what it lacks.
func (d *doctor) sandboxPython(ctx context.Context, sb *sandbox.Sandbox, env []string, prog string) (path string, missing []string, found bool, err string) {
	o := attempt.Run(ctx, attempt.Command{Argv: []string{"sh", "-c", pytestProbe, "sh", prog}, Dir: sb.Tree, Env: env, Sandbox: sb,
		WallBudget: 30 * time.Second, NoTestMarkers: []string{}})
	if o.Result != attempt.Pass {
		return "", nil, false, d.site.Redact(strings.TrimSpace(o.Result + " " + o.Reason))
	}
	lines := strings.Split(strings.TrimSpace(o.Tail), "\n")
	if len(lines) == 0 || lines[0] == "not found" {
		return "", nil, false, ""
	}
	path = strings.TrimSpace(lines[0])
	if len(lines) > 1 {
		last := strings.TrimSpace(lines[len(lines)-1])
		if last != "-" {
			missing = strings.Fields(last)
			if !slices.Equal(missing, []string{"pytest"}) && !slices.Equal(missing, []string{"hypothesis"}) && !slices.Equal(missing, []string{"pytest", "hypothesis"}) {
				return path, nil, true, "it did not answer: " + last
			}
		}
	} else {
		return path, nil, true, "it did not answer"
	}
	return path, missing, true, ""
}

// runs adds one line per property's run[0]: where the attempt finds
// it, and for a pytest property, inside the sandbox, whether its
// interpreter has pytest and Hypothesis and whether the prepare's
// interpreter is the same one.
func (d *doctor) runs(ctx context.Context, sb *sandbox.Sandbox, env []string, baseFiles map[string]bool, preps map[*config.Prepare]*prepResult) {
	rep := d.rep
	type seenKey struct {
		prog, prep string
		prepare    *config.Prepare
	}
	seen := map[seenKey]bool{}
	for i := range d.cfg.Properties {
		p := &d.cfg.Properties[i]
		key := fmt.Sprintf("properties[%d].run", i)
		argv, err := template.Expand(p.Run, batch.Vars(p, flakegate.Seed("1")))
		if err != nil {
			continue // the config line said so
		}
		prog := runProgram(argv)
		prepInterp := ""
		if p.Prepare != nil {
			prepInterp = prepareInterpreter(p.Prepare.Run)
		}
		if prog == "" || seen[seenKey{prog, prepInterp, p.Prepare}] {
			continue
		}
		seen[seenKey{prog, prepInterp, p.Prepare}] = true
		pytest := evidence.DetectFramework(p.Run) == "pytest"
		relative := strings.Contains(prog, "/") && !filepath.IsAbs(prog)
		switch {
		case relative && baseFiles[filepath.Clean(prog)]:
			rep.add(OK, "run", "%s: %s is in the base tree", key, prog)
			continue
		case relative && p.Prepare == nil:
			rep.add(Fail, "run", "%s: %s is not in the base tree and no prepare makes it: every attempt fails to start; commit it, add a prepare that makes it, or run a program on PATH (flakegate init writes one that runs)", key, prog)
			continue
		case relative:
			// Made by the prepare: looked for in the tree it prepared.
			if dp := preps[p.Prepare]; dp != nil {
				d.preparedRun(ctx, key, prog, prepInterp, pytest, dp, env)
				continue
			}
			// Not prepared here: a virtual environment's python is the
			// prepare's interpreter (with its system packages).
			if !isPython(prog) || prepInterp == "" {
				rep.add(Warn, "run", "%s: %s is not in the base tree: the prepare must make it (the prepare did not run here)", key, prog)
				continue
			}
			if sb == nil {
				rep.add(Warn, "run", "%s: %s is made by the prepare from %s (not looked at in a sandbox here)", key, prog, prepInterp)
				continue
			}
			path, missing, found, why := d.sandboxPython(ctx, sb, env, prepInterp)
			switch {
			case why != "":
				rep.add(Fail, "run", "%s: the prepare's %s: the sandbox could not ask it: %s", key, prepInterp, why)
			case !found:
				rep.add(Fail, "run", "%s: %s is made by the prepare from %s, which the sandbox does not find: the prepare fails, and every attempt with it; call an interpreter the sandbox sees by its absolute path (/usr/bin/python3)", key, prog, prepInterp)
			case pytest && len(missing) > 0:
				rep.add(Warn, "run", "%s: %s is made by the prepare from %s, which is %s in the sandbox and has no %s: the attempts get pytest only if the prepare installs it; an interpreter outside $HOME that has it (flakegate init picks one) needs no prepare", key, prog, prepInterp, path, strings.Join(missing, " or "))
			default:
				rep.add(OK, "run", "%s: %s is made by the prepare from %s (%s in the sandbox, the one the attempts' virtual environment gets)", key, prog, prepInterp, path)
			}
			continue
		}
		if !pytest || !isPython(prog) {
			continue // the toolchain lines looked it up
		}
		if sb == nil {
			rep.add(Warn, "run", "%s: %s: whether it has pytest is not looked at without a sandbox", key, prog)
			continue
		}
		psb := sb // the prepared tree under it, when the prepare ran
		if dp := preps[p.Prepare]; dp != nil && dp.sb != nil {
			psb = dp.sb
		}
		path, missing, found, why := d.sandboxPython(ctx, psb, env, prog)
		switch {
		case why != "":
			rep.add(Fail, "run", "%s: %s: the sandbox could not ask it: %s", key, prog, why)
		case !found:
			rep.add(Fail, "run", "%s: %s is not found in the sandbox: every attempt fails to start; run an interpreter the sandbox sees by its absolute path (flakegate init picks one)", key, prog)
		case len(missing) > 0:
			rep.add(Fail, "run", "%s: %s is %s in the sandbox, which cannot import %s: the test never runs; install it for that interpreter (Debian: apt-get install python3-pytest python3-hypothesis), or run one that has it (flakegate init picks one; a pyenv shim under $HOME is not what the sandbox runs)", key, prog, path, strings.Join(missing, " or "))
		default:
			line := fmt.Sprintf("%s: %s is %s in the sandbox, with pytest and Hypothesis", key, prog, path)
			if prepInterp != "" {
				pp, _, pfound, _ := d.sandboxPython(ctx, psb, env, prepInterp)
				if pfound && pp != path {
					rep.add(Warn, "run", "%s; but the prepare's %s is %s: what the prepare installs is not what the attempts import; name the same interpreter in both", line, prepInterp, pp)
					continue
				}
				if pfound {
					line += "; the prepare gets the same one"
				}
			}
			rep.add(OK, "run", "%s", line)
		}
	}
}
