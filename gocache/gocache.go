// Package gocache holds the Go caches of a repository's attempts: a
// build cache flakegate fills from the base, and a module cache of only
// what the base's go.sum names, both under <git common dir>/flakegate
// (which no attempt can see). Never the runner's own GOCACHE or
// GOMODCACHE: on a shared runner they hold other projects' builds,
// cached test output and private modules.
//
// The files:
//   - gocache.go: Open (the build cache's folder, the module view of the
//     base's go.sum, verified module by module, collection of old
//     caches), Fill (the base's test builds and its go suites run once),
//     the keys of a fill and what the base's go suites skip;
//   - std.go: the user's standard library layer under the build caches;
//   - fetch.go: the download of what the module view lacks, in the
//     sandbox, through the module proxy only, and the words of a go
//     command that stopped at a missing module;
//   - mirror.go: the caches' resident mirror on the worktrees' tmpfs;
//   - reads.go: what the base's go suites read in the fill's run (go's
//     test log) and how long each package took, for the check's impact;
//   - build.go: a go tree's build step, its test binaries built once per
//     check and laid read-only under the later attempts of that tree;
//   - binary.go: the step's kept test binaries, which those attempts run
//     as go test would, through go tool test2json.
//
// The caller (the check, a replay) owns the sandbox: it points the
// attempts' sandbox at BuildDir and ModDir, and gives Fill and Fetch the
// sandbox their go commands run in.
package gocache

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/attempt/sandbox"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/evidence"
	"github.com/flakegate/flakegate/impact"
	"github.com/flakegate/flakegate/internal/atomicfile"
	"github.com/flakegate/flakegate/internal/flock"
)

// Repo is what the caches read of the repository: its files at a commit
// (git.Client).
type Repo interface {
	ListFiles(ctx context.Context, rev string) ([]string, error)
	Show(ctx context.Context, rev, file string) ([]byte, error)
}

// Options say whose caches Open sets up.
type Options struct {
	Git    Repo
	Common string   // the repository's git common dir: the caches live under its flakegate folder
	Base   string   // the commit the caches are built from
	Env    []string // the attempts' environment: the go on its PATH, and what it compiles with
	// Get looks a variable up in flakegate's own environment: the
	// runner's module cache (copied from, verified), the user's cache
	// folder (the standard library layer), GOPROXY and GOSUMDB.
	Get func(string) (string, bool)
	Op  string // "check" or "replay", in errors
}

// Caches are the Go caches of one check's (or replay's) attempts; a
// nil *Caches is none.
type Caches struct {
	base    string       // the commit they are built from
	modules []string     // the base's Go modules: folders holding a go.mod ("." for the root)
	dir     string       // <common>/flakegate/gocache/KEY: cache/, filled, locks
	modView string       // <common>/flakegate/gomod/DIGEST: the module cache
	std     string       // the user's standard library layer (std.go), "" for none
	named   int          // modules (with a version) the base's go.sum names
	found   int          // of those, verified into modView
	lines   []string     // the base's go.sum lines (goSumLines)
	host    string       // the runner's module cache, "" for none: copied from, verified, for the base's lines only
	mroot   string       // <common>/flakegate/gomod: the module views
	route   goFetchRoute // where a download of missing modules may connect (fetch.go)
	// fetchTried: this check tried to fetch what the view lacks (once).
	fetchTried bool
	held       []*os.File
	// runs are the base's go suites, run for real once by the fill
	// (suiteFillRuns), so that what their tests build lands in the cache.
	runs []fillRun
}

// fillRun is one go suite the fill runs for real: its package pattern,
// the -skip pattern of its excluded names ("" for none) and its wall
// budget.
type fillRun struct {
	pattern, skip string
	budget        time.Duration
	// testlog keeps what each package's tests read and how long they
	// took (reads.go), for the check's impact.
	testlog bool
}

// Bounds of the Go caches kept per repository: the newest few by last
// use, and none unused for longer than goCacheMaxAge.
const (
	goCacheKeep   = 3
	goCacheMaxAge = 14 * 24 * time.Hour
	goFillBudget  = 10 * time.Minute
)

// baseGoModules are the folders of the base's go.mod files, skipping
// those go itself skips in ./... (testdata, vendor, _ and . folders).
func baseGoModules(ctx context.Context, g Repo, base string) ([]string, error) {
	files, err := g.ListFiles(ctx, base)
	if err != nil {
		return nil, err
	}
	var mods []string
	for _, f := range files {
		if path.Base(f) != "go.mod" {
			continue
		}
		dir := path.Dir(f)
		skip := false
		for _, seg := range strings.Split(dir, "/") {
			if seg == "testdata" || seg == "vendor" || (seg != "." && (strings.HasPrefix(seg, "_") || strings.HasPrefix(seg, "."))) {
				skip = true
			}
		}
		if !skip {
			mods = append(mods, dir)
		}
	}
	return mods, nil
}

// Tool is the `go` the attempts' PATH (in env) finds, and what
// identifies it: a new toolchain is another cache (and another listing
// of a go suite).
func Tool(env []string) (path, id string) {
	for _, kv := range env {
		v, ok := strings.CutPrefix(kv, "PATH=")
		if !ok {
			continue
		}
		for _, d := range filepath.SplitList(v) {
			p := filepath.Join(d, "go")
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
				r, _ := filepath.EvalSymlinks(p)
				if ri, err := os.Stat(r); err == nil {
					fi = ri
				}
				return p, fmt.Sprintf("%s %s %d %d", p, r, fi.Size(), fi.ModTime().UnixNano())
			}
		}
	}
	return "", ""
}

// Open sets up the repository's Go caches for the base commit: the
// build cache's folder (filled later, by Fill) and the module cache of
// the base's go.sum, copied from the runner's after verifying each
// module against its go.sum hash, and the user's standard library
// layer. Without a Go module at the base, or without go on the
// attempts' PATH, there are none (nil). Old caches are collected. The
// caller points its sandbox at BuildDir and ModDir, and calls Release
// when its attempts are done.
func Open(ctx context.Context, o Options) (*Caches, error) {
	g, common, base, get := o.Git, o.Common, o.Base, o.Get
	hostModCache := sandbox.HostGoModCache(get)
	mods, err := baseGoModules(ctx, g, base)
	if err != nil || len(mods) == 0 {
		return nil, err
	}
	_, tool := Tool(o.Env)
	if tool == "" {
		return nil, nil
	}
	gc := &Caches{base: base, modules: mods}
	internal := func(p string, err error) error {
		return &flakegate.Error{Code: flakegate.EINTERNAL, Op: o.Op, Path: p, Message: "cannot set up the repository's Go caches", Err: err}
	}
	// The build cache: one per toolchain, environment and user (the
	// attempts' identity owns its files), whatever the base.
	kb, _ := json.Marshal(struct {
		Tool    string
		Env     []string
		UID     int
		Version string
	}{tool, o.Env, os.Geteuid(), flakegate.Version})
	root := filepath.Join(common, "flakegate", "gocache")
	if err := os.MkdirAll(root, 0o700); err != nil { // flakegate's user only: no one else walks in
		return nil, internal(root, err)
	}
	gc.dir = filepath.Join(root, flakegate.SHA256Hex(kb)[:32])
	if err := os.MkdirAll(filepath.Join(gc.dir, "cache"), 0o755); err != nil {
		return nil, internal(gc.dir, err)
	}
	// The module cache: the base's go.sum lines, nothing else.
	lines, err := goSumLinesAt(ctx, g, base, mods)
	if err != nil {
		return nil, err
	}
	mroot := filepath.Join(common, "flakegate", "gomod")
	if err := os.MkdirAll(mroot, 0o700); err != nil {
		return nil, internal(mroot, err)
	}
	gc.modView = filepath.Join(mroot, flakegate.SHA256Hex([]byte(strings.Join(lines, "\n")))[:32])
	for _, d := range []string{gc.dir, gc.modView} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, internal(d, err)
		}
		f, err := holdShared(d + ".lock")
		if err != nil {
			gc.Release()
			return nil, internal(d, err)
		}
		gc.held = append(gc.held, f)
		now := time.Now()
		os.Chtimes(d, now, now) // last used: what collection goes by
	}
	lock, err := flock.Lock(ctx, gc.modView+".fill", flock.Options{What: "the Go module cache's lock", Op: o.Op})
	if err != nil {
		gc.Release()
		return nil, err
	}
	gc.lines, gc.host, gc.mroot, gc.route = lines, hostModCache, mroot, goRoute(get)
	gc.named, gc.found, err = fillModView(gc.modView, []string{hostModCache}, lines)
	lock.Close()
	if err != nil {
		gc.Release()
		return nil, internal(gc.modView, err)
	}
	collectGoCaches(root, gc.dir)
	collectGoCaches(mroot, gc.modView)
	if err := gc.setStd(goStdRoot(get), tool, o.Env); err != nil {
		gc.std = "" // the fill compiles the standard library itself
	}
	stampUsed(gc.BuildDir())
	return gc, nil
}

// BuildDir is the build cache the attempts read (GOCACHE under their
// throwaway layer).
func (gc *Caches) BuildDir() string { return filepath.Join(gc.dir, "cache") }

// ModDir is the module view the attempts read (GOMODCACHE, read-only):
// the base's, or the candidate's once Fetch found modules it adds.
func (gc *Caches) ModDir() string { return gc.modView }

// Base is the commit the caches are built from.
func (gc *Caches) Base() string { return gc.base }

// Release lets go of the caches' shared locks (collection skips a held one).
func (gc *Caches) Release() {
	if gc == nil {
		return
	}
	for _, f := range gc.held {
		f.Close()
	}
	gc.held = nil
}

// holdShared opens path and takes a shared flock on it: a cache in use.
func holdShared(p string) (*os.File, error) {
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// collectGoCaches removes the caches under root beyond the goCacheKeep
// newest by last use, and those unused for goCacheMaxAge, but never keep
// nor one another check holds (its lock is shared-locked).
func collectGoCaches(root, keep string) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return
	}
	type cache struct {
		dir  string
		used time.Time
	}
	var all []cache
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if fi, err := e.Info(); err == nil {
			all = append(all, cache{filepath.Join(root, e.Name()), fi.ModTime()})
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].used.After(all[j].used) })
	for i, c := range all {
		if c.dir == keep || (i < goCacheKeep && time.Since(c.used) < goCacheMaxAge) {
			continue
		}
		f, err := os.OpenFile(c.dir+".lock", os.O_RDWR|os.O_CREATE|syscall.O_CLOEXEC, 0o600)
		if err != nil {
			continue
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			makeRemovable(c.dir)
			os.RemoveAll(c.dir)
			os.Remove(c.dir + ".fill")
			os.Remove(c.dir + ".lock")
		}
		f.Close()
	}
}

// makeRemovable makes every folder under dir writable by its owner (Go
// leaves module folders read-only).
func makeRemovable(dir string) {
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(p, 0o755)
		}
		return nil
	})
}

// goSumLinesAt are the go.sum lines of the modules mods (their folders)
// at rev.
func goSumLinesAt(ctx context.Context, g Repo, rev string, mods []string) ([]string, error) {
	var sums [][]byte
	for _, m := range mods {
		b, err := g.Show(ctx, rev, path.Join(m, "go.sum"))
		if err == nil {
			sums = append(sums, b)
		} else if flakegate.ErrorCode(err) != flakegate.ENOTFOUND {
			return nil, err
		}
	}
	return goSumLines(sums), nil
}

// goSumLines are the distinct well-formed lines of the go.sum files:
// "MODULE VERSION h1:HASH" or "MODULE VERSION/go.mod h1:HASH".
func goSumLines(sums [][]byte) []string {
	seen := map[string]bool{}
	var out []string
	for _, b := range sums {
		for _, l := range strings.Split(string(b), "\n") {
			f := strings.Fields(l)
			if len(f) != 3 || !strings.HasPrefix(f[2], "h1:") {
				continue
			}
			l = strings.Join(f, " ")
			if !seen[l] {
				seen[l] = true
				out = append(out, l)
			}
		}
	}
	sort.Strings(out)
	return out
}

// fillModView adds to view every module of lines that one of the module
// caches sources (the runner's, a download's; "" entries are skipped)
// holds with exactly the go.sum hash: its go.mod (in
// cache/download/M/@v/V.mod) and its files (M@V/, with the .ziphash go
// reads). Each is copied into view first and verified there, so what an
// attempt reads is what go.sum names, whatever happens to the source
// meanwhile. A module no source holds, or holds with other bytes, is
// left out: go fails to find it (no network) and says so. It returns
// how many modules the lines name and how many view holds.
func fillModView(view string, sources []string, lines []string) (named, found int, err error) {
	for _, l := range lines {
		f := strings.Fields(l)
		mod, ver, sum := f[0], f[1], f[2]
		goMod := strings.HasSuffix(ver, "/go.mod")
		ver = strings.TrimSuffix(ver, "/go.mod")
		emod, ok1 := escapeModule(mod)
		ever, ok2 := escapeModule(ver)
		if !ok1 || !ok2 {
			continue // not a module path go could use: never a path of ours
		}
		dl := filepath.Join("cache", "download", filepath.FromSlash(emod), "@v")
		if goMod {
			dst := filepath.Join(view, dl, ever+".mod")
			if _, err := os.Stat(dst); err == nil {
				continue
			}
			for _, host := range sources {
				if host == "" {
					continue
				}
				if err := addModFile(filepath.Join(host, dl, ever+".mod"), dst, sum); err != nil {
					return named, found, err
				}
				if _, err := os.Stat(dst); err == nil {
					break
				}
			}
			continue
		}
		named++
		dir := filepath.Join(view, filepath.FromSlash(emod)+"@"+ever)
		if _, err := os.Stat(dir); err == nil {
			found++
			continue
		}
		ok := false
		for _, host := range sources {
			if host == "" || ok {
				continue
			}
			if ok, err = addModDir(filepath.Join(host, filepath.FromSlash(emod)+"@"+ever), dir, mod+"@"+ver, sum); err != nil {
				return named, found, err
			}
		}
		if !ok {
			continue
		}
		zh := filepath.Join(view, dl, ever+".ziphash")
		if err := os.MkdirAll(filepath.Dir(zh), 0o755); err != nil {
			return named, found, err
		}
		if err := atomicfile.WriteFile(zh, []byte(sum), 0o444); err != nil {
			return named, found, err
		}
		tmp := dir + ".verified"
		if err := os.Rename(tmp, dir); err != nil {
			return named, found, err
		}
		found++
	}
	return named, found, nil
}

// addModFile copies a go.mod from the runner's cache to dst when its
// hash is sum (go.sum's "/go.mod" line: go hashes it as the one file
// "go.mod"); a missing or other file is left out.
func addModFile(src, dst, sum string) error {
	f, err := os.OpenFile(src, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil
	}
	b, err := io.ReadAll(io.LimitReader(f, 16<<20))
	f.Close()
	if err != nil {
		return nil
	}
	if hash1([]string{"go.mod"}, [][]byte{b}) != sum {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return atomicfile.WriteFile(dst, b, 0o444)
}

// addModDir copies the module folder src to dst+".verified" and reports
// whether the copy's hash (go's dirhash h1 with prefix MODULE@VERSION) is
// sum; a copy that is not is removed. Only regular files and folders are
// copied: a module zip holds nothing else.
func addModDir(src, dst, prefix, sum string) (bool, error) {
	if fi, err := os.Lstat(src); err != nil || !fi.IsDir() {
		return false, nil
	}
	tmp := dst + ".verified"
	makeRemovable(tmp)
	os.RemoveAll(tmp)
	if err := os.MkdirAll(filepath.Dir(tmp), 0o755); err != nil {
		return false, err
	}
	var names []string
	var datas [][]byte
	bad := false
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			bad = true
			return filepath.SkipAll
		}
		rel, _ := filepath.Rel(src, p)
		out := filepath.Join(tmp, rel)
		switch {
		case d.IsDir():
			return os.Mkdir(out, 0o755)
		case !d.Type().IsRegular():
			bad = true
			return filepath.SkipAll
		}
		b, err := copyRegular(p, out)
		if err != nil {
			bad = true
			return filepath.SkipAll
		}
		names = append(names, prefix+"/"+filepath.ToSlash(rel))
		datas = append(datas, b)
		return nil
	})
	if err == nil && !bad && hash1(names, datas) == sum {
		return true, nil
	}
	makeRemovable(tmp)
	os.RemoveAll(tmp)
	return false, err
}

// copyRegular copies the regular file src to dst (mode 0444, as go
// leaves module files) and returns the bytes written.
func copyRegular(src, dst string) ([]byte, error) {
	f, err := os.OpenFile(src, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var buf bytes.Buffer
	if _, err := io.Copy(&buf, f); err != nil {
		return nil, err
	}
	// A new file in the staging folder, which is put in place whole once
	// verified (never a file replaced).
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o444)
	if err != nil {
		return nil, err
	}
	if _, err := out.Write(buf.Bytes()); err != nil {
		out.Close()
		return nil, err
	}
	return buf.Bytes(), out.Close()
}

// hash1 is go's module hash "h1:": the sha256 of the lines "SHA256HEX
// NAME\n" of the files, sorted by name, in base64.
func hash1(names []string, datas [][]byte) string {
	idx := make([]int, len(names))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return names[idx[a]] < names[idx[b]] })
	h := sha256.New()
	for _, i := range idx {
		if strings.Contains(names[i], "\n") {
			return ""
		}
		fmt.Fprintf(h, "%x  %s\n", sha256.Sum256(datas[i]), names[i])
	}
	return "h1:" + base64.StdEncoding.EncodeToString(h.Sum(nil))
}

// escapeModule is a module path or version as the module cache spells
// it on disk (an upper-case letter is "!" and the letter), and whether
// it is a plain relative path: letters, digits and -._~+/ only, no empty,
// "." or ".." segment.
func escapeModule(s string) (string, bool) {
	if s == "" || strings.HasPrefix(s, "/") {
		return "", false
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'A' && r <= 'Z':
			b.WriteByte('!')
			b.WriteRune(r + ('a' - 'A'))
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', strings.ContainsRune("-._~+/", r):
			b.WriteRune(r)
		default:
			return "", false
		}
	}
	for _, seg := range strings.Split(s, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return "", false
		}
	}
	return b.String(), true
}

// FillKey is the line of the "filled" list that a fill from the base
// writes: the base commit, and the suites it ran for real when it ran
// some (a fill without them leaves the suites' own builds out).
//
// A fill that ran with some of the base's modules missing from the
// module cache (the runner's own cache lacked them) built little: its
// key names how many were found, so the first check that finds them all
// fills again instead of compiling everything in every attempt.
func (gc *Caches) FillKey() string {
	key := gc.BaseKey()
	if len(gc.runs) == 0 {
		return key
	}
	var b strings.Builder
	for _, r := range gc.runs {
		fmt.Fprintf(&b, "%s\x00%s\x00%s\n", r.pattern, r.skip, r.budget)
		if r.testlog {
			b.WriteString("testlog v1\n")
		}
	}
	return key + " suites " + flakegate.SHA256Hex([]byte(b.String()))[:16]
}

// BaseKey is the fill's key without the suites: what a replay, which
// runs no suite's fill, asks for.
func (gc *Caches) BaseKey() string {
	if gc.found < gc.named {
		return gc.base + fmt.Sprintf(" modules %d/%d", gc.found, gc.named)
	}
	return gc.base
}

// suiteFillRuns are the go suites of a config as the fill runs them:
// each pattern once, its excluded names skipped (a pattern holding a
// slash names subtests and is left to run), within the suite's budget.
func suiteFillRuns(suites []config.Suite) []fillRun {
	var runs []fillRun
	for _, s := range suites {
		if s.Framework != config.FrameworkGo {
			continue
		}
		var skip []string
		for _, pat := range s.Exclude {
			if strings.Contains(pat, "/") {
				continue
			}
			q := regexp.QuoteMeta(pat)
			q = strings.ReplaceAll(q, `\*`, ".*")
			q = strings.ReplaceAll(q, `\?`, ".")
			skip = append(skip, q)
		}
		r := fillRun{pattern: s.Path, budget: s.WallBudget}
		if len(skip) > 0 {
			r.skip = "^(?:" + strings.Join(skip, "|") + ")$"
		}
		runs = append(runs, r)
	}
	return runs
}

// UseSuites makes the fill run the config's go suites for real, once
// (suiteFillRuns): their fill has a key of its own (FillKey). With
// testlog, each run also keeps what the base's tests read and how long
// each package took (BaseReads), which the check's impact needs.
func (gc *Caches) UseSuites(suites []config.Suite, testlog bool) {
	gc.runs = suiteFillRuns(suites)
	for i := range gc.runs {
		gc.runs[i].testlog = testlog
	}
}

// Filled reports whether the build cache was filled from base already
// (base is a fillKey).
func (gc *Caches) Filled(base string) bool {
	b, _ := os.ReadFile(filepath.Join(gc.dir, "filled"))
	for _, l := range strings.Split(string(b), "\n") {
		if l == base {
			return true
		}
	}
	return false
}

// Fill builds the base's test binaries once in tree (a checkout of the
// base), in sb with the build cache writable: `go test -count=1 -exec
// /bin/true ./...` in every module of the base, so the compiled
// packages and vet results land in the cache. Then each go suite of the
// config runs once for real (`go test -count=1 PATTERN`, its excluded
// names skipped), so that what the suite's tests build themselves (a
// test that runs go build, as cobra's TestDeadcodeElimination does)
// lands there too and no attempt compiles it again; -count=1 caches no
// test output. Only the base fills it: trusted code, never a
// candidate's. A fill that fails keeps what it built (each entry is the
// base's own) and says why; the attempts then compile the rest. It runs
// once per base commit (the folder's "filled" list) under the cache's
// fill lock.
func (gc *Caches) Fill(ctx context.Context, sb sandbox.Sandbox, env []string, tree string, op string) (string, error) {
	if gc == nil || gc.Filled(gc.FillKey()) {
		return "", nil
	}
	lock, err := flock.Lock(ctx, gc.dir+".fill", flock.Options{What: "the Go build cache's fill lock", Op: op})
	if err != nil {
		return "", err
	}
	defer lock.Close()
	if gc.Filled(gc.FillKey()) {
		return "", nil
	}
	sb.GoCache, sb.FillGoCache, sb.Tree, sb.Prepared, sb.Persist = filepath.Join(gc.dir, "cache"), true, tree, "", ""
	sb.Network = false
	started := time.Now()
	std := gc.seedStd(ctx, sb, env, tree, op)
	var why []string
	for _, m := range gc.modules {
		dir := filepath.Join(tree, filepath.FromSlash(m))
		out := attempt.Run(ctx, attempt.Command{Argv: []string{"go", "test", "-count=1", "-exec", "/bin/true", "./..."}, Dir: dir, Env: env,
			WallBudget: goFillBudget, Sandbox: &sb, NoTestMarkers: []string{}})
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		if out.Result != attempt.Pass {
			why = append(why, fmt.Sprintf("%s: %s: %s", m, strings.TrimSpace(out.Result+" "+out.Reason), Failure(out.Tail, 3)))
		}
	}
	// go tool test2json, which the attempts that run a kept test binary
	// run (binary.go), is built into the cache on its first run: here,
	// not in every check's build step. It reads nothing (no input) and
	// decides nothing; a failure only leaves it to the build step.
	if len(gc.modules) > 0 {
		attempt.Run(ctx, attempt.Command{Argv: []string{"go", "tool", "test2json"}, Dir: tree, Env: env,
			WallBudget: goFillBudget, Sandbox: &sb, NoTestMarkers: []string{}})
	}
	var skipped []string
	var reads []*BaseReads
	for _, run := range gc.runs {
		argv := []string{"go", "test", "-count=1", "-json"}
		if run.testlog {
			argv = append(argv, "-exec", impact.GoTestlogExec)
		}
		argv = append(argv, run.pattern)
		if run.skip != "" {
			argv = append(argv, "-skip", run.skip)
		}
		events := evidence.NewGoJSON()
		var w io.Writer = events
		logged := &attempt.Bounded{Max: maxTestlog}
		if run.testlog {
			w = io.MultiWriter(events, logged)
		}
		out := attempt.Run(ctx, attempt.Command{Argv: argv, Dir: tree, Env: env, WallBudget: run.budget, Sandbox: &sb, NoTestMarkers: []string{}, Output: w})
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		if out.Result != attempt.Pass {
			why = append(why, fmt.Sprintf("suite %s: %s: %s", run.pattern, strings.TrimSpace(out.Result+" "+out.Reason), Failure(out.Tail, 3)))
		}
		skipped = append(skipped, goSkips(events)...)
		if run.testlog {
			r, err := readBaseRun(ctx, sb, env, tree, run, logged)
			if ctx.Err() != nil {
				return "", ctx.Err()
			}
			if err != nil {
				why = append(why, fmt.Sprintf("suite %s: what its tests read is not known, so every test of it counts as affected: %v", run.pattern, err))
				continue
			}
			reads = append(reads, r)
		}
	}
	if err := gc.writeBaseReads(mergeBaseReads(reads)); err != nil {
		return "", &flakegate.Error{Code: flakegate.EINTERNAL, Op: op, Path: gc.dir, Message: "cannot record what the base's tests read", Err: err}
	}
	for _, key := range []string{gc.FillKey(), gc.BaseKey()} {
		if err := atomicfile.WriteFile(gc.skippedFile(key), []byte(strings.Join(skipped, "")), 0o600); err != nil {
			return "", &flakegate.Error{Code: flakegate.EINTERNAL, Op: op, Path: gc.dir, Message: "cannot record the tests the base skips", Err: err}
		}
	}
	b, _ := os.ReadFile(filepath.Join(gc.dir, "filled"))
	list := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(list) > 100 {
		list = list[len(list)-100:]
	}
	list = append(list, gc.BaseKey()) // a replay's key
	if key := gc.FillKey(); key != gc.BaseKey() {
		list = append(list, key)
	}
	if err := atomicfile.WriteFile(filepath.Join(gc.dir, "filled"), []byte(strings.TrimSpace(strings.Join(list, "\n"))+"\n"), 0o600); err != nil {
		return "", &flakegate.Error{Code: flakegate.EINTERNAL, Op: op, Path: gc.dir, Message: "cannot record the Go build cache's fill", Err: err}
	}
	line := fmt.Sprintf("Go build cache filled from the base %s in %.1f s", flakegate.ShortSHA(gc.base), time.Since(started).Seconds()) + std
	if len(why) > 0 {
		line += " (what built is kept; " + strings.Join(why, "; ") + ")"
	}
	return line, nil
}

// goSkips is the record's lines of the top-level tests the events say
// ended skipped: "IMPORT\tNAME\n".
func goSkips(events *evidence.GoJSON) []string {
	var skipped []string
	for _, t := range events.Skipped() {
		if !strings.ContainsAny(t[0]+t[1], "\t\n") {
			skipped = append(skipped, t[0]+"\t"+t[1]+"\n")
		}
	}
	return skipped
}

// skippedFile is where the fill from key records the go suites' tests
// the base skipped.
func (gc *Caches) skippedFile(key string) string {
	h := sha256.Sum256([]byte(key))
	return filepath.Join(gc.dir, "skipped-"+hex.EncodeToString(h[:8]))
}

// BaseSkipped returns the top-level tests the base's own run of the go
// suites skipped in the fill from key ("IMPORT\x00NAME"), and whether
// that fill recorded them (a fill by an older flakegate did not).
func (gc *Caches) BaseSkipped(key string) (map[string]bool, bool) {
	if gc == nil {
		return nil, false
	}
	b, err := os.ReadFile(gc.skippedFile(key))
	if err != nil {
		return nil, false
	}
	skipped := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		if pkg, name, ok := strings.Cut(line, "\t"); ok {
			skipped[pkg+"\x00"+name] = true
		}
	}
	return skipped, true
}

// Describe is the caches in words, for the "sandbox:" line; warm says
// whether the probe could lay the build cache under the attempts.
func (gc *Caches) Describe(warm bool) string {
	if gc == nil {
		return "; Go caches: none (no Go module at the base, or no go on PATH)"
	}
	build := "the repository's build cache, built from the base " + flakegate.ShortSHA(gc.base) + " under a throwaway layer"
	if !warm {
		build = "a cold build cache (the repository's cannot be laid under the attempts here)"
	}
	return fmt.Sprintf("; Go caches: %s, and %d of the %d modules the base's go.sum names (never the runner's own)", build, gc.found, gc.named)
}

// count is n things in words: "1 module", "3 modules".
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
