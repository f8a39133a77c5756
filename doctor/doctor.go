// Package doctor is `flakegate doctor`: what a check would meet here,
// looked at without running one. It starts from site.Base (the
// repository and the config at the base, as a check reads them) and
// check.Site (the check's own sandbox and prepares, set up as a check
// sets them up), so that what it says is what the check will do; the
// lines are its own (doctor.go: the config, bwrap, the sandbox and the
// toolchains; prepare.go: the prepares; run.go: each property's program).
package doctor

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/attempt/sandbox"
	"github.com/flakegate/flakegate/batch"
	"github.com/flakegate/flakegate/check"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/site"
	"github.com/flakegate/flakegate/suites"
	"github.com/flakegate/flakegate/template"
)

// Statuses: every line of `flakegate doctor` is one of them.
const (
	OK   = "ok"
	Warn = "warn"
	Fail = "fail"
)

// BwrapInstall is the one command that installs bubblewrap on Debian and
// Ubuntu, which doctor prints when bwrap is missing.
const BwrapInstall = "sudo apt-get install -y bubblewrap"

// Line is one finding of Doctor: a status, what was looked at, and what
// was found.
type Line struct {
	Status string `json:"status"` // OK, Warn or Fail
	Topic  string `json:"topic"`  // "config", "bwrap", "sandbox", "toolchain", "prepare", "run", "sandbox.env"
	Text   string `json:"text"`
}

// Report is what Doctor found. CommonDir is the repository's git
// common directory ("" outside a repository): the default store lives
// there.
type Report struct {
	Lines     []Line
	CommonDir string
}

// Failed reports whether any line is a failure.
func (r *Report) Failed() bool {
	return slices.ContainsFunc(r.Lines, func(l Line) bool { return l.Status == Fail })
}

func (r *Report) add(status, topic, format string, args ...any) {
	r.Lines = append(r.Lines, Line{status, topic, fmt.Sprintf(format, args...)})
}

// Options are the inputs of Doctor: Dir, Base ("" is HEAD),
// ConfigPath, Env, Git and Bwrap mean what they mean for check.Run.
type Options struct {
	Dir, Base, ConfigPath string
	// Env is the environment a check would have (nil: none); the CLI
	// passes its own.
	Env []string
	// NoOverlay: the check would copy its trees (FLAKEGATE_NO_OVERLAY).
	NoOverlay  bool
	Git, Bwrap string
	// Secrets are values never shown (the ledger DSN).
	Secrets []string
	// ProcRoot is where /proc/sys is read from ("" is "/"; tests replace it).
	ProcRoot string
}

// doctor is one run of Doctor: what it found so far.
type doctor struct {
	opts  Options
	rep   *Report
	base  *site.Base
	cfg   *config.Config // the base's, or a config with no sandbox block
	site  *check.Site    // the check's sandbox (nil outside a repository)
	bwrap string         // the bwrap found ("" for none)
}

// Doctor says what a check would meet here, without running one: the
// config at the base, bwrap, the sandbox level the check's own probe
// reaches (and why not more), each toolchain the config's run and
// prepare commands name, looked up on the host PATH (never started there:
// the config may be a patch's) and asked inside the very sandbox the
// check builds, each prepare run once on the base tree as the check runs
// it (prepare.go), each property's program as its attempts find it
// (run.go), and the sandbox.env names that are unset. The store is the
// caller's (the CLI's store.Status). An error is returned only for a base
// that does not resolve (a usage error); everything else is a line.
func Doctor(ctx context.Context, opts Options) (*Report, error) {
	d := &doctor{opts: opts, rep: &Report{}}
	cfgOK, err := d.config(ctx)
	if err != nil {
		return nil, err
	}
	d.lookAtBwrap(ctx)
	if d.base.Common == "" {
		d.rep.add(Warn, "sandbox", "not looked at: run doctor inside the repository")
		return d.rep, nil
	}
	sandboxed := d.lookAtSandbox(ctx)
	if !cfgOK {
		return d.rep, nil
	}

	// Toolchains, outside and inside.
	var sb *sandbox.Sandbox
	attemptEnv := d.site.Env()
	if sandboxed {
		tree, err := os.MkdirTemp(d.base.Common, "doctor-")
		if err != nil {
			return nil, &flakegate.Error{Code: flakegate.EINTERNAL, Op: "doctor", Path: d.base.Common, Err: err}
		}
		defer os.RemoveAll(tree)
		sb = d.site.SandboxFor(tree)
	}
	for _, tool := range toolchains(d.cfg) {
		d.lookAtTool(ctx, tool, attemptEnv, sb)
	}
	baseFiles := map[string]bool{}
	if files, err := d.base.Git.ListFiles(ctx, d.base.SHA); err == nil {
		for _, f := range files {
			baseFiles[f] = true
		}
	}
	var preps map[*config.Prepare]*prepResult
	switch {
	case sandboxed:
		var done func()
		preps, done = d.prepares(ctx)
		defer done()
	case d.cfg.Sandbox.Mode == config.SandboxNone && slices.ContainsFunc(d.cfg.Properties, func(p config.Property) bool { return p.Prepare != nil }):
		d.rep.add(Fail, "prepare", "not run: a prepare needs attempts on overlays, and the config says sandbox: {mode: none}: every triple of its properties would be INCOMPLETE")
	}
	d.runs(ctx, sb, attemptEnv, baseFiles, preps)
	d.suites(ctx)
	d.goModules()
	d.lookAtEnv()
	return d.rep, nil
}

// config loads the config at the base as check loads it, and says so. It
// reports whether it loaded; an error is a base that was asked for and
// does not resolve.
func (d *doctor) config(ctx context.Context) (bool, error) {
	opts, rep := d.opts, d.rep
	explicit := strings.TrimSpace(opts.Base) != ""
	if !explicit {
		opts.Base = "HEAD"
	}
	b, err := site.OpenRepo(ctx, opts.Dir, opts.Git)
	d.base = b
	cfgOK := false
	if err != nil {
		rep.add(Fail, "config", "%s", errLine(err))
	} else if err := b.Resolve(ctx, opts.Base); err != nil {
		if explicit {
			return false, err
		}
		rep.add(Fail, "config", "HEAD does not resolve (a repository without a commit?): %s", errLine(err))
	} else if err := b.LoadConfig(ctx, opts.ConfigPath); err != nil {
		rep.add(Fail, "config", "at %s (%s): %s", opts.Base, flakegate.ShortSHA(b.SHA), errLine(err))
	} else {
		cfgOK = true
		rep.add(OK, "config", "%s at %s (%s) is valid: %s", b.ConfigPath, opts.Base, flakegate.ShortSHA(b.SHA), configCounts(b.Config))
	}
	rep.CommonDir = b.Common
	if !cfgOK {
		// Without a config, bwrap and the sandbox are still looked at, as
		// a config with no sandbox block would have them.
		b.Config = &config.Config{Sandbox: config.Sandbox{Mode: config.SandboxAuto, Limits: config.DefaultLimits()}}
	}
	if b.ConfigPath == "" {
		b.ConfigPath = opts.ConfigPath
	}
	if b.ConfigPath == "" {
		b.ConfigPath = config.DefaultPath
	}
	d.cfg = b.Config
	return cfgOK, nil
}

// lookAtBwrap finds bwrap and asks its version.
func (d *doctor) lookAtBwrap(ctx context.Context) {
	opts, rep := d.opts, d.rep
	bwrap, err := opts.Bwrap, error(nil)
	if bwrap == "" {
		bwrap, err = attempt.LookPath("bwrap", opts.Env)
	} else {
		_, err = os.Stat(bwrap)
	}
	switch {
	case err == nil && d.base.Holds(bwrap):
		// A PATH folder inside the checkout (a direnv PATH_add, say):
		// its bwrap is the patch's, and doctor would run it as you.
		rep.add(Fail, "bwrap", "%s is inside the repository: flakegate runs no program of a checkout outside the sandbox, and bwrap is the sandbox; put the system's folder (/usr/bin) first on PATH", bwrap)
	case err != nil && d.cfg.Sandbox.Mode == config.SandboxNone:
		rep.add(Warn, "bwrap", "not found on PATH; the config says sandbox: {mode: none}, so attempts run unsandboxed and earn no freeze (install it: %s)", BwrapInstall)
	case err != nil:
		rep.add(Fail, "bwrap", "bwrap (bubblewrap) was not found on PATH: every attempt runs in a bubblewrap sandbox, so check stops with exit 2; install it: %s", BwrapInstall)
	default:
		v := firstLine(commandOutput(ctx, opts.Env, bwrap, "--version"))
		if v == "" {
			rep.add(Fail, "bwrap", "%s does not run (%s --version printed nothing); reinstall it: %s", bwrap, bwrap, BwrapInstall)
		} else {
			d.bwrap = bwrap
			rep.add(OK, "bwrap", "%s, %s", bwrap, v)
		}
	}
}

// lookAtSandbox sets the check's sandbox up and probes it, as the check
// does, and reports whether the attempts would run in it.
func (d *doctor) lookAtSandbox(ctx context.Context) bool {
	rep := d.rep
	d.site = check.NewSite(d.base, check.SiteOptions{Env: d.opts.Env, NoOverlay: d.opts.NoOverlay, Bwrap: d.bwrap, Secrets: d.opts.Secrets})
	switch {
	case d.cfg.Sandbox.Mode == config.SandboxNone:
		rep.add(Warn, "sandbox", "the config says sandbox: {mode: none}: attempts run unsandboxed, records say \"isolation\": \"none\" and earn no freeze")
		return false
	case d.bwrap == "":
		rep.add(Fail, "sandbox", "no sandbox without bwrap")
		return false
	}
	if err := d.site.Setup(ctx); err != nil {
		rep.add(Fail, "sandbox", "%s", errLine(err))
		return false
	}
	line, err := d.site.Probe(ctx)
	if err != nil {
		rep.add(Fail, "sandbox", "%s", errLine(err))
		for _, why := range usernsBlockers(d.opts.ProcRoot) {
			rep.add(Fail, "sandbox", "%s", why)
		}
		return false
	}
	sb := d.site.Sandbox()
	rep.add(OK, "sandbox", "%s: %s", sb.Level.String(sb.Overlay), line)
	for _, m := range sb.Level.Missing {
		rep.add(Warn, "sandbox", "%s", d.site.Redact(m))
	}
	if where, err := d.site.Trees(ctx); err != nil {
		rep.add(Warn, "worktrees", "%s", errLine(err))
	} else if where != "" {
		rep.add(OK, "worktrees", "%s", where)
	}
	return true
}

// lookAtEnv says which sandbox.env names are set here.
func (d *doctor) lookAtEnv() {
	var set []string
	for _, name := range d.cfg.Sandbox.Env {
		_, ok := lookupEnv(d.opts.Env, name)
		switch {
		case config.SecretName(name):
			d.rep.add(Warn, "sandbox.env", "%s is never passed: its name says it holds a secret", name)
		case !ok:
			d.rep.add(Warn, "sandbox.env", "%s is not set here: the attempts run without it", name)
		default:
			set = append(set, name)
		}
	}
	if len(set) > 0 {
		d.rep.add(OK, "sandbox.env", "%s set", strings.Join(set, ", "))
	}
}

// tool is one program a config's commands run: Prog as named (a bare name
// or an absolute path), Where the first command naming it, and Direct when
// it is that command's argv[0] (a missing one fails every attempt).
type tool struct {
	Prog, Where string
	Direct      bool
}

// interpreters are the programs looked for inside `sh -c SCRIPT` and
// after `env`: the toolchains a property command usually reaches through
// them.
var interpreters = []string{"python", "python3", "node", "go", "pytest", "npx", "npm", "deno", "bun", "cargo", "ruby", "java"}

// toolchains lists the programs the config's run and prepare commands
// resolve to: each argv[0], and behind `env` and `sh -c` the
// interpreters named. Relative paths (scripts in the tree) are skipped.
func toolchains(cfg *config.Config) []tool {
	var out []tool
	seen := map[string]int{}
	add := func(prog, where string, direct bool) {
		if prog == "" || strings.Contains(prog, "/") && !filepath.IsAbs(prog) {
			return
		}
		if i, ok := seen[prog]; ok {
			out[i].Direct = out[i].Direct || direct
			return
		}
		seen[prog] = len(out)
		out = append(out, tool{prog, where, direct})
	}
	walk := func(argv []string, where string) {
		direct := true
		for len(argv) > 0 {
			prog := argv[0]
			add(prog, where, direct)
			switch filepath.Base(prog) {
			case "env":
				argv = argv[1:]
				for len(argv) > 0 && (strings.HasPrefix(argv[0], "-") || strings.Contains(argv[0], "=")) {
					if argv[0] == "-u" || argv[0] == "-C" || argv[0] == "--unset" || argv[0] == "--chdir" {
						argv = argv[1:]
					}
					if len(argv) > 0 {
						argv = argv[1:]
					}
				}
				direct = true // env runs it as argv[0]
				continue
			case "sh", "bash", "dash", "zsh":
				if i := slices.Index(argv, "-c"); i > 0 && i+1 < len(argv) {
					for _, w := range strings.FieldsFunc(argv[i+1], func(r rune) bool { return strings.ContainsRune(" \t\n;|&()`$<>'\"", r) }) {
						if slices.Contains(interpreters, filepath.Base(w)) {
							add(w, where, false)
						}
					}
				}
			}
			return
		}
	}
	if cfg.Prepare != nil {
		walk(cfg.Prepare.Run, "prepare")
	}
	for i := range cfg.Properties {
		p := &cfg.Properties[i]
		key := fmt.Sprintf("properties[%d]", i)
		if argv, err := template.Expand(p.Run, batch.Vars(p, flakegate.Seed("1"))); err == nil {
			walk(argv, key+".run")
		}
		if p.Prepare != nil && p.Prepare != cfg.Prepare {
			walk(p.Prepare.Run, key+".prepare")
		}
	}
	return out
}

// versionArgs are the arguments that make a program print its version;
// none for a shell that has no such option (its path is compared alone).
func versionArgs(prog string) []string {
	switch filepath.Base(prog) {
	case "go":
		return []string{"version"}
	case "sh", "dash", "ash":
		return nil
	}
	return []string{"--version"}
}

// lookAtTool looks tool up on the host PATH (the check's environment)
// without running it, and inside the sandbox (sb, with the attempts'
// environment), where it is asked for its version, and says whether the
// two differ. A program a config names is never started outside the
// sandbox: the config of a checkout is the patch's (doctor reads HEAD by
// default), and its argv[0] may be a file of that very tree
// (/proc/self/cwd/..., a PATH folder inside the checkout, a symlink),
// or a tool whose --version reads the tree (go's toolchain line, a
// shim's version file). Without a sandbox the version is not asked.
func (d *doctor) lookAtTool(ctx context.Context, t tool, attemptEnv []string, sb *sandbox.Sandbox) {
	rep := d.rep
	name := t.Prog + " (" + t.Where + ")"
	outPath := hostPath(t.Prog, d.opts.Env)
	missing := Warn
	if t.Direct {
		missing = Fail // every attempt of that command would fail to start
	}
	if sb == nil {
		switch {
		case outPath == "":
			rep.add(missing, "toolchain", "%s: not found on PATH", name)
		default:
			rep.add(OK, "toolchain", "%s: %s on PATH; its version is not asked: doctor starts a program a config names only inside the sandbox, and there is none here", name, outPath)
		}
		return
	}
	// Inside: the check's own sandbox and attempt environment.
	script := `p=$(command -v "$1") || { echo "not found"; exit 0; }; echo "$p"; shift; [ $# = 0 ] || "$p" "$@" 2>&1 | head -n 1`
	argv := append([]string{"sh", "-c", script, "sh", t.Prog}, versionArgs(t.Prog)...)
	o := attempt.Run(ctx, attempt.Command{Argv: argv, Dir: sb.Tree, Env: attemptEnv, Sandbox: sb, WallBudget: 30 * time.Second, NoTestMarkers: []string{}})
	lines := strings.SplitN(strings.TrimSpace(o.Tail), "\n", 2)
	inPath, inVer := "", ""
	if o.Result == attempt.Pass && len(lines) > 0 && lines[0] != "not found" {
		inPath = strings.TrimSpace(lines[0])
		if len(lines) > 1 {
			inVer = firstLine(lines[1])
		}
	}
	switch {
	case o.Result != attempt.Pass:
		rep.add(Fail, "toolchain", "%s: the sandbox could not look it up: %s", name, d.site.Redact(strings.TrimSpace(o.Result+" "+o.Reason)))
	case inPath == "" && outPath == "":
		rep.add(missing, "toolchain", "%s: not found, on PATH or in the sandbox", name)
	case inPath == "":
		rep.add(missing, "toolchain", "%s: %s on PATH, but not found in the sandbox (a folder the sandbox does not share: the repository and a home folder are hidden, only known tool managers' folders under a home are shared; add its folder to sandbox.ro)", name, outPath)
	case outPath == "":
		rep.add(Warn, "toolchain", "%s: not on your PATH, but the sandbox finds %s, %s", name, inPath, orNone(inVer))
	case inPath != outPath:
		rep.add(Warn, "toolchain", "%s differs: the sandbox runs %s (%s), your shell finds %s (not run: doctor starts a program a config names only inside the sandbox); what lives under a hidden $HOME or reads it (pyenv, nvm) is not what the attempts see: add its folder to sandbox.ro or call the tool by its absolute path", name, inPath, orNone(inVer), outPath)
	default:
		rep.add(OK, "toolchain", "%s: %s, %s, asked in the sandbox (your shell finds the same path)", name, inPath, orNone(inVer))
	}
}

// hostPath is where the host finds prog: an absolute path that exists,
// or a bare name on the PATH of env (its absolute folders only); "" when
// it finds none. Nothing is started.
func hostPath(prog string, env []string) string {
	if filepath.IsAbs(prog) {
		if _, err := os.Stat(prog); err != nil {
			return ""
		}
		return prog
	}
	p, err := attempt.LookPath(prog, env)
	if err != nil {
		return ""
	}
	return p
}

func orNone(v string) string {
	if v == "" {
		return "no version"
	}
	return v
}

// commandOutput runs prog with args in env (bounded to 10 seconds) and
// returns what it printed, stdout and stderr; "" when it did not run.
func commandOutput(ctx context.Context, env []string, prog string, args ...string) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Env = env
	var b bytes.Buffer
	cmd.Stdout, cmd.Stderr = &b, &b
	cmd.WaitDelay = time.Second
	_ = cmd.Run() // the output says enough; a missing one is ""
	return b.String()
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	l, _, _ := strings.Cut(s, "\n")
	return strings.TrimSpace(l)
}

// lookupEnv finds name in env.
func lookupEnv(env []string, name string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v, true
		}
	}
	return "", false
}

// usernsBlockers names what keeps unprivileged user namespaces from
// working on this host: AppArmor's restriction (Ubuntu 24.04's default)
// and a zero user.max_user_namespaces. procRoot "" is "/".
func usernsBlockers(procRoot string) []string {
	if procRoot == "" {
		procRoot = "/"
	}
	read := func(p string) string {
		b, err := os.ReadFile(filepath.Join(procRoot, p))
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(b))
	}
	var out []string
	if read("proc/sys/kernel/apparmor_restrict_unprivileged_userns") == "1" {
		out = append(out, "AppArmor restricts unprivileged user namespaces (/proc/sys/kernel/apparmor_restrict_unprivileged_userns = 1, Ubuntu 24.04's default): "+
			"run flakegate as root (it runs bwrap as nobody through its helper), or allow them with 'sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0', or give bwrap an AppArmor profile with 'userns,'")
	}
	if read("proc/sys/user/max_user_namespaces") == "0" {
		out = append(out, "user namespaces are disabled (/proc/sys/user/max_user_namespaces = 0): 'sudo sysctl -w user.max_user_namespaces=15000'")
	}
	if read("proc/sys/kernel/unprivileged_userns_clone") == "0" {
		out = append(out, "unprivileged user namespaces are disabled (/proc/sys/kernel/unprivileged_userns_clone = 0): 'sudo sysctl -w kernel.unprivileged_userns_clone=1'")
	}
	return out
}

// errLine is an error and its hint on one line.
func errLine(err error) string {
	if h := flakegate.ErrorHint(err); h != "" {
		return err.Error() + " (try: " + h + ")"
	}
	return err.Error()
}

// goModules says what the base's Go modules needed, when the prepares or
// the suites' listing built the base: the modules its go.sum names that
// the module cache lacked, downloaded or not (gocache/fetch.go).
func (d *doctor) goModules() {
	if d.site == nil {
		return
	}
	for _, n := range d.site.Notes("Go modules: ") {
		level := OK
		if strings.Contains(n, "cannot download") || strings.Contains(n, "the module cache lacks") {
			level = Warn
		}
		d.rep.add(level, "go modules", "%s", d.site.Redact(strings.TrimPrefix(n, "Go modules: ")))
	}
}

// suites says, for each suite of the config, how many tests the base
// lists in the check's sandbox, and so how many triples a check gates.
func (d *doctor) suites(ctx context.Context) {
	if d.site == nil {
		return
	}
	counts, busy, err := d.site.ListSuites(ctx)
	switch {
	case err != nil:
		d.rep.add(Fail, "suites", "%s", errLine(err))
	case busy != "":
		d.rep.add(Warn, "suites", "%s", d.site.Redact(busy))
	}
	for _, sc := range counts {
		if sc.Err != nil {
			d.rep.add(Fail, "suites", "suites[%d] (%s %s): %s", sc.Index, sc.Framework, sc.Path, d.site.Redact(errLine(sc.Err)))
			continue
		}
		d.rep.add(OK, "suites", "%s", sc.Line())
	}
	if slices.ContainsFunc(counts, func(sc suites.Count) bool { return sc.Err == nil }) {
		d.rep.add(OK, "triples", "%s", totalTriples(d.cfg, counts))
	}
}

// configCounts says what the config gates before any listing: its
// properties' listed triples, and its suites, whose tests only their
// framework lists (the suites lines say how many).
func configCounts(cfg *config.Config) string {
	props := fmt.Sprintf("%d %s (%d listed %s)", len(cfg.Properties), plural(len(cfg.Properties), "property", "properties"),
		cfg.Triples(), plural(cfg.Triples(), "triple", "triples"))
	if n := len(cfg.Suites); n > 0 {
		return props + fmt.Sprintf(" and %d %s, whose tests a check lists on the base (the suites lines below count them)", n, plural(n, "suite", "suites"))
	}
	return props
}

// totalTriples is every triple a check gates: the properties' listed
// ones and each listed suite's, with the suites that could not be listed
// named (their triples are not in the count).
func totalTriples(cfg *config.Config, counts []suites.Count) string {
	suites, tests, unlisted := 0, 0, []string(nil)
	for _, sc := range counts {
		if sc.Err != nil {
			unlisted = append(unlisted, fmt.Sprintf("suites[%d]", sc.Index))
			continue
		}
		suites += sc.Tests * sc.Seeds
		tests += sc.Tests
	}
	line := fmt.Sprintf("a check gates %d listed %s: %d of the properties, %d of the suites' %d %s",
		cfg.Triples()+suites, plural(cfg.Triples()+suites, "triple", "triples"), cfg.Triples(), suites, tests, plural(tests, "test", "tests"))
	if len(unlisted) > 0 {
		line += " (not counting " + strings.Join(unlisted, ", ") + ", whose listing failed)"
	}
	return line
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
