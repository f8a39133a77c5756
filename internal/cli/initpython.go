package cli

import (
	"context"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// pyCandidate is one Python interpreter init looked at: the path written
// into the config, and the modules it lacks.
type pyCandidate struct {
	Path    string
	Missing []string
	// Err is why it could not be asked (it did not start).
	Err string
}

// hasPytest reports whether it has pytest and Hypothesis.
func (p pyCandidate) hasPytest() bool {
	return p.Err == "" && !slices.Contains(p.Missing, "pytest") && !slices.Contains(p.Missing, "hypothesis")
}

// findSpecScript prints the names among its arguments that the
// interpreter cannot import (importlib.util.find_spec: located, never
// run).
const findSpecScript = `import importlib.util, sys
missing = []
for m in sys.argv[1:]:
    try:
        if importlib.util.find_spec(m) is None:
            missing.append(m)
    except Exception:
        missing.append(m)
print(" ".join(missing))`

// pythonCandidates are the interpreters an attempt could run: python3
// and python in each PATH folder (the attempts' PATH is flakegate's),
// leaving out what lives under $HOME (the
// sandbox hides the home folder: a pyenv or asdf shim there is not what
// an attempt runs) and what resolves to an interpreter already listed.
func pythonCandidates(pathEnv, home string) []string {
	var out []string
	seen := map[string]bool{}
	homeReal := home
	if r, err := filepath.EvalSymlinks(home); err == nil {
		homeReal = r
	}
	underHome := func(p string) bool {
		return home != "" && home != "/" && (strings.HasPrefix(p, home+"/") || strings.HasPrefix(p, homeReal+"/"))
	}
	add := func(p string) {
		fi, err := os.Stat(p)
		if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 || underHome(p) {
			return
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil || underHome(real) || seen[real] {
			return
		}
		seen[real] = true
		out = append(out, p)
	}
	for _, dir := range filepath.SplitList(pathEnv) {
		if !filepath.IsAbs(dir) {
			continue
		}
		add(filepath.Join(dir, "python3"))
		add(filepath.Join(dir, "python"))
	}
	return out
}

// askPython asks each candidate which of pytest, hypothesis and mods it
// lacks (10 s each).
func askPython(ctx context.Context, env []string, cands []string, mods []string) []pyCandidate {
	want := append([]string{"pytest", "hypothesis"}, mods...)
	var out []pyCandidate
	for _, p := range cands {
		c := pyCandidate{Path: p}
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		cmd := exec.CommandContext(cctx, p, append([]string{"-I", "-c", findSpecScript}, want...)...)
		cmd.Env = env
		cmd.Dir = os.TempDir() // not the repository: nothing of it is imported
		b, err := cmd.Output()
		cancel()
		if err != nil {
			c.Err = err.Error()
		} else {
			c.Missing = strings.Fields(string(b))
		}
		out = append(out, c)
	}
	return out
}

// choosePython is the candidate with pytest and Hypothesis that lacks
// the fewest of the tests' imports, the first such in PATH order; ok is
// false when none has pytest and Hypothesis.
func choosePython(cands []pyCandidate) (best pyCandidate, ok bool) {
	for _, c := range cands {
		if !c.hasPytest() {
			continue
		}
		if !ok || len(c.Missing) < len(best.Missing) {
			best, ok = c, true
		}
	}
	return best, ok
}

// indexReachable reports whether the Python package index answers a
// TCP connection within 3 s: PIP_INDEX_URL's host, else pypi.org.
func indexReachable(ctx context.Context, indexURL string) bool {
	host := "pypi.org:443"
	if u, err := url.Parse(indexURL); err == nil && u.Host != "" {
		host = u.Host
		if u.Port() == "" {
			port := "443"
			if u.Scheme == "http" {
				port = "80"
			}
			host = net.JoinHostPort(u.Hostname(), port)
		}
	}
	d := net.Dialer{Timeout: 3 * time.Second}
	conn, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		return false
	}
	conn.Close()
	return true
}
