// A go tree's kept test binaries: the build step's go test links each
// package's test binary and, in place of running it, its -exec keeper
// copies it into the step's kept Go cache layer, with the PATH go gives
// a test binary; a second command of the step keeps the test2json
// executable go tool runs. A later attempt of the same tree and build
// runs the binaries of its packages through that test2json, as go test
// itself runs them, instead of having go test load, vet and link them
// again: go keeps no linked test binary, and that link and the go
// command's own work are about 0.3 s of every run of a warm package
// (bench/golink.sh).
//
// What the attempt runs is what go test would have run: the binaries
// the go command linked from the same tree, tree files and caches (the
// step's key holds them all), with go test's own arguments for them
// (TestBinaryArgs: -test.paniconexit0, -test.v=test2json, the
// command's test flags as -test.NAME=VALUE, in go test's order), each
// in its package's folder, with go test's PATH; and their output is
// framed by test2json, the converter go test -json uses, reading stdout
// and stderr alike. The binaries of several packages run side by side,
// as go test runs them (keptArgv). A command this file cannot speak for
// exactly (a pattern, a flag it does not know, GOFLAGS that set a test
// flag) runs go test as before. The record keeps the command's go test argv: the
// process is that command's run.
//
// Test code never writes a binary another attempt runs: the keepers
// run in the build step, which runs no test code, and every attempt
// sees the layers read-only below a throwaway layer of its own. Within
// one attempt of several packages, one package's test code could
// replace a later package's binary in that throwaway layer; under go
// test it could as well replace that binary in go's work folder, and
// every package of a candidate's tree is the candidate's code anyway.

package gocache

import (
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/attempt/sandbox"
	"github.com/flakegate/flakegate/internal/shquote"
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

// keptTool is test2json's path in the step's test2json layer, apart
// from keptBins (the attempt's Go cache stacks both layers, and the
// layer a folder was made in hides that folder of the other):
// toolKeeper copies the executable go tool runs there, so that an
// attempt runs it as go tool would, without a go command of its own
// (0.17 s of CPU a run, bench/golink.sh: the go command, and compile and
// link asked for their versions to find the tool in the cache).
const keptTool = "flakegate-tool/test2json"

// toolKeeper is the build step's second command: it has go tool build
// test2json from the toolchain (or find it in the cache) and print its
// path, and copies it to keptTool.
func toolKeeper(goCmd string) []string {
	return []string{"/bin/sh", "-c", `p=$("$0" tool -n test2json) && mkdir -p ` + sandbox.SandboxGoCache + "/" + path.Dir(keptTool) +
		` && cp "$p" ` + sandbox.SandboxGoCache + "/" + keptTool, goCmd}
}

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

// TestBinaryArgs is what go test passes to each test binary of argv (a
// batch's go test -json command), with env's GOFLAGS: pkgs are the
// package arguments in order ("." or "./dir"), args each binary's
// arguments in go test's order. ok is false for a command it cannot
// speak for exactly: no package, a pattern or an import path, a
// package named twice, no -json, a flag given without "=" that takes
// a value, a go test flag other than the build's and those of
// testBinaryFlags, a bad -timeout, or GOFLAGS that name any flag but a
// build flag.
func TestBinaryArgs(argv, env []string) (pkgs []string, args []string, ok bool) {
	if len(argv) < 4 || argv[1] != "test" {
		return nil, nil, false
	}
	for _, kv := range env {
		if v, found := strings.CutPrefix(kv, "GOFLAGS="); found {
			for _, f := range strings.Fields(v) {
				name, _, _ := strings.Cut(strings.TrimLeft(f, "-"), "=")
				if _, isBuild := buildFlags[name]; !isBuild || name == "json" || strings.HasPrefix(name, "cover") || name == "fuzz" || !strings.HasPrefix(f, "-") {
					return nil, nil, false
				}
			}
		}
	}
	var explicit []string
	json, timeout := false, false
	for i := 2; i < len(argv); i++ {
		a := argv[i]
		if !strings.HasPrefix(a, "-") || a == "-" {
			if slices.Contains(pkgs, a) || !packageArg(a) {
				return nil, nil, false
			}
			pkgs = append(pkgs, a)
			continue
		}
		raw := strings.TrimLeft(a, "-")
		if len(a)-len(raw) > 2 {
			return nil, nil, false
		}
		name, value, hasValue := strings.Cut(raw, "=")
		short := strings.TrimPrefix(name, "test.")
		if takes, known := testBinaryFlags[short]; known {
			switch {
			case takes && !hasValue:
				if i+1 >= len(argv) {
					return nil, nil, false
				}
				i++
				value = argv[i]
			case !takes && !hasValue:
				value = "true"
			case !takes && value != "true" && value != "false":
				return nil, nil, false
			}
			if short == "timeout" {
				d, err := time.ParseDuration(value)
				if err != nil {
					return nil, nil, false
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
			return nil, nil, false // go test adds the binary's coverage and fuzzing flags
		}
		if takes, isBuild := buildFlags[name]; isBuild && name != "json" {
			if takes && !hasValue {
				i++ // its value; the build holds it
			}
			continue
		}
		if goTestOwnFlags[name] || goTestOwnFlags[short] || strings.HasPrefix(name, "test.") {
			return nil, nil, false
		}
		if !hasValue && i+1 < len(argv) && !strings.HasPrefix(argv[i+1], "-") {
			return nil, nil, false // the next word may be its value or a package
		}
		explicit = append(explicit, a) // the binary's own flag (-rapid.seed=3), as go test passes it
	}
	if len(pkgs) == 0 || !json {
		return nil, nil, false
	}
	args = []string{"-test.paniconexit0", "-test.v=test2json"}
	if !timeout {
		args = append(args, "-test.timeout=10m0s") // go test's default
	}
	return pkgs, append(args, explicit...), true
}

// packageArg says whether a is a package argument the kept binaries can
// stand for: "." or a clean "./dir" without a pattern.
func packageArg(a string) bool {
	return a == "." || strings.HasPrefix(a, "./") && !strings.Contains(a, "...") && "./"+path.Clean(a[2:]) == a && !strings.HasPrefix(a, "./..")
}

// keptRun is one package's kept binary: its folder in the tree (dir on
// the host, inside in the sandbox), its import path, the binary's path
// inside the sandbox and the PATH go ran the keeper with.
type keptRun struct {
	dir, inside, importPath, bin, path string
}

// keptBinary finds the binary the build step kept in layer for package
// argument pkg of a command run in dir of sb's tree, in module module.
func keptBinary(sb *sandbox.Sandbox, layer, dir, pkg, module string) (keptRun, bool) {
	dir = filepath.Join(dir, pkg)
	rel, err := filepath.Rel(sb.Tree, dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return keptRun{}, false
	}
	inside := path.Join(sandbox.TreeMount, filepath.ToSlash(rel))
	kept := filepath.Join(layer, keptBins, filepath.FromSlash(inside))
	bins, _ := filepath.Glob(filepath.Join(kept, "*.test"))
	pathEnv, err := os.ReadFile(filepath.Join(kept, "PATH"))
	if len(bins) != 1 || err != nil {
		return keptRun{}, false
	}
	importPath := module
	if r := strings.TrimPrefix(pkg, "./"); r != "." {
		importPath += "/" + r
	}
	return keptRun{dir: dir, inside: inside, importPath: importPath, bin: path.Join(sandbox.SandboxGoCache, keptBins, inside, filepath.Base(bins[0])), path: string(pathEnv)}, true
}

// runKept makes cmd (a go test -json command, in module module, whose
// attempt has the build step layer) run the test binaries the step
// kept, through the test2json executable it kept; it leaves cmd as it
// was when it cannot. One package's binary is cmd's process; the
// binaries of several packages run side by side as go test runs them
// (keptArgv).
func runKept(cmd *attempt.Command, layer, toolLayer, module string) {
	sb, _ := cmd.Sandbox.(*sandbox.Sandbox)
	if sb == nil || module == "" || layer == "" {
		return
	}
	if _, err := os.Stat(filepath.Join(toolLayer, filepath.FromSlash(keptTool))); err != nil {
		return
	}
	tool := path.Join(sandbox.SandboxGoCache, keptTool)
	pkgs, args, ok := TestBinaryArgs(cmd.Argv, cmd.Env)
	if !ok {
		return
	}
	runs := make([]keptRun, len(pkgs))
	for i, pkg := range pkgs {
		k, ok := keptBinary(sb, layer, cmd.Dir, pkg, module)
		if !ok || k.path != runs[0].path && i > 0 {
			return // go gives every binary of one go test the same PATH
		}
		runs[i] = k
	}
	if len(runs) == 1 {
		cmd.Argv = append([]string{tool, "-t", "-p", runs[0].importPath, runs[0].bin}, args...)
		cmd.Dir = runs[0].dir
	} else {
		cmd.Argv = keptArgv(tool, runs, args)
	}
	env := make([]string, 0, len(cmd.Env)+1)
	for _, kv := range cmd.Env {
		if !strings.HasPrefix(kv, "PATH=") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "PATH="+runs[0].path)
}

// keptArgv runs runs' binaries through test2json (tool), each in its
// package's folder, as go test runs a command of several packages: up to
// -p of them at once, go's default -p being GOMAXPROCS (the variable,
// else the CPUs: nproc), each package's events written as they come
// (test2json writes one event at a time), and it exits 1 when any of
// them did not exit 0. /bin/sh hands the packages' numbers to xargs -P,
// which runs the script keptCase picks each one's command from; every
// word of it is quoted (the import paths come from the tree's go.mod,
// the arguments from the command).
func keptArgv(tool string, runs []keptRun, args []string) []string {
	const fanOut = `p=${GOMAXPROCS:-}
case $p in ''|*[!0-9]*|0) p=$(nproc 2>/dev/null) || p=1 ;; esac
i=0
while [ "$i" -lt "$1" ]; do echo "$i"; i=$((i + 1)); done | xargs -n 1 -P "$p" /bin/sh -c "$0" sh
[ $? -eq 0 ]
`
	return []string{"/bin/sh", "-c", fanOut, keptCase(tool, runs, args), strconv.Itoa(len(runs))}
}

// keptCase is the script that runs package number $1 of runs and exits
// 0 when its binary passed, else 1 (xargs stops at no exit code of 1).
func keptCase(tool string, runs []keptRun, args []string) string {
	var b strings.Builder
	b.WriteString("case $1 in\n")
	for i, k := range runs {
		words := append([]string{tool, "-t", "-p", k.importPath, k.bin}, args...)
		b.WriteString(strconv.Itoa(i) + ") cd " + shquote.Word(k.inside) + " || exit 1\n")
		for j, w := range words {
			if j > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(shquote.Word(w))
		}
		b.WriteString(" || exit 1 ;;\n")
	}
	b.WriteString("*) exit 1 ;;\nesac\n")
	return b.String()
}
