// The isolation of a check's attempts and of a replay: the sandbox built
// from the config's sandbox block (BuildIsolation: one builder, so that
// the two cannot drift apart), probed on this host, and the attempts'
// environment with the secrets it must never carry.

package site

import (
	"context"
	"errors"
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
	"github.com/flakegate/flakegate/internal/diskfull"
	"golang.org/x/sys/unix"
)

// Isolation values of records and summaries.
const (
	IsolationBwrap = "bwrap"
	IsolationNone  = "none"
)

// Isolation is how a check's attempts, or a replay, run.
type Isolation struct {
	Mode      string          // IsolationBwrap or IsolationNone
	Sandbox   sandbox.Sandbox // the sandbox without its Tree (bwrap only)
	Env       []string        // every command's environment
	Secrets   []string        // values never written anywhere
	NoOverlay bool            // FLAKEGATE_NO_OVERLAY=1: a fresh copy per attempt
	Probed    bool            // sandbox.Level is the host's (chooseTrees)
	Spec      Spec            // what it was built from
}

// Label is the records' and summaries' "isolation": "none", or the
// sandbox level reached (sandbox.Level.String), "bwrap" before the probe.
func (iso *Isolation) Label() string {
	if iso.Mode != IsolationBwrap || !iso.Probed {
		return iso.Mode
	}
	return iso.Sandbox.Level.String(iso.Sandbox.Overlay)
}

// Spec is what a sandbox is built from, the same way for check's
// attempts and for a replay (BuildIsolation): one builder, so that the
// two cannot drift apart.
type Spec struct {
	Op      string          // "check" or "replay", in errors
	CfgPath string          // the config the block comes from ("" for flags), in errors
	Block   *config.Sandbox // mode, ro, rw, network, env names, limits
	Env     []string        // flakegate's environment, the only source of values
	Secrets []string        // more values never passed nor written
	// NoOverlay is FLAKEGATE_NO_OVERLAY=1, as the CLI read it: a fresh
	// copy per attempt instead of overlays.
	NoOverlay bool
	Bwrap     string   // the bubblewrap binary; "" looks it up on PATH
	OptOut    string   // how the user opts out of the sandbox, for the hint
	Guarded   []string // the gate's own state: no ro or rw path may overlap one
	Hide      []string // more host paths the command must not see
}

// BuildIsolation resolves a sandbox: bwrap unless the block says mode:
// none, the shared paths (refused when they reach guarded state, or when
// an rw path is no folder), the paths the command must not see (spec.hide
// and flakegate's own binary) and the command's environment: an
// allow-list, never a secret.
func BuildIsolation(spec Spec) (*Isolation, error) {
	sb := spec.Block
	iso := &Isolation{Mode: IsolationBwrap, Secrets: SecretValues(spec.Env, spec.Secrets), NoOverlay: spec.NoOverlay, Spec: spec}
	if sb.Mode == config.SandboxNone {
		iso.Mode = IsolationNone
	}
	if iso.Mode == IsolationBwrap {
		bwrap := spec.Bwrap
		if bwrap == "" {
			p, err := exec.LookPath("bwrap")
			if err != nil {
				return nil, &flakegate.Error{Code: flakegate.EINVALID, Op: spec.Op, Path: spec.CfgPath,
					Message: "bwrap (bubblewrap) was not found on PATH: every test command runs in a bubblewrap sandbox by default",
					Hint:    "install it (apt-get install bubblewrap), or " + spec.OptOut}
			}
			bwrap = p
		}
		if abs, err := filepath.Abs(bwrap); err == nil {
			bwrap = abs
		}
		for _, g := range spec.Guarded {
			if Within(bwrap, g) {
				// A PATH folder inside the checkout: its bwrap is the
				// patch's, and would build every attempt's sandbox.
				return nil, &flakegate.Error{Code: flakegate.EINVALID, Op: spec.Op, Path: bwrap,
					Message: "bwrap resolves to a file inside " + g + ": flakegate runs no program of the repository or of its own state outside the sandbox, and bwrap is the sandbox",
					Hint:    "put the system's folder (/usr/bin) first on PATH"}
			}
		}
		if err := checkSharedPaths(spec); err != nil {
			return nil, err
		}
		iso.Sandbox = *sandbox.New(sandbox.Sandbox{Bwrap: bwrap, Home: sandbox.SandboxHomeFor(spec.Env), Network: sb.Network,
			RO: append([]string(nil), sb.RO...), RW: append([]string(nil), sb.RW...),
			Limits: sandbox.Limits{Memory: sb.Limits.Memory, Pids: sb.Limits.Pids, Tmp: sb.Limits.Tmp, Disk: sb.Limits.Disk}})
		hide := append(append([]string(nil), spec.Hide...), sandbox.HideSelf(spec.Env)...)
		for i := range hide {
			hide[i] = resolved(hide[i])
		}
		iso.Sandbox.Hide = hide
	}

	envSpec := sandbox.EnvSpec{Src: spec.Env, Names: sb.Env, Refuse: config.SecretName, Secrets: iso.Secrets}
	if iso.Mode == IsolationBwrap {
		envSpec.Sandbox = &iso.Sandbox
	}
	iso.Env = sandbox.AttemptEnv(envSpec)
	return iso, nil
}

// Close ends the sandbox's standbys and waits for its attempts' cgroups
// to go (sandbox.Sandbox.Close); nil and mode none Close nothing.
func (iso *Isolation) Close() {
	if iso != nil && iso.Mode == IsolationBwrap {
		iso.Sandbox.Close()
	}
}

// EnvGetter looks a variable up in env, the last one winning.
func EnvGetter(env []string) func(string) (string, bool) {
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
func checkSharedPaths(spec Spec) error {
	sb := spec.Block
	for _, list := range []struct {
		key   string
		paths []string
	}{{"sandbox.ro", sb.RO}, {"sandbox.rw", sb.RW}} {
		for i, p := range list.paths {
			key := fmt.Sprintf("%s[%d]", list.key, i)
			for _, g := range spec.Guarded {
				if overlaps(p, g) {
					return &flakegate.Error{Code: flakegate.EINVALID, Op: "config", Path: spec.CfgPath,
						Message: fmt.Sprintf("%s: %s overlaps %s, which the code under test must not reach (the repository, its git folder, the ledger or the output folder)", key, p, g),
						Hint:    "share only folders outside the repository and flakegate's state"}
				}
			}
			if list.key == "sandbox.rw" {
				if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
					return &flakegate.Error{Code: flakegate.EINVALID, Op: "config", Path: spec.CfgPath,
						Message: fmt.Sprintf("%s: %s is not a folder on this machine", key, p),
						Hint:    "create it first, or remove it from sandbox.rw"}
				}
			}
		}
	}
	return nil
}

// Within reports whether p is dir or inside it (after resolving symlinks
// where they exist).
func Within(p, dir string) bool {
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
	if r, err := EvalExisting(filepath.Clean(p)); err == nil {
		return r
	}
	return filepath.Clean(p)
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

// Redact replaces every secret value in s.
func (iso *Isolation) Redact(s string) string {
	for _, v := range iso.Secrets {
		s = strings.ReplaceAll(s, v, "[redacted]")
	}
	return s
}

// Probe finds the isolation this host gives a sandboxed command (in
// trees under root, "" for a temporary folder) and refuses a limit the
// sandbox block asks for that the host cannot enforce.
func (iso *Isolation) Probe(ctx context.Context, root string) error {
	sb, spec := &iso.Sandbox, iso.Spec
	if err := sb.Probe(ctx, root, iso.Env, !iso.NoOverlay); err != nil {
		if full := fullDisk(err, root); full != nil {
			return full // the disk, not the sandbox: exit 3, "no space left on"
		}
		return &flakegate.Error{Code: flakegate.EINVALID, Op: spec.Op, Path: spec.CfgPath,
			Message: "the sandbox cannot run a test command on this machine: " + iso.Redact(err.Error()),
			Hint:    "run 'bwrap --unshare-user --ro-bind / / true' to see why (user namespaces may be disabled: sysctl user.max_user_namespaces, or AppArmor's restriction of unprivileged user namespaces), or " + spec.OptOut}
	}
	iso.Probed = true
	set := spec.Block.Limits.Set
	var refuse []string
	if set["disk"] && !sb.Overlay {
		refuse = append(refuse, "disk (what an attempt writes to its tree is bounded only on overlays, which need overlayfs: as root, or in a user namespace on Linux 5.11 and later; a fresh copy per attempt is not bounded)")
	}
	if (set["memory"] || set["pids"]) && sb.Level.Cgroup == "" {
		refuse = append(refuse, "memory and pids (they are bounded per attempt only by a writable cgroup: run flakegate as root, or in a cgroup v2 that delegates memory and pids)")
	}
	if len(refuse) > 0 {
		return &flakegate.Error{Code: flakegate.EINVALID, Op: "config", Path: spec.CfgPath,
			Message: "sandbox.limits asks for limits this machine cannot enforce: " + strings.Join(refuse, "; "),
			Hint:    "remove those keys to run with what the machine allows (stderr says what that is), or run where they can be enforced"}
	}
	return nil
}

// fullDisk is the error of a probe that failed for want of space (its
// error wraps ENOSPC, or the attempt's output says so), nil for any other
// failure: it names the first of the folders it used that is full.
func fullDisk(err error, root string) error {
	if !errors.Is(err, unix.ENOSPC) && !strings.Contains(err.Error(), "no space left on device") {
		return nil
	}
	where := root
	if where == "" {
		where = os.TempDir()
	}
	for _, p := range []string{root, os.TempDir()} {
		var st unix.Statfs_t
		if p != "" && unix.Statfs(p, &st) == nil && st.Bavail == 0 {
			where = p
			break
		}
	}
	return diskfull.NoSpace(err, where, "the sandbox probe cannot write its files")
}

// EvalExisting resolves symlinks of the longest existing prefix of p.
func EvalExisting(p string) (string, error) {
	rest := ""
	for {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest), nil
		}
		parent := filepath.Dir(p)
		if parent == p {
			return "", os.ErrNotExist
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}
