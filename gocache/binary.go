// A go tree's kept test binaries: the build step's go test links each
// package's test binary and, in place of running it, its -exec keeper
// copies it into the step's kept Go cache layer, with the PATH go gives
// a test binary. A later attempt of the same tree and build that tests
// one package runs that binary through go tool test2json, as go test
// itself runs it, instead of having go test load, check and link it
// again: go keeps no linked test binary, and that link and the go
// command's own work are about 0.3 s of every run of a warm package
// (bench/golink.sh).
//
// What the attempt runs is what go test would have run: the binary the
// go command linked from the same tree, tree files and caches (the
// step's key holds them all), with go test's own arguments for it
// (TestBinaryArgs: -test.paniconexit0, -test.v=test2json, the
// command's test flags as -test.NAME=VALUE, in go test's order), in
// the package's folder, with go test's PATH; and its output is framed
// by test2json, the converter go test -json uses, reading stdout and
// stderr alike. A command this file cannot speak for exactly (more
// than one package, a flag it does not know, GOFLAGS that set a test
// flag) runs go test as before. The record keeps the command's go test
// argv: the process is that command's run.
//
// Test code never writes a binary another attempt runs: the keeper
// runs in the build step, which runs no test code, and every attempt
// sees the layer read-only below a throwaway layer of its own.

package gocache

import (
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/attempt/sandbox"
)

// keptBins is the folder of the kept test binaries in the build step's
// Go cache layer (the attempts' $GOCACHE): a binary whose package's
// folder is /sandbox/tree/p is kept in keptBins/sandbox/tree/p, beside
// a file PATH holding the PATH go ran it with.
const keptBins = "flakegate-bin"

// keeperExec is the build step's -exec: go test runs it in the
// package's folder with the linked binary as its first argument, and
// it copies the binary into keptBins, running nothing of it.
const keeperExec = `/bin/sh -c 'd=` + sandbox.SandboxGoCache + `/` + keptBins + `"$PWD" && mkdir -p "$d" && cp "$0" "$d/" && printf %s "$PATH" > "$d/PATH"'`

// testBinaryFlags are go test's flags whose values go test passes to the
// test binary as -test.NAME=VALUE and that this file passes the same way;
// the value says whether the flag takes one.
var testBinaryFlags = map[string]bool{"count": true, "cpu": true, "parallel": true, "run": true, "shuffle": true, "skip": true, "timeout": true,
	"short": false, "fullpath": false}

// goTestOwnFlags are go test's other flags (besides buildFlags): a
// command with one of them runs go test.
var goTestOwnFlags = map[string]bool{"artifacts": true, "bench": true, "benchmem": true, "benchtime": true, "blockprofile": true,
	"blockprofilerate": true, "c": true, "coverprofile": true, "cpuprofile": true, "exec": true, "failfast": true, "fuzz": true,
	"fuzzminimizetime": true, "fuzztime": true, "list": true, "memprofile": true, "memprofilerate": true, "mutexprofile": true,
	"mutexprofilefraction": true, "o": true, "outputdir": true, "trace": true, "v": true, "args": true, "n": true, "x": true,
	"work": true, "toolexec": true, "i": true, "p": true, "C": true, "modcacherw": true, "cover": true, "covermode": true, "coverpkg": true}

// TestBinaryArgs is what go test passes to the test binary of argv (a
// batch's go test -json command of one package), with env's GOFLAGS: pkg
// is the package argument ("." or "./dir"), args the binary's
// arguments in go test's order. ok is false for a command it cannot
// speak for exactly: not one package, no -json, a flag given without
// "=" that takes a value, a go test flag other than the build's and
// those of testBinaryFlags, a bad -timeout, or GOFLAGS that name any
// flag but a build flag.
func TestBinaryArgs(argv, env []string) (pkg string, args []string, ok bool) {
	if len(argv) < 4 || argv[1] != "test" {
		return "", nil, false
	}
	for _, kv := range env {
		if v, found := strings.CutPrefix(kv, "GOFLAGS="); found {
			for _, f := range strings.Fields(v) {
				name, _, _ := strings.Cut(strings.TrimLeft(f, "-"), "=")
				if _, isBuild := buildFlags[name]; !isBuild || name == "json" || strings.HasPrefix(name, "cover") || name == "fuzz" || !strings.HasPrefix(f, "-") {
					return "", nil, false
				}
			}
		}
	}
	var explicit []string
	json, timeout := false, false
	for i := 2; i < len(argv); i++ {
		a := argv[i]
		if !strings.HasPrefix(a, "-") || a == "-" {
			if pkg != "" || !packageArg(a) {
				return "", nil, false
			}
			pkg = a
			continue
		}
		raw := strings.TrimLeft(a, "-")
		if len(a)-len(raw) > 2 {
			return "", nil, false
		}
		name, value, hasValue := strings.Cut(raw, "=")
		short := strings.TrimPrefix(name, "test.")
		if takes, known := testBinaryFlags[short]; known {
			switch {
			case takes && !hasValue:
				if i+1 >= len(argv) {
					return "", nil, false
				}
				i++
				value = argv[i]
			case !takes && !hasValue:
				value = "true"
			case !takes && value != "true" && value != "false":
				return "", nil, false
			}
			if short == "timeout" {
				d, err := time.ParseDuration(value)
				if err != nil {
					return "", nil, false
				}
				value, timeout = d.String(), true
			}
			explicit = append(explicit, "-test."+short+"="+value)
			continue
		}
		if name == "json" && (!hasValue || value == "true") {
			json = true
			continue
		}
		if strings.HasPrefix(name, "cover") || name == "fuzz" {
			return "", nil, false // go test adds the binary's coverage and fuzzing flags
		}
		if takes, isBuild := buildFlags[name]; isBuild && name != "json" {
			if takes && !hasValue {
				i++ // its value; the build holds it
			}
			continue
		}
		if goTestOwnFlags[name] || goTestOwnFlags[short] || strings.HasPrefix(name, "test.") {
			return "", nil, false
		}
		if !hasValue && i+1 < len(argv) && !strings.HasPrefix(argv[i+1], "-") {
			return "", nil, false // the next word may be its value or a package
		}
		explicit = append(explicit, a) // the binary's own flag (-rapid.seed=3), as go test passes it
	}
	if pkg == "" || !json {
		return "", nil, false
	}
	args = []string{"-test.paniconexit0", "-test.v=test2json"}
	if !timeout {
		args = append(args, "-test.timeout=10m0s") // go test's default
	}
	return pkg, append(args, explicit...), true
}

// packageArg says whether a is a package argument the kept binaries can
// stand for: "." or a clean "./dir" without a pattern.
func packageArg(a string) bool {
	return a == "." || strings.HasPrefix(a, "./") && !strings.Contains(a, "...") && "./"+path.Clean(a[2:]) == a && !strings.HasPrefix(a, "./..")
}

// runKept makes cmd (a go test -json command of one package, in module
// module, whose attempt has the build step layer) run the package's test
// binary the step kept, through go tool test2json; it leaves cmd as it
// was when it cannot.
func runKept(cmd *attempt.Command, layer, module string) {
	sb, _ := cmd.Sandbox.(*sandbox.Sandbox)
	if sb == nil || module == "" || layer == "" {
		return
	}
	pkg, args, ok := TestBinaryArgs(cmd.Argv, cmd.Env)
	if !ok {
		return
	}
	dir := filepath.Join(cmd.Dir, pkg)
	rel, err := filepath.Rel(sb.Tree, dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return
	}
	inside := path.Join(sandbox.TreeMount, filepath.ToSlash(rel))
	kept := filepath.Join(layer, keptBins, filepath.FromSlash(inside))
	bins, _ := filepath.Glob(filepath.Join(kept, "*.test"))
	pathEnv, err := os.ReadFile(filepath.Join(kept, "PATH"))
	if len(bins) != 1 || err != nil {
		return
	}
	importPath := module
	if r := strings.TrimPrefix(pkg, "./"); r != "." {
		importPath += "/" + r
	}
	bin := path.Join(sandbox.SandboxGoCache, keptBins, inside, filepath.Base(bins[0]))
	cmd.Argv = append([]string{cmd.Argv[0], "tool", "test2json", "-t", "-p", importPath, bin}, args...)
	cmd.Dir = dir
	env := make([]string, 0, len(cmd.Env)+1)
	for _, kv := range cmd.Env {
		if !strings.HasPrefix(kv, "PATH=") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "PATH="+string(pathEnv))
}
