// The build step of a go tree (a prototype: stop 51's lever, see
// batch/knowndraws.go).
//
// Every go attempt of a tree in a check plants the same known answers
// (batch.KnownDraws), so each builds the same test binaries. Before the
// first go attempt of a tree and command, one attempt in the same
// sandbox, with the same tree files, runs the batch's own command as a
// build that runs no test code: go test -exec /bin/true -count=1 (the
// fill does the same for the base, gocache.Fill). It is a prepare of its
// Go cache alone (sandbox.Persist): what it wrote there is kept when it
// exits 0, and the later attempts of that tree and command get it as one
// more read-only lower layer of their cache (sandbox.GoCacheBuilt). No
// attempt that runs test code writes a cache another attempt reads: each
// one's upper layer is still thrown away. -count=1 keeps the build from
// caching a test result (of /bin/true) that a later attempt could read.
// As root on an overlay only; elsewhere every attempt builds for itself.

package check

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/attempt/sandbox"
)

// goBuilds are a check's build steps, by tree, prepared layer and
// command.
type goBuilds struct {
	mu   sync.Mutex
	root string // the folder of their layers, made at the first build
	by   map[string]*goBuild
}

// goBuild is one build step: done is closed when it ended; layer is its
// kept Go cache ("" when it kept nothing: the attempts build alone).
type goBuild struct {
	done  chan struct{}
	layer string
}

// goBuildFlags are the go test flags that change what is built, and
// whether each takes a value (its next argument unless given with =);
// every other flag is the test binary's, and the build leaves it out, so
// that the batches of other seeds and members share the build. A flag
// left out can only make an attempt miss the build's cache, never hit
// an entry of another build: the cache is keyed by what goes into a
// build.
var goBuildFlags = map[string]bool{"a": false, "asan": false, "msan": false, "race": false, "trimpath": false, "linkshared": false,
	"buildmode": true, "buildvcs": true, "compiler": true, "gccgoflags": true, "gcflags": true, "installsuffix": true, "ldflags": true,
	"mod": true, "modfile": true, "overlay": true, "pgo": true, "pkgdir": true, "tags": true, "vet": true,
	"cover": false, "covermode": true, "coverpkg": true, "coverprofile": true, "fuzz": true, "json": false}

// goRunFlags are go test's own test binary flags that take a value.
var goRunFlags = map[string]bool{"run": true, "skip": true, "count": true, "shuffle": true, "timeout": true, "parallel": true, "cpu": true,
	"bench": true, "benchtime": true, "list": true, "fuzztime": true, "fuzzminimizetime": true, "outputdir": true,
	"cpuprofile": true, "memprofile": true, "blockprofile": true, "mutexprofile": true, "trace": true}

// goBuildArgv is a go batch's argv (prog test ...) as a build that runs
// no test code (go test -exec /bin/true -count=1, its build flags and
// packages), which is also the build's key; ok is false for a command
// the build cannot stand for (its own -exec, -toolexec, -c, -o, -args).
func goBuildArgv(argv []string) (build []string, ok bool) {
	if len(argv) < 3 || argv[1] != "test" {
		return nil, false
	}
	build = []string{argv[0], "test", "-exec", "/bin/true", "-count=1"}
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
		takesValue, isBuild := goBuildFlags[name]
		switch {
		case isBuild && takesValue && !hasValue && i+1 < len(argv):
			build = append(build, a, argv[i+1])
			i++
		case isBuild:
			build = append(build, a)
		case !hasValue && goRunFlags[name] && i+1 < len(argv):
			i++ // a test binary flag's value
		}
	}
	return build, true
}

// useGoBuild gives cmd's attempt (a go batch of tree, its known answers
// armed) the build step's cache layer of its tree and command, running
// the build step first when this is the first such attempt of the check.
func (c *checker) useGoBuild(ctx context.Context, cmd *attempt.Command, tree string) {
	sb, _ := cmd.Sandbox.(*sandbox.Sandbox)
	if sb == nil || tree == "" || !sb.Level.Root || !sb.Overlay || sb.Level.Copy || sb.GoCache == "" || sb.FillGoCache || sb.Persist != "" {
		return
	}
	argv, ok := goBuildArgv(cmd.Argv)
	if !ok {
		return
	}
	key := tree + "\x00" + sb.Prepared + "\x00" + strings.TrimPrefix(cmd.Dir, sb.Tree) + "\x00" + strings.Join(argv, "\x00")
	c.goBuilds.mu.Lock()
	b := c.goBuilds.by[key]
	first := b == nil
	if first {
		b = &goBuild{done: make(chan struct{})}
		if c.goBuilds.by == nil {
			c.goBuilds.by = map[string]*goBuild{}
		}
		c.goBuilds.by[key] = b
	}
	c.goBuilds.mu.Unlock()
	if first {
		b.layer = c.runGoBuild(ctx, cmd, sb, argv)
		close(b.done)
	}
	select {
	case <-b.done:
	case <-ctx.Done():
		return
	}
	if b.layer != "" {
		sb.GoCacheBuilt = append(sb.GoCacheBuilt, b.layer)
	}
}

// runGoBuild runs one build step (argv) in a copy of sb: the same tree,
// tree files, prepared layer and caches, its Go cache's writes kept. It
// returns the kept cache's folder, "" when the build failed or kept none.
func (c *checker) runGoBuild(ctx context.Context, cmd *attempt.Command, sb *sandbox.Sandbox, argv []string) string {
	c.goBuilds.mu.Lock()
	if c.goBuilds.root == "" {
		dir, err := os.MkdirTemp("", "flakegate-gobuild-")
		if err != nil {
			c.goBuilds.mu.Unlock()
			return ""
		}
		c.goBuilds.root = dir
	}
	root := c.goBuilds.root
	c.goBuilds.mu.Unlock()
	dir, err := os.MkdirTemp(root, "b")
	if err != nil {
		return ""
	}
	bs := *sb
	bs.Persist, bs.GoCacheBuilt = dir, nil
	bs.TreeFiles = append([]sandbox.TreeFile(nil), sb.TreeFiles...)
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

// removeGoBuilds removes the build steps' layers (at the check's end).
func (c *checker) removeGoBuilds() {
	if c.goBuilds.root != "" {
		os.RemoveAll(c.goBuilds.root)
	}
}
