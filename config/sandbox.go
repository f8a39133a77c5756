package config

import (
	"fmt"
	"path"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/flakegate/flakegate/internal/lazyre"
)

// Sandbox modes.
const (
	SandboxAuto  = "auto"  // bwrap
	SandboxBwrap = "bwrap" // bwrap, and nothing else
	SandboxNone  = "none"  // no sandbox: records say "isolation": "none"
)

// Sandbox is the sandbox block of the config:
//
//	sandbox:
//	  mode: auto             auto (= bwrap) | bwrap | none
//	  ro: [/root/go/pkg/mod] absolute paths outside the repository, bound read-only
//	  rw: [/var/cache/props] absolute paths outside the repository, shared read-write
//	  network: false         keep the host's network
//	  env: [GOFLAGS]         variables passed through from flakegate's environment
//	  limits: {memory: 4GiB, pids: 2048, tmp: 1GiB, disk: 4GiB}   see Limits
type Sandbox struct {
	Mode    string
	RO, RW  []string
	Network bool
	Env     []string
	Limits  Limits
}

// envNameRe is a portable environment variable name.
var envNameRe = lazyre.New(`^[A-Za-z_][A-Za-z0-9_]*$`)

// secretName reports why a variable must never reach a test command, or
// "" if it may: flakegate's own settings (the ledger DSN), PostgreSQL's
// (PGPASSWORD) and names that say they hold a credential.
func secretName(name string) string {
	up := strings.ToUpper(name)
	switch {
	case strings.HasPrefix(up, "FLAKEGATE_"):
		return "flakegate's own settings (the ledger, which may be a database DSN) never reach the code under test"
	case strings.HasPrefix(up, "PG"):
		return "PostgreSQL settings (PGPASSWORD, PGHOST...) would let the code under test reach a shared ledger"
	case up == "DATABASE_URL":
		return "a database URL carries credentials"
	}
	for _, w := range []string{"TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "API_KEY", "PRIVATE_KEY"} {
		if strings.Contains(up, w) {
			return "the name says it holds a credential (" + w + ")"
		}
	}
	return ""
}

// SecretName is secretName for callers outside config: the check drops
// such a variable whatever the config says.
func SecretName(name string) bool { return secretName(name) != "" }

func (l *loader) sandbox(n ast.Node) (Sandbox, error) {
	sb := Sandbox{Mode: SandboxAuto, Limits: DefaultLimits()}
	m, err := l.mapping("sandbox", n)
	if err != nil {
		return sb, err
	}
	f, err := l.fields("sandbox", m, "mode", "ro", "rw", "network", "env", "limits")
	if err != nil {
		return sb, err
	}
	if v, ok := f["limits"]; ok {
		if sb.Limits, err = l.limits(v); err != nil {
			return sb, err
		}
	}
	if v, ok := f["mode"]; ok {
		if sb.Mode, err = l.str("sandbox.mode", v); err != nil {
			return sb, err
		}
		if sb.Mode != SandboxAuto && sb.Mode != SandboxBwrap && sb.Mode != SandboxNone {
			return sb, l.errf("sandbox.mode", v, "%q: want auto, bwrap or none", sb.Mode)
		}
	}
	seen := map[string]string{}
	for _, key := range []string{"ro", "rw"} {
		v, ok := f[key]
		if !ok {
			continue
		}
		seq, err := l.sequence("sandbox."+key, v)
		if err != nil {
			return sb, err
		}
		var paths []string
		for i, pn := range seq.Values {
			k := fmt.Sprintf("sandbox.%s[%d]", key, i)
			p, err := l.str(k, pn)
			if err != nil {
				return sb, err
			}
			if err := hostPath(p); err != nil {
				return sb, l.errf(k, pn, "%v", err)
			}
			p = path.Clean(p)
			if prev, dup := seen[p]; dup {
				return sb, l.errf(k, pn, "%s is listed twice (also %s)", p, prev)
			}
			seen[p] = k
			paths = append(paths, p)
		}
		if key == "ro" {
			sb.RO = paths
		} else {
			sb.RW = paths
		}
	}
	if v, ok := f["network"]; ok {
		v, err := l.node("sandbox.network", v)
		if err != nil {
			return sb, err
		}
		b, isBool := v.(*ast.BoolNode)
		if !isBool {
			return sb, l.errf("sandbox.network", v, "want true or false, got %s", kind(v))
		}
		sb.Network = b.Value
	}
	if v, ok := f["env"]; ok {
		seq, err := l.sequence("sandbox.env", v)
		if err != nil {
			return sb, err
		}
		names := map[string]bool{}
		for i, en := range seq.Values {
			k := fmt.Sprintf("sandbox.env[%d]", i)
			name, err := l.str(k, en)
			if err != nil {
				return sb, err
			}
			if !envNameRe.MatchString(name) {
				return sb, l.errf(k, en, "%q is not a variable name ([A-Za-z_][A-Za-z0-9_]*)", name)
			}
			if why := secretName(name); why != "" {
				return sb, l.errf(k, en, "%s cannot be passed to the test command: %s", name, why)
			}
			if names[name] {
				return sb, l.errf(k, en, "%s is listed twice", name)
			}
			names[name] = true
			sb.Env = append(sb.Env, name)
		}
	}
	return sb, nil
}

// hostPath checks a path of sandbox.ro or sandbox.rw: absolute, clean of
// tricks, and not the root or a system folder as a whole.
func hostPath(p string) error {
	switch {
	case p == "":
		return fmt.Errorf("empty path")
	case strings.ContainsAny(p, "\x00\n\r"):
		return fmt.Errorf("path %q holds a control character", p)
	case !strings.HasPrefix(p, "/"):
		return fmt.Errorf("path %q is not absolute; want a host path such as /root/go/pkg/mod", p)
	}
	c := path.Clean(p)
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." {
			return fmt.Errorf("path %q holds '..'; write it out", p)
		}
	}
	switch c {
	case "/", "/proc", "/dev", "/sys", "/tmp", "/run", "/etc", "/usr", "/bin", "/lib", "/home", "/root", "/var":
		return fmt.Errorf("path %q is a whole system folder; name the folder inside it that the tests need", p)
	}
	return nil
}
