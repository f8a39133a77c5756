// A go tree's build step: its test binaries built once per check.
//
// A go batch plants its known answers in the package (batch/knowngo.go),
// drawn once per check, tree and package (batch.KnownDraws), so every go
// attempt of a tree in a check builds the same test binaries. Before the
// first go attempt of a tree and build, one attempt in the same sandbox,
// with the same tree files, runs the batch's own command as a build that
// runs no test code: go test -exec KEEPER -count=1 with the command's
// build flags and packages (Fill does the same for the base, with
// /bin/true). KEEPER (keeperExec, binary.go) is the test binary's
// runner: it copies the linked binary into the Go cache and never runs
// it; -count=1 keeps the build from caching a test result that a later
// attempt could read. The build is a prepare of its Go cache alone
// (sandbox.Persist): what it wrote there is kept when it exits 0, and
// the later attempts of that tree and build get it as one more
// read-only lower layer of their cache (sandbox.GoCacheBuilt), beside a
// layer holding go tool test2json, and run the kept binary (binary.go).
//
// What it trusts is what Fill trusts: the go command, which compiles,
// vets and links the code without running it. Test code writes no cache
// another attempt reads: each attempt's own upper layer is still thrown
// away, and the build's layer is written before any attempt of its tree
// ran. The key holds the tree (its side and revision): the base's
// attempts never read a layer built from the candidate's tree. A build
// that fails keeps nothing, and its attempts build for themselves: the
// build decides no label and its output is not shown.
//
// Like a prepare, it needs attempts on overlays as root (the kept layer
// is a copy of an overlay's upper layer, with its whiteouts); elsewhere
// every attempt builds for itself, as before.

package gocache

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/attempt/sandbox"
	"github.com/flakegate/flakegate/internal/flock"
)

// Builds are a check's build steps, by tree, prepared layer, folder and
// build. The zero value builds nothing (no Root).
type Builds struct {
	// Root is the folder of every check's build layers,
	// <git common dir>/flakegate/gobuild (BuildsRoot): on the
	// repository's disk, which no attempt can see.
	Root string

	mu   sync.Mutex
	dir  string   // this check's folder under Root, made at the first build
	lock *os.File // held while the check runs: a later check removes only unheld folders
	by   map[string]*build
}

// build is one build step: done is closed when it ended; layers are its
// kept Go caches (run: none when it kept nothing and the attempts build
// alone; the build's, then test2json's when the kept binary can run).
type build struct {
	done   chan struct{}
	layers []string
}

// BuildsRoot is the folder of the build steps' layers of the repository
// whose git common directory is common.
func BuildsRoot(common string) string { return filepath.Join(common, "flakegate", "gobuild") }

// buildFlags are the go test flags that change what is built, and
// whether each takes a value (its next argument unless given with =);
// every other flag is the test binary's, and the build leaves it out, so
// that the batches of other seeds and members share the build. A flag
// left out can only make an attempt miss the build's cache, never hit
// an entry of another build: the cache is keyed by what goes into a
// build.
var buildFlags = map[string]bool{"a": false, "asan": false, "msan": false, "race": false, "trimpath": false, "linkshared": false,
	"buildmode": true, "buildvcs": true, "compiler": true, "gccgoflags": true, "gcflags": true, "installsuffix": true, "ldflags": true,
	"mod": true, "modfile": true, "overlay": true, "pgo": true, "pkgdir": true, "tags": true, "vet": true,
	"cover": false, "covermode": true, "coverpkg": true, "coverprofile": true, "fuzz": true, "json": false}

// runFlags are go test's own test binary flags that take a value.
var runFlags = map[string]bool{"run": true, "skip": true, "count": true, "shuffle": true, "timeout": true, "parallel": true, "cpu": true,
	"bench": true, "benchtime": true, "list": true, "fuzztime": true, "fuzzminimizetime": true, "outputdir": true,
	"cpuprofile": true, "memprofile": true, "blockprofile": true, "mutexprofile": true, "trace": true}

// BuildArgv is a go batch's argv (prog test ...) as a build that runs no
// test code (go test -exec KEEPER -count=1, its build flags and
// packages), which is also the build's key; ok is false for a command
// the build cannot stand for (its own -exec, -toolexec, -c, -o, -args).
func BuildArgv(argv []string) (build []string, ok bool) {
	if len(argv) < 3 || argv[1] != "test" {
		return nil, false
	}
	build = []string{argv[0], "test", "-exec", keeperExec, "-count=1"}
	for i := 2; i < len(argv); i++ {
		a := argv[i]
		if !strings.HasPrefix(a, "-") {
			build = append(build, a) // a package
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch name {
		case "exec", "toolexec", "c", "o", "args", "i", "n":
			return nil, false
		}
		takesValue, isBuild := buildFlags[name]
		switch {
		case isBuild && takesValue && !hasValue && i+1 < len(argv):
			build = append(build, a, argv[i+1])
			i++
		case isBuild:
			build = append(build, a)
		case !hasValue && runFlags[name] && i+1 < len(argv):
			i++ // a test binary flag's value
		}
	}
	return build, true
}

// buildable says whether the attempt of sandbox sb can take a build
// step's layer: as root on an overlay, with the repository's Go cache,
// an attempt that runs test code (not a fill, not a prepare).
func buildable(sb *sandbox.Sandbox) bool {
	return sb != nil && sb.Level.Root && sb.Overlay && !sb.Level.Copy && sb.GoCache != "" && !sb.FillGoCache && sb.Persist == ""
}

// BuildKey is the key of cmd's build step in tree (its side and
// revision), "" when cmd has none.
func BuildKey(cmd *attempt.Command, tree string) string {
	sb, _ := cmd.Sandbox.(*sandbox.Sandbox)
	if tree == "" || !buildable(sb) {
		return ""
	}
	argv, ok := BuildArgv(cmd.Argv)
	if !ok {
		return ""
	}
	return tree + "\x00" + sb.Prepared + "\x00" + strings.TrimPrefix(cmd.Dir, sb.Tree) + "\x00" + strings.Join(argv, "\x00")
}

// Use gives cmd's attempt (a go batch of tree, its known answers armed)
// the build step's cache layer of its tree and build, running the build
// step first when this is the first such attempt of the check; others
// wait for it.
//
// When the step kept the test binary of cmd's one package, cmd runs it
// (binary.go): module is the module path of the tree's go.mod, "" to
// leave cmd's argv as it is.
func (b *Builds) Use(ctx context.Context, cmd *attempt.Command, tree, module string) {
	key := BuildKey(cmd, tree)
	if b == nil || b.Root == "" || key == "" {
		return
	}
	b.mu.Lock()
	s := b.by[key]
	first := s == nil
	if first {
		s = &build{done: make(chan struct{})}
		if b.by == nil {
			b.by = map[string]*build{}
		}
		b.by[key] = s
	}
	b.mu.Unlock()
	if first {
		s.layers = b.run(ctx, cmd)
		close(s.done)
	}
	select {
	case <-s.done:
	case <-ctx.Done():
		return
	}
	if len(s.layers) > 0 {
		sb := cmd.Sandbox.(*sandbox.Sandbox)
		sb.GoCacheBuilt = append(sb.GoCacheBuilt, s.layers...)
		if len(s.layers) == 2 {
			runKept(cmd, s.layers[0], s.layers[1], module)
		}
	}
}

// run runs one build step in a copy of cmd's sandbox: the same tree,
// tree files, prepared layer and caches, its Go cache's writes kept. It
// returns the kept caches' folders: none when the build failed or kept
// nothing; the build's alone when go tool test2json could not be built
// over it (the attempts then run go test); the build's and test2json's.
func (b *Builds) run(ctx context.Context, cmd *attempt.Command) []string {
	argv, _ := BuildArgv(cmd.Argv)
	// go tool builds test2json (the toolchain ships none) into the Go
	// cache on its first run: once here, beside the build, and kept
	// where the attempts run it without the go command (binary.go).
	var tool string
	var wg sync.WaitGroup
	wg.Go(func() { tool = b.persist(ctx, cmd, toolKeeper(argv[0])) })
	layer := b.persist(ctx, cmd, argv)
	wg.Wait()
	switch {
	case layer == "":
		return nil
	case tool == "":
		return []string{layer}
	}
	return []string{layer, tool}
}

// persist runs argv, which runs no test code, in a copy of cmd's
// sandbox, and returns the folder of what it wrote to the Go cache, ""
// when it failed or wrote nothing.
func (b *Builds) persist(ctx context.Context, cmd *attempt.Command, argv []string) string {
	root, err := b.checkDir()
	if err != nil {
		return ""
	}
	dir, err := os.MkdirTemp(root, "b")
	if err != nil {
		return ""
	}
	bs := *cmd.Sandbox.(*sandbox.Sandbox)
	bs.Persist, bs.GoCacheBuilt = dir, nil
	bs.TreeFiles = append([]sandbox.TreeFile(nil), bs.TreeFiles...)
	out := attempt.Run(ctx, attempt.Command{Argv: argv, Dir: cmd.Dir, Env: cmd.Env, WallBudget: cmd.WallBudget, Sandbox: &bs, NoTestMarkers: []string{}, Output: io.Discard})
	layer := filepath.Join(dir, "gocache")
	if out.Result != attempt.Pass || out.ExitCode != 0 {
		return ""
	}
	if _, err := os.Stat(layer); err != nil {
		return ""
	}
	return layer
}

// checkDir makes this check's folder under Root at the first build,
// locked while the check runs, and removes the folders of checks that
// ended without removing theirs (a runner killed): those whose lock
// nobody holds.
func (b *Builds) checkDir() (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.dir != "" {
		return b.dir, nil
	}
	if err := os.MkdirAll(b.Root, 0o700); err != nil { // root only: no attempt walks into it
		return "", err
	}
	removeUnheld(b.Root, time.Now().Add(-time.Minute))
	dir, err := os.MkdirTemp(b.Root, "check-")
	if err != nil {
		return "", err
	}
	lock, ok, err := flock.TryExclusive(dir)
	if err != nil || !ok {
		os.RemoveAll(dir)
		return "", fmt.Errorf("cannot lock %s: %v", dir, err)
	}
	b.dir, b.lock = dir, lock
	return dir, nil
}

// removeUnheld removes the check folders under root whose lock no check
// holds, made before since (a folder just made is not locked yet).
func removeUnheld(root string, since time.Time) {
	ents, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, e := range ents {
		info, err := e.Info()
		if err != nil || !e.IsDir() || !strings.HasPrefix(e.Name(), "check-") || info.ModTime().After(since) {
			continue
		}
		dir := filepath.Join(root, e.Name())
		lock, ok, err := flock.TryExclusive(dir)
		if err != nil || !ok {
			continue
		}
		os.RemoveAll(dir)
		lock.Close()
	}
}

// Close removes this check's build layers (at the check's end).
func (b *Builds) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.dir == "" {
		return
	}
	os.RemoveAll(b.dir)
	b.lock.Close()
	b.dir, b.lock = "", nil
}
