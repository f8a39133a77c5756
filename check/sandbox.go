package check

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/attempt/sandbox"
	"github.com/flakegate/flakegate/config"
)

// Isolation values of records and summaries.
const (
	IsolationBwrap = "bwrap"
	IsolationNone  = "none"
)

// isolation is how a check's attempts, or a replay, run.
type isolation struct {
	mode      string          // IsolationBwrap or IsolationNone
	sandbox   sandbox.Sandbox // the sandbox without its Tree (bwrap only)
	env       []string        // every command's environment
	secrets   []string        // values never written anywhere
	noOverlay bool            // FLAKEGATE_NO_OVERLAY=1: a fresh copy per attempt
	probed    bool            // sandbox.Level is the host's (chooseTrees)
	spec      sandboxSpec     // what it was built from
}

// label is the records' and summaries' "isolation": "none", or the
// sandbox level reached (sandbox.Level.String), "bwrap" before the probe.
func (iso *isolation) label() string {
	if iso.mode != IsolationBwrap || !iso.probed {
		return iso.mode
	}
	return iso.sandbox.Level.String(iso.sandbox.Overlay)
}

// sandboxSpec is what a sandbox is built from, the same way for check's
// attempts and for a replay (buildIsolation): one builder, so that the
// two cannot drift apart.
type sandboxSpec struct {
	op      string          // "check" or "replay", in errors
	cfgPath string          // the config the block comes from ("" for flags), in errors
	block   *config.Sandbox // mode, ro, rw, network, env names, limits
	env     []string        // flakegate's environment, the only source of values
	secrets []string        // more values never passed nor written
	// noOverlay is FLAKEGATE_NO_OVERLAY=1, as the CLI read it: a fresh
	// copy per attempt instead of overlays.
	noOverlay bool
	bwrap     string   // the bubblewrap binary; "" looks it up on PATH
	optOut    string   // how the user opts out of the sandbox, for the hint
	guarded   []string // the gate's own state: no ro or rw path may overlap one
	hide      []string // more host paths the command must not see
}

// buildIsolation resolves a sandbox: bwrap unless the block says mode:
// none, the shared paths (refused when they reach guarded state, or when
// an rw path is no folder), the paths the command must not see (spec.hide
// and flakegate's own binary) and the command's environment: an
// allow-list, never a secret.
func buildIsolation(spec sandboxSpec) (*isolation, error) {
	sb := spec.block
	iso := &isolation{mode: IsolationBwrap, secrets: SecretValues(spec.env, spec.secrets), noOverlay: spec.noOverlay, spec: spec}
	if sb.Mode == config.SandboxNone {
		iso.mode = IsolationNone
	}
	if iso.mode == IsolationBwrap {
		bwrap := spec.bwrap
		if bwrap == "" {
			p, err := exec.LookPath("bwrap")
			if err != nil {
				return nil, &flakegate.Error{Code: flakegate.EINVALID, Op: spec.op, Path: spec.cfgPath,
					Message: "bwrap (bubblewrap) was not found on PATH: every test command runs in a bubblewrap sandbox by default",
					Hint:    "install it (apt-get install bubblewrap), or " + spec.optOut}
			}
			bwrap = p
		}
		if abs, err := filepath.Abs(bwrap); err == nil {
			bwrap = abs
		}
		for _, g := range spec.guarded {
			if within(bwrap, g) {
				// A PATH folder inside the checkout: its bwrap is the
				// patch's, and would build every attempt's sandbox.
				return nil, &flakegate.Error{Code: flakegate.EINVALID, Op: spec.op, Path: bwrap,
					Message: "bwrap resolves to a file inside " + g + ": flakegate runs no program of the repository or of its own state outside the sandbox, and bwrap is the sandbox",
					Hint:    "put the system's folder (/usr/bin) first on PATH"}
			}
		}
		if err := checkSharedPaths(spec); err != nil {
			return nil, err
		}
		iso.sandbox = *sandbox.New(sandbox.Sandbox{Bwrap: bwrap, Home: sandbox.SandboxHomeFor(spec.env), Network: sb.Network,
			RO: append([]string(nil), sb.RO...), RW: append([]string(nil), sb.RW...),
			Limits: sandbox.Limits{Memory: sb.Limits.Memory, Pids: sb.Limits.Pids, Tmp: sb.Limits.Tmp, Disk: sb.Limits.Disk}})
		hide := append(append([]string(nil), spec.hide...), sandbox.HideSelf(spec.env)...)
		for i := range hide {
			hide[i] = resolved(hide[i])
		}
		iso.sandbox.Hide = hide
	}

	envSpec := sandbox.EnvSpec{Src: spec.env, Names: sb.Env, Refuse: config.SecretName, Secrets: iso.secrets}
	if iso.mode == IsolationBwrap {
		envSpec.Sandbox = &iso.sandbox
	}
	iso.env = sandbox.AttemptEnv(envSpec)
	return iso, nil
}

// close ends the sandbox's standbys and waits for its attempts' cgroups
// to go (sandbox.Sandbox.Close); nil and mode none close nothing.
func (iso *isolation) close() {
	if iso != nil && iso.mode == IsolationBwrap {
		iso.sandbox.Close()
	}
}

// setupIsolation resolves the sandbox of the base config for every
// attempt of this check, from opts and the file ledger at ledgerPath (""
// for none), which no attempt may reach.
func (c *site) setupIsolation(ctx context.Context, opts SiteOptions, ledgerPath string) error {
	guarded := []string{c.top, c.common, c.outDir, shmUserDir()} // the last: the trees on a tmpfs (treeroot.go)
	if ledgerPath != "" {
		if abs, err := filepath.Abs(ledgerPath); err == nil {
			guarded = append(guarded, abs)
		}
	}
	spec := sandboxSpec{op: "check", cfgPath: c.cfgPath, block: &c.cfg.Sandbox, env: opts.Env, secrets: opts.Secrets,
		noOverlay: opts.NoOverlay, bwrap: opts.Bwrap, guarded: guarded,
		optOut: "opt out in the base config with sandbox: {mode: none} (records then say \"isolation\": \"none\" and earn no freeze)"}
	if c.cfg.Sandbox.Mode != config.SandboxNone {
		// Every other worktree of the repository, as well as the gate's
		// own state.
		others, err := c.git.Worktrees(ctx)
		if err != nil {
			return err
		}
		spec.hide = append(append([]string(nil), guarded...), others...)
	}
	iso, err := buildIsolation(spec)
	if err != nil {
		return err
	}
	// Fresh copies (where no overlay can be mounted) beside the
	// worktrees: on their file system, where a reflink can share blocks.
	iso.sandbox.CopyDir = filepath.Join(c.common, "flakegate", "copies")
	c.iso = iso
	// The attempts' Go caches are the repository's, built from the base
	// (gocachesite.go); the runner's own are hidden.
	c.goc, err = setupGoCaches(ctx, c.git, c.common, c.baseSHA, iso, envGetter(opts.Env))
	return err
}

// envGetter looks a variable up in env, the last one winning.
func envGetter(env []string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		for i := len(env) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(env[i], name+"="); ok {
				return v, true
			}
		}
		return "", false
	}
}

// checkSharedPaths refuses sandbox.ro and sandbox.rw paths that would
// give the command the gate's own state (spec.guarded), and rw paths that
// do not exist.
func checkSharedPaths(spec sandboxSpec) error {
	sb := spec.block
	for _, list := range []struct {
		key   string
		paths []string
	}{{"sandbox.ro", sb.RO}, {"sandbox.rw", sb.RW}} {
		for i, p := range list.paths {
			key := fmt.Sprintf("%s[%d]", list.key, i)
			for _, g := range spec.guarded {
				if overlaps(p, g) {
					return &flakegate.Error{Code: flakegate.EINVALID, Op: "config", Path: spec.cfgPath,
						Message: fmt.Sprintf("%s: %s overlaps %s, which the code under test must not reach (the repository, its git folder, the ledger or the output folder)", key, p, g),
						Hint:    "share only folders outside the repository and flakegate's state"}
				}
			}
			if list.key == "sandbox.rw" {
				if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
					return &flakegate.Error{Code: flakegate.EINVALID, Op: "config", Path: spec.cfgPath,
						Message: fmt.Sprintf("%s: %s is not a folder on this machine", key, p),
						Hint:    "create it first, or remove it from sandbox.rw"}
				}
			}
		}
	}
	return nil
}

// within reports whether p is dir or inside it (after resolving symlinks
// where they exist).
func within(p, dir string) bool {
	p, dir = resolved(p), resolved(dir)
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

// overlaps reports whether one of two absolute paths is inside the other
// (after resolving symlinks where they exist).
func overlaps(a, b string) bool {
	a, b = resolved(a), resolved(b)
	return a == b || strings.HasPrefix(a, b+"/") || strings.HasPrefix(b, a+"/")
}

func resolved(p string) string {
	if r, err := evalExisting(filepath.Clean(p)); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// sandboxFor is the sandbox of one attempt in tree, nil without bwrap.
func (c *site) sandboxFor(tree string) *sandbox.Sandbox {
	if c.iso.mode != IsolationBwrap {
		return nil
	}
	sb := c.iso.sandbox
	sb.Tree = tree
	return &sb
}

// SecretValues are the values flakegate must never pass on or write: those
// of secret-named variables (PGPASSWORD, FLAKEGATE_LEDGER, *_TOKEN...) and
// the passwords of URLs among them, plus extra. A weak value
// (flakegate.WeakSecret: under 8 bytes, or a word) is left out: it
// would blank every occurrence of an ordinary word; a weak DSN password
// is kept only as the DSN's whole "user:password@" token.
func SecretValues(src, extra []string) []string {
	var out []string
	add := func(v string) {
		if !flakegate.WeakSecret(v) {
			out = append(out, v)
		}
		u, err := url.Parse(v)
		if err != nil || u.User == nil {
			return
		}
		pw, ok := u.User.Password()
		switch {
		case !ok || pw == "":
		case !flakegate.WeakSecret(pw):
			out = append(out, pw)
		default:
			// A weak password goes only as the DSN's own "user:password@".
			if i := strings.Index(v, "://"); i >= 0 {
				if info, _, ok := strings.Cut(v[i+3:], "@"); ok {
					out = append(out, info+"@")
				}
			}
		}
	}
	for _, kv := range src {
		name, v, _ := strings.Cut(kv, "=")
		up := strings.ToUpper(name)
		if strings.HasPrefix(up, "FLAKEGATE_") || up == "PGPASSWORD" || (config.SecretName(name) && !strings.HasPrefix(up, "PG")) {
			add(v)
		}
	}
	for _, v := range extra {
		add(v)
	}
	// Longest first, so a password inside a DSN goes with the DSN.
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// redact replaces every secret value in s.
func (c *site) redact(s string) string {
	if c.iso == nil {
		return s
	}
	return c.iso.redact(s)
}

// redact replaces every secret value in s.
func (iso *isolation) redact(s string) string {
	for _, v := range iso.secrets {
		s = strings.ReplaceAll(s, v, "[redacted]")
	}
	return s
}

// probe finds the isolation this host gives a sandboxed command (in
// trees under root, "" for a temporary folder) and refuses a limit the
// sandbox block asks for that the host cannot enforce.
func (iso *isolation) probe(ctx context.Context, root string) error {
	sb, spec := &iso.sandbox, iso.spec
	if err := sb.Probe(ctx, root, iso.env, !iso.noOverlay); err != nil {
		if full := fullDisk(err, root); full != nil {
			return full // the disk, not the sandbox: exit 3, "no space left on"
		}
		return &flakegate.Error{Code: flakegate.EINVALID, Op: spec.op, Path: spec.cfgPath,
			Message: "the sandbox cannot run a test command on this machine: " + iso.redact(err.Error()),
			Hint:    "run 'bwrap --unshare-user --ro-bind / / true' to see why (user namespaces may be disabled: sysctl user.max_user_namespaces, or AppArmor's restriction of unprivileged user namespaces), or " + spec.optOut}
	}
	iso.probed = true
	set := spec.block.Limits.Set
	var refuse []string
	if set["disk"] && !sb.Overlay {
		refuse = append(refuse, "disk (what an attempt writes to its tree is bounded only on overlays, which need overlayfs: as root, or in a user namespace on Linux 5.11 and later; a fresh copy per attempt is not bounded)")
	}
	if (set["memory"] || set["pids"]) && sb.Level.Cgroup == "" {
		refuse = append(refuse, "memory and pids (they are bounded per attempt only by a writable cgroup: run flakegate as root, or in a cgroup v2 that delegates memory and pids)")
	}
	if len(refuse) > 0 {
		return &flakegate.Error{Code: flakegate.EINVALID, Op: "config", Path: spec.cfgPath,
			Message: "sandbox.limits asks for limits this machine cannot enforce: " + strings.Join(refuse, "; "),
			Hint:    "remove those keys to run with what the machine allows (stderr says what that is), or run where they can be enforced"}
	}
	return nil
}

// probeSandbox finds the isolation this host gives the attempts (in trees
// under root), says it on stderr ("sandbox: ..."), and refuses a limit
// the config asks for that the host cannot enforce. It reports whether
// the attempts leave their worktrees unwritten (each runs on a throwaway
// overlay or a fresh copy of its tree), and why not, or why a copy.
func (c *site) probeSandbox(ctx context.Context, root string) (overlay bool, why string, err error) {
	if err := c.iso.probe(ctx, root); err != nil {
		return false, "", err
	}
	sb := &c.iso.sandbox
	line := sb.Level.Describe(sb.Limits, sb.Overlay)
	if c.iso.mode == IsolationBwrap {
		line += c.goc.Describe(sb.GoCache != "")
	}
	c.say("sandbox: " + c.redact(line))
	if n := sandbox.SweepLayers(); n > 0 {
		c.say(fmt.Sprintf("removed %d overlay folders that a killed check left in %s", n, os.TempDir()))
	}
	if n := sandbox.SweepCopies(sb.CopyDir); n > 0 {
		c.say(fmt.Sprintf("removed %d attempt copies that a killed check left in %s", n, sb.CopyDir))
	}
	if sb.Overlay {
		return true, "", nil
	}
	why = "no overlay"
	if c.iso.noOverlay {
		why += ": " + sandbox.NoOverlayEnv + "=1"
	}
	for _, m := range sb.Level.Missing {
		if strings.HasPrefix(m, "no overlay") || strings.HasPrefix(m, "no fresh copy") {
			why = m
		}
	}
	return sb.Level.Copy, why, nil
}
