// The standard library's layer of the Go build caches: the compiled
// packages of GOROOT, built once per toolchain, environment and user by
// flakegate and shared by the repositories' caches, so that a new
// repository's first fill compiles its own code, not the runtime,
// testing and the rest of the standard library again (two minutes on a
// loaded 2-core machine). It holds nothing of any repository's.

package gocache

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/attempt/sandbox"
	"github.com/flakegate/flakegate/internal/atomicfile"
	"github.com/flakegate/flakegate/internal/flock"

	"github.com/flakegate/flakegate/internal/lazyre"
)

// goStdRoot is where the user's standard library layers live: the
// user's cache folder ($XDG_CACHE_HOME, else $HOME/.cache) under
// flakegate/gostd; "" when the environment names none.
func goStdRoot(get func(string) (string, bool)) string {
	if x, _ := get("XDG_CACHE_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "flakegate", "gostd")
	}
	if h, _ := get("HOME"); filepath.IsAbs(h) && filepath.Clean(h) != "/" {
		return filepath.Join(h, ".cache", "flakegate", "gostd")
	}
	return ""
}

// goStdEnv is what of the attempts' environment can change how go
// compiles the standard library: the toolchain's own variables (GO*,
// CGO_*, but not where its caches are) and the C toolchain cgo runs. The
// layer's key is these, not the whole environment, so that repositories
// whose configs pass other variables, or whose PATH differs, share it.
// (Go's cache keys each entry by the inputs of its action anyway, the C
// compiler's identity included: the key only keeps layers apart that
// would hold different entries.)
func goStdEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case name == "GOCACHE", name == "GOMODCACHE", name == "GOPATH":
		case strings.HasPrefix(name, "GO"), strings.HasPrefix(name, "CGO_"),
			name == "CC", name == "CXX", name == "AR", name == "PKG_CONFIG":
			out = append(out, kv)
		}
	}
	sort.Strings(out)
	return out
}

// stdPackageRe is an import path of the standard library: no dot in its
// first element, plain segments only (none starts with a dot or a dash).
var stdPackageRe = lazyre.New(`^[a-z0-9_]+(/[a-zA-Z0-9_][a-zA-Z0-9_.\-]*)*$`)

// setStd makes root/KEY the caches' standard library layer (root "" for
// none): KEY names the toolchain, its environment and the user.
func (gc *Caches) setStd(root, tool string, env []string) error {
	if root == "" {
		return nil
	}
	kb, _ := json.Marshal(struct {
		Tool    string
		Env     []string
		UID     int
		Version string
	}{tool, goStdEnv(env), os.Geteuid(), flakegate.Version})
	if err := os.MkdirAll(root, 0o700); err != nil { // flakegate's user only
		return err
	}
	gc.std = filepath.Join(root, flakegate.SHA256Hex(kb)[:32])
	if err := os.MkdirAll(filepath.Join(gc.std, "cache"), 0o755); err != nil {
		return err
	}
	f, err := holdShared(gc.std + ".lock")
	if err != nil {
		return err
	}
	gc.held = append(gc.held, f)
	collectGoCaches(root, gc.std)
	return nil
}

// seedStd puts the standard library's compiled packages that the base's
// tests import into the repository's build cache (cache, empty so far)
// before the fill: it lists them in the base (`go list -deps -test`),
// compiles those the layer lacks into the layer, from GOROOT alone, in
// an empty folder (tmp) with no module, and copies the layer's entries
// into cache. Only flakegate's own command writes the layer, and only
// standard packages by name: no repository's code, output or module
// reaches it, and no attempt or fill ever has it mounted writable, so
// one repository cannot leave anything there for another. The copy is
// the repository's own: its fill writing there changes no other
// repository's. A step that fails leaves the fill to compile what is
// missing, as before.
func (gc *Caches) seedStd(ctx context.Context, sb sandbox.Sandbox, env []string, tree, op string) string {
	if gc.std == "" {
		return ""
	}
	want := map[string]bool{}
	for _, m := range gc.modules {
		out := attempt.Run(ctx, attempt.Command{Argv: []string{"go", "list", "-deps", "-test", "-f", "{{if .Standard}}std {{.ImportPath}}{{end}}", "./..."},
			Dir: filepath.Join(tree, filepath.FromSlash(m)), Env: env, WallBudget: goFillBudget, Sandbox: &sb, NoTestMarkers: []string{}, TailBytes: 1 << 20})
		for _, l := range strings.Split(out.Tail, "\n") {
			if p, ok := strings.CutPrefix(strings.TrimSpace(l), "std "); ok && stdPackageRe.MatchString(p) {
				want[p] = true
			}
		}
	}
	if len(want) == 0 || ctx.Err() != nil {
		return ""
	}
	lock, err := flock.Lock(ctx, gc.std+".fill", flock.Options{What: "the Go standard library layer's lock", Op: op})
	if err != nil {
		return ""
	}
	defer lock.Close()
	built := map[string]bool{}
	b, _ := os.ReadFile(filepath.Join(gc.std, "built"))
	for _, p := range strings.Fields(string(b)) {
		built[p] = true
	}
	var missing []string
	for p := range want {
		if !built[p] {
			missing = append(missing, p)
		}
	}
	sort.Strings(missing)
	note := ""
	if len(missing) > 0 {
		empty, err := os.MkdirTemp(filepath.Dir(gc.std), "empty-")
		if err != nil {
			return ""
		}
		defer os.RemoveAll(empty)
		os.Chmod(empty, 0o755)
		std := sb
		std.GoCache, std.FillGoCache, std.Tree, std.GoModCache = filepath.Join(gc.std, "cache"), true, empty, ""
		std.RO, std.RW = nil, nil // the toolchain (PATH) and the system folders only: nothing of the repository's config
		out := attempt.Run(ctx, attempt.Command{Argv: append([]string{"go", "build"}, missing...), Dir: empty, Env: env,
			WallBudget: goFillBudget, Sandbox: &std, NoTestMarkers: []string{}})
		if out.Result != attempt.Pass {
			return fmt.Sprintf("; the standard library layer could not be built (%s %s: %s)", out.Result, out.Reason, attempt.ShortTail(out.Tail))
		}
		compiled := len(missing) // want less what the layer had; built may hold other repositories' packages too
		for p := range built {
			missing = append(missing, p)
		}
		sort.Strings(missing)
		if err := atomicfile.WriteFile(filepath.Join(gc.std, "built"), []byte(strings.Join(missing, "\n")+"\n"), 0o600); err != nil {
			return ""
		}
		note = "; " + count(compiled, "standard package", "standard packages") + " compiled into the shared standard library layer"
	} else {
		note = fmt.Sprintf("; its %d standard packages from the shared standard library layer", len(want))
	}
	if err := copyCacheEntries(filepath.Join(gc.std, "cache"), filepath.Join(gc.dir, "cache")); err != nil {
		return "; the standard library layer could not be copied: " + err.Error()
	}
	return note
}

// copyCacheEntries copies the files of the build cache src that dst
// lacks, keeping their owner (the attempts' identity) and times (Go
// trims by them); its own trim stamp stays dst's.
func copyCacheEntries(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		out := filepath.Join(dst, rel)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		st, _ := fi.Sys().(*syscall.Stat_t)
		switch {
		case d.IsDir():
			if err := os.MkdirAll(out, 0o755); err != nil {
				return err
			}
		case !d.Type().IsRegular() || rel == "trim.txt":
			return nil
		default:
			if _, err := os.Lstat(out); err == nil {
				return nil
			}
			if err := copyEntry(p, out, fi); err != nil {
				return err
			}
		}
		if st != nil {
			os.Lchown(out, int(st.Uid), int(st.Gid))
		}
		return nil
	})
}

// copyEntry copies one cache file: to a new temporary name beside dst,
// then renamed, so that a fill never reads half a file.
func copyEntry(src, dst string, fi fs.FileInfo) error {
	in, err := os.OpenFile(src, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp := dst + ".fgcopy"
	os.Remove(tmp)
	out, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		os.Remove(tmp)
		return err
	}
	if err := out.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	os.Chtimes(tmp, fi.ModTime(), fi.ModTime())
	return os.Rename(tmp, dst)
}

// goUsedInterval is how old an entry's time may get before go, reading
// it, stamps it used (go's own interval is an hour).
const goUsedInterval = 30 * time.Minute

// stampUsed gives the entries of the build cache dir that are older than
// goUsedInterval the time now, as flakegate's own write, before a
// check's attempts read it. go stamps each entry it reads once its time
// is an hour old; under an attempt that stamp is a write to the
// overlay's lower layer, and without metacopy (a user namespace's
// overlay: no root) it copies the whole file up, package by package,
// into the attempt's disk limit. Stamped here, no attempt's go writes
// them.
func stampUsed(dir string) {
	now := time.Now()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !d.Type().IsRegular() {
			return nil
		}
		if fi, err := d.Info(); err == nil && now.Sub(fi.ModTime()) > goUsedInterval {
			os.Chtimes(p, now, now)
		}
		return nil
	})
}
