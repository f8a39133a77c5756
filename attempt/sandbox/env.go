package sandbox

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// PassedEnv are the variables every attempt gets from flakegate's
// environment when set; a config or flag may add more names.
var PassedEnv = []string{"PATH", "LANG", "LC_ALL", "TZ"}

// Paths inside a sandbox: the attempt's private /tmp, its Go build cache
// (inside it, so that no attempt leaves a poisoned build or test result
// for the next one), its Go module cache and the default $HOME.
const (
	SandboxTmp        = "/tmp"
	SandboxGoCache    = "/tmp/go-build"
	SandboxGoModCache = "/sandbox/gomod"
	SandboxHome       = "/tmp/home"
)

// EnvSpec says how to build an attempt's environment.
type EnvSpec struct {
	// Src is flakegate's environment, the only source of values.
	Src []string
	// Names are more variables to pass (the config's sandbox.env).
	Names []string
	// Sandbox is the attempt's sandbox, nil for none. Its Home is $HOME,
	// and the host's own Go caches are added to its hidden paths.
	Sandbox *Sandbox
	// Refuse reports names never passed, whatever Names says.
	Refuse func(name string) bool
	// Secrets are values never passed: a variable holding one is dropped.
	Secrets []string
}

// AttemptEnv returns the environment of an attempt: an allow-list, never
// a secret. In a sandbox, HOME is the sandbox's private home, TMPDIR its
// private /tmp, GOCACHE the sandbox's Go build cache (warm: the
// repository's cache under a throwaway layer, see Sandbox.GoCache),
// GOMODCACHE its module cache (Sandbox.GoModCache), GOPROXY off and
// GOTOOLCHAIN local. The host's own Go
// caches hold other projects' builds, test output and private modules:
// they are hidden wherever a shared folder holds them, unless the
// config's RO or RW paths name them. Python writes no bytecode, and Go
// reads no go.work, no user configuration and switches no toolchain
// (GoPins).
func AttemptEnv(spec EnvSpec) []string {
	get := func(name string) (string, bool) {
		for i := len(spec.Src) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(spec.Src[i], name+"="); ok {
				return v, true
			}
		}
		return "", false
	}
	env := map[string]string{}
	for _, name := range PassedEnv {
		if v, ok := get(name); ok {
			env[name] = v
		}
	}
	env["PYTHONDONTWRITEBYTECODE"] = "1"
	for name, v := range GoPins {
		env[name] = v
	}
	if sb := spec.Sandbox; sb != nil {
		env["HOME"] = sb.Home
		env["TMPDIR"] = SandboxTmp
		env["GOCACHE"] = SandboxGoCache
		env["GOMODCACHE"] = SandboxGoModCache
		// The module cache is read-only and there is no network: go never
		// tries to fetch a module (or a toolchain a go.mod names), and
		// says which one it lacks. A config that passes GOPROXY or
		// GOTOOLCHAIN by name (sandbox.env) keeps its own.
		env["GOPROXY"] = "off"
		env["GOTOOLCHAIN"] = "local"
		shared := append(append([]string(nil), sb.RO...), sb.RW...)
		for _, dir := range []string{HostGoCache(get), HostGoModCache(get)} {
			if dir == "" || overlapsAny(dir, shared) {
				continue // shared by name in the config: the user's explicit choice
			}
			sb.Hide = append(sb.Hide, dir)
			if r, err := filepath.EvalSymlinks(dir); err == nil && r != dir {
				sb.Hide = append(sb.Hide, r) // a shared folder may hold it by its real path
			}
		}
	} else {
		for _, name := range []string{"HOME", "TMPDIR"} {
			if v, ok := get(name); ok {
				env[name] = v
			}
		}
	}
	for _, name := range spec.Names {
		if v, ok := get(name); ok {
			env[name] = v
		}
	}
	if p, ok := env["PATH"]; ok {
		env["PATH"] = AbsolutePath(p)
	}
	var out []string
	for name, v := range env {
		if spec.Refuse != nil && spec.Refuse(name) || ContainsAny(v, spec.Secrets) {
			continue
		}
		out = append(out, name+"="+v)
	}
	sort.Strings(out)
	return out
}

// GoPins are the Go variables every attempt gets, so that nothing in
// the tree or in $HOME changes how go builds a test binary: no go.work
// (a patch's go.work could add a module, replace one, or set godebug
// lines the base's go.mod does not have), no user configuration file
// (go env -w writes GOFLAGS there: -toolexec, -overlay, -tags), and no
// switch to another toolchain a go.mod names. The toolchain's own
// GOROOT/go.env still applies: the toolchain is the framework. The
// config's sandbox.env may name one of them to pass flakegate's own
// value instead (a workspace that needs its go.work, say).
var GoPins = map[string]string{"GOWORK": "off", "GOENV": "off", "GOTOOLCHAIN": "local"}

// AbsolutePath is the PATH value p without its relative folders ("",
// ".", "bin"): those are the working folder's, the tree's, so a patch
// that put a python3 or a go at its root would replace the toolchain the
// base's command names.
func AbsolutePath(p string) string {
	var keep []string
	for _, dir := range filepath.SplitList(p) {
		if filepath.IsAbs(dir) {
			keep = append(keep, dir)
		}
	}
	return strings.Join(keep, string(filepath.ListSeparator))
}

// SandboxHomeFor is the $HOME of a sandbox: the host's own path (an empty
// tmpfs over it, so tools find their usual paths) unless it is unusable.
func SandboxHomeFor(src []string) string {
	home := ""
	for _, kv := range src {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			home = v
		}
	}
	if !filepath.IsAbs(home) || filepath.Clean(home) == "/" {
		return SandboxHome
	}
	return filepath.Clean(home)
}

// HostGoCache is the host's own Go build cache as `go env GOCACHE` finds
// it from an environment (GOCACHE, else $XDG_CACHE_HOME/go-build, else
// $HOME/.cache/go-build), or "" when it is off or not an existing folder.
func HostGoCache(get func(string) (string, bool)) string {
	dir, _ := get("GOCACHE")
	if dir == "" {
		if x, _ := get("XDG_CACHE_HOME"); filepath.IsAbs(x) {
			dir = filepath.Join(x, "go-build")
		} else if home, _ := get("HOME"); filepath.IsAbs(home) {
			dir = filepath.Join(home, ".cache", "go-build")
		}
	}
	if !filepath.IsAbs(dir) {
		return "" // "off", or relative: go itself refuses it
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return ""
	}
	return filepath.Clean(dir)
}

// HostGoModCache is the host's own Go module cache as `go env
// GOMODCACHE` finds it from an environment, or "" when it is not an
// existing folder.
func HostGoModCache(get func(string) (string, bool)) string {
	dir, _ := get("GOMODCACHE")
	if dir == "" {
		if gp, _ := get("GOPATH"); gp != "" {
			dir = filepath.Join(filepath.SplitList(gp)[0], "pkg", "mod")
		} else if home, _ := get("HOME"); home != "" {
			dir = filepath.Join(home, "go", "pkg", "mod")
		}
	}
	if !filepath.IsAbs(dir) {
		return ""
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return ""
	}
	return filepath.Clean(dir)
}

// overlapsAny reports whether p is one of paths, inside one, or holds one.
func overlapsAny(p string, paths []string) bool {
	for _, q := range paths {
		q = filepath.Clean(q)
		if under(p, []string{q}) || under(q, []string{p}) {
			return true
		}
	}
	return false
}

// ContainsAny reports whether s holds one of values.
func ContainsAny(s string, values []string) bool {
	for _, v := range values {
		if v != "" && strings.Contains(s, v) {
			return true
		}
	}
	return false
}

// HideSelf returns flakegate's own binary, and its folder unless a PATH
// entry of src names it, for Sandbox.Hide.
func HideSelf(src []string) []string {
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	hide := []string{exe}
	dir := filepath.Dir(exe)
	for _, kv := range src {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			for _, p := range filepath.SplitList(v) {
				if r, err := filepath.EvalSymlinks(p); err == nil && r == dir {
					return hide
				}
			}
		}
	}
	return append(hide, dir)
}
