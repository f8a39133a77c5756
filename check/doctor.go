package check

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
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/git"
	"github.com/flakegate/flakegate/runner"
	"github.com/flakegate/flakegate/template"
)

// Doctor statuses: every line of `flakegate doctor` is one of them.
const (
	DoctorOK   = "ok"
	DoctorWarn = "warn"
	DoctorFail = "fail"
)

// BwrapInstall is the one command that installs bubblewrap on Debian and
// Ubuntu, which doctor prints when bwrap is missing.
const BwrapInstall = "sudo apt-get install -y bubblewrap"

// DoctorLine is one finding of Doctor: a status, what was looked at, and
// what was found.
type DoctorLine struct {
	Status string `json:"status"` // DoctorOK, DoctorWarn or DoctorFail
	Topic  string `json:"topic"`  // "config", "bwrap", "sandbox", "toolchain", "prepare", "run", "sandbox.env"
	Text   string `json:"text"`
}

// DoctorReport is what Doctor found. CommonDir is the repository's git
// common directory ("" outside a repository): the default store lives
// there.
type DoctorReport struct {
	Lines     []DoctorLine
	CommonDir string
}

// Failed reports whether any line is a failure.
func (r *DoctorReport) Failed() bool {
	return slices.ContainsFunc(r.Lines, func(l DoctorLine) bool { return l.Status == DoctorFail })
}

func (r *DoctorReport) add(status, topic, format string, args ...any) {
	r.Lines = append(r.Lines, DoctorLine{status, topic, fmt.Sprintf(format, args...)})
}

// DoctorOptions are the inputs of Doctor: Dir, Base ("" is HEAD),
// ConfigPath, Env, Git and Bwrap mean what they mean for Run.
type DoctorOptions struct {
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

// Doctor says what a check would meet here, without running one: the
// config at the base, bwrap, the sandbox level the check's own probe
// reaches (and why not more), each toolchain the config's run and
// prepare commands name, on the host PATH and inside the very sandbox the
// check builds, each prepare run once on the base tree as the check runs
// it (doctorprepare.go), each property's program as its attempts find it
// (doctorrun.go), and the sandbox.env names that are unset. The store is the
// caller's (internal/store.Status). An error is returned only for a --base
// that does not resolve (a usage error); everything else is a line.
func Doctor(ctx context.Context, opts DoctorOptions) (*DoctorReport, error) {
	rep := &DoctorReport{}
	explicit := strings.TrimSpace(opts.Base) != ""
	if !explicit {
		opts.Base = "HEAD"
	}
	c := &checker{opts: Options{Dir: opts.Dir, Base: opts.Base, ConfigPath: opts.ConfigPath, Env: opts.Env, NoOverlay: opts.NoOverlay, Git: opts.Git, Secrets: opts.Secrets}, now: time.Now}
	notes := &noteRecorder{}
	c.progress = notes
	dir := opts.Dir
	if dir == "" {
		dir = "."
	}
	c.git = &git.Client{Dir: dir, Git: opts.Git}

	// The config at the base, loaded as check loads it.
	cfgOK := false
	var err error
	if c.top, err = c.git.TopLevel(ctx); err != nil {
		rep.add(DoctorFail, "config", "%s", errLine(err))
	} else if c.common, err = c.git.CommonDir(ctx); err != nil {
		rep.add(DoctorFail, "config", "%s", errLine(err))
	} else if c.baseSHA, err = c.resolve(ctx, "--base", opts.Base); err != nil {
		if explicit {
			return nil, err
		}
		rep.add(DoctorFail, "config", "HEAD does not resolve (a repository without a commit?): %s", errLine(err))
	} else if err := c.loadConfig(ctx); err != nil {
		rep.add(DoctorFail, "config", "at %s (%s): %s", opts.Base, flakegate.ShortSHA(c.baseSHA), errLine(err))
	} else {
		cfgOK = true
		rep.add(DoctorOK, "config", "%s at %s (%s) is valid: %d properties, %d listed triples", c.cfgPath, opts.Base, flakegate.ShortSHA(c.baseSHA), len(c.cfg.Properties), c.cfg.Triples())
	}
	rep.CommonDir = c.common
	if !cfgOK {
		// Without a config, bwrap and the sandbox are still looked at, as
		// a config with no sandbox block would have them.
		c.cfg = &config.Config{Sandbox: config.Sandbox{Mode: config.SandboxAuto, Limits: config.DefaultLimits()}}
	}
	c.cfgPath = c.configName()

	// bwrap.
	bwrapOK := false
	bwrap := opts.Bwrap
	if bwrap == "" {
		bwrap, err = lookPath("bwrap", opts.Env)
	} else {
		_, err = os.Stat(bwrap)
	}
	none := c.cfg.Sandbox.Mode == config.SandboxNone
	switch {
	case err != nil && none:
		rep.add(DoctorWarn, "bwrap", "not found on PATH; the config says sandbox: {mode: none}, so attempts run unsandboxed and earn no freeze (install it: %s)", BwrapInstall)
	case err != nil:
		rep.add(DoctorFail, "bwrap", "bwrap (bubblewrap) was not found on PATH: every attempt runs in a bubblewrap sandbox, so check stops with exit 2; install it: %s", BwrapInstall)
	default:
		v := firstLine(commandOutput(ctx, opts.Env, bwrap, "--version"))
		if v == "" {
			rep.add(DoctorFail, "bwrap", "%s does not run (%s --version printed nothing); reinstall it: %s", bwrap, bwrap, BwrapInstall)
		} else {
			bwrapOK = true
			rep.add(DoctorOK, "bwrap", "%s, %s", bwrap, v)
		}
	}
	if c.common == "" {
		rep.add(DoctorWarn, "sandbox", "not looked at: run doctor inside the repository")
		return rep, nil
	}

	// The sandbox: the check's own setup and probe.
	sandboxed := false
	switch {
	case none:
		rep.add(DoctorWarn, "sandbox", "the config says sandbox: {mode: none}: attempts run unsandboxed, records say \"isolation\": \"none\" and earn no freeze")
	case !bwrapOK:
		rep.add(DoctorFail, "sandbox", "no sandbox without bwrap")
	default:
		c.opts.Bwrap = bwrap
		c.outDir = filepath.Join(c.common, "flakegate", "out", "doctor") // hidden; never created
		if err := c.setupIsolation(ctx); err != nil {
			rep.add(DoctorFail, "sandbox", "%s", errLine(err))
			break
		}
		if _, _, err := c.probeSandbox(ctx, c.common); err != nil {
			rep.add(DoctorFail, "sandbox", "%s", errLine(err))
			for _, why := range usernsBlockers(opts.ProcRoot) {
				rep.add(DoctorFail, "sandbox", "%s", why)
			}
			break
		}
		sandboxed = true
		lv := c.iso.sandbox.Level
		rep.add(DoctorOK, "sandbox", "%s: %s", lv.String(c.iso.sandbox.Overlay), strings.TrimPrefix(notes.find("sandbox: "), "sandbox: "))
		for _, m := range lv.Missing {
			rep.add(DoctorWarn, "sandbox", "%s", c.redact(m))
		}
	}
	if !cfgOK {
		return rep, nil
	}

	// Toolchains, outside and inside.
	var sb *runner.Sandbox
	var attemptEnv []string
	if sandboxed {
		tree, err := os.MkdirTemp(c.common, "doctor-")
		if err != nil {
			return nil, &flakegate.Error{Code: flakegate.EINTERNAL, Op: "doctor", Path: c.common, Err: err}
		}
		defer os.RemoveAll(tree)
		sb = c.sandboxFor(tree)
		attemptEnv = c.iso.env
	} else if c.iso != nil {
		attemptEnv = c.iso.env
	}
	for _, tool := range c.toolchains() {
		c.doctorTool(ctx, rep, tool, opts.Env, attemptEnv, sb)
	}
	baseFiles := map[string]bool{}
	if files, err := c.git.ListFiles(ctx, c.baseSHA); err == nil {
		for _, f := range files {
			baseFiles[f] = true
		}
	}
	var preps map[*config.Prepare]*doctorPrep
	switch {
	case sandboxed:
		var done func()
		preps, done = c.doctorPrepares(ctx, rep)
		defer done()
	case none && slices.ContainsFunc(c.cfg.Properties, func(p config.Property) bool { return p.Prepare != nil }):
		rep.add(DoctorFail, "prepare", "not run: a prepare needs attempts on overlays, and the config says sandbox: {mode: none}: every triple of its properties would be INCOMPLETE")
	}
	c.doctorRuns(ctx, rep, sb, attemptEnv, baseFiles, preps)
	c.doctorSuites(ctx, rep)

	// sandbox.env.
	var set []string
	for _, name := range c.cfg.Sandbox.Env {
		_, ok := lookupEnv(opts.Env, name)
		switch {
		case config.SecretName(name):
			rep.add(DoctorWarn, "sandbox.env", "%s is never passed: its name says it holds a secret", name)
		case !ok:
			rep.add(DoctorWarn, "sandbox.env", "%s is not set here: the attempts run without it", name)
		default:
			set = append(set, name)
		}
	}
	if len(set) > 0 {
		rep.add(DoctorOK, "sandbox.env", "%s set", strings.Join(set, ", "))
	}
	return rep, nil
}

// configName is the config's repo-relative path as check names it.
func (c *checker) configName() string {
	if c.cfgPath != "" {
		return c.cfgPath
	}
	if c.opts.ConfigPath != "" {
		return c.opts.ConfigPath
	}
	return config.DefaultPath
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
func (c *checker) toolchains() []tool {
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
	if c.cfg.Prepare != nil {
		walk(c.cfg.Prepare.Run, "prepare")
	}
	for i := range c.cfg.Properties {
		p := &c.cfg.Properties[i]
		key := fmt.Sprintf("properties[%d]", i)
		if argv, err := template.Expand(p.Run, vars(p, flakegate.Seed("1"))); err == nil {
			walk(argv, key+".run")
		}
		if p.Prepare != nil && p.Prepare != c.cfg.Prepare {
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

// doctorTool looks tool up on the host PATH (env) and inside the sandbox
// (sb, with the attempts' environment), asks each for its version, and
// says whether they differ.
func (c *checker) doctorTool(ctx context.Context, rep *DoctorReport, t tool, env, attemptEnv []string, sb *runner.Sandbox) {
	name := t.Prog + " (" + t.Where + ")"
	outPath, err := lookPath(t.Prog, env)
	if filepath.IsAbs(t.Prog) {
		outPath = t.Prog
		if _, err = os.Stat(t.Prog); err != nil {
			outPath = ""
		}
	}
	outVer := ""
	if err == nil && versionArgs(t.Prog) != nil {
		outVer = firstLine(commandOutput(ctx, env, outPath, versionArgs(t.Prog)...))
	}
	missing := DoctorWarn
	if t.Direct {
		missing = DoctorFail // every attempt of that command would fail to start
	}
	if sb == nil {
		switch {
		case outPath == "":
			rep.add(missing, "toolchain", "%s: not found on PATH", name)
		default:
			rep.add(DoctorOK, "toolchain", "%s: %s, %s (not run in a sandbox here)", name, outPath, orNone(outVer))
		}
		return
	}
	// Inside: the check's own sandbox and attempt environment.
	script := `p=$(command -v "$1") || { echo "not found"; exit 0; }; echo "$p"; shift; [ $# = 0 ] || "$p" "$@" 2>&1 | head -n 1`
	argv := append([]string{"sh", "-c", script, "sh", t.Prog}, versionArgs(t.Prog)...)
	o := runner.Run(ctx, runner.Command{Argv: argv, Dir: sb.Tree, Env: attemptEnv, Sandbox: sb, WallBudget: 30 * time.Second, NoTestMarkers: []string{}})
	lines := strings.SplitN(strings.TrimSpace(o.Tail), "\n", 2)
	inPath, inVer := "", ""
	if o.Result == runner.Pass && len(lines) > 0 && lines[0] != "not found" {
		inPath = strings.TrimSpace(lines[0])
		if len(lines) > 1 {
			inVer = firstLine(lines[1])
		}
	}
	switch {
	case o.Result != runner.Pass:
		rep.add(DoctorFail, "toolchain", "%s: the sandbox could not look it up: %s", name, c.redact(strings.TrimSpace(o.Result+" "+o.Reason)))
	case inPath == "" && outPath == "":
		rep.add(missing, "toolchain", "%s: not found, on PATH or in the sandbox", name)
	case inPath == "":
		rep.add(missing, "toolchain", "%s: %s on PATH, but not found in the sandbox (a folder the sandbox does not share: a home folder is hidden, only known tool managers' folders under it are shared; add its folder to sandbox.ro)", name, outPath)
	case outPath == "":
		rep.add(DoctorWarn, "toolchain", "%s: not on your PATH, but the sandbox finds %s, %s", name, inPath, orNone(inVer))
	case inPath != outPath || inVer != outVer:
		rep.add(DoctorWarn, "toolchain", "%s differs: the sandbox runs %s (%s), your shell %s (%s); what lives under a hidden $HOME or reads it (pyenv, nvm) is not what the attempts see: add its folder to sandbox.ro or call the tool by its absolute path", name, inPath, orNone(inVer), outPath, orNone(outVer))
	default:
		rep.add(DoctorOK, "toolchain", "%s: %s, %s, the same in the sandbox", name, outPath, orNone(outVer))
	}
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

// noteRecorder is the progress handler of Doctor: it keeps the notes.
type noteRecorder struct {
	discardProgress
	notes []string
}

func (n *noteRecorder) Note(_, msg string) { n.notes = append(n.notes, msg) }

// find returns the first note starting with prefix.
func (n *noteRecorder) find(prefix string) string {
	for _, m := range n.notes {
		if strings.HasPrefix(m, prefix) {
			return m
		}
	}
	return ""
}
