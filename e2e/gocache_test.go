package e2e_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// hostGoEnv is `go env NAME` of the test's own environment.
func hostGoEnv(t *testing.T, name string) string {
	t.Helper()
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// markerProp reports which of the folders an attempt can reach hold a
// marker, then writes one into each it can write, then exits as
// src/lib.sh says.
const markerProp = `. ./src/lib.sh
places="$GOCACHE $GOCACHE/00 $GOMODCACHE $HOME /tmp /dev/shm /var/tmp $PWD $PWD/sub"
seen=""
for d in $places; do [ -e "$d/fg-marker" ] && seen="$seen $d"; done
echo "seen:${seen:- none}"
wrote=""
for d in $places; do (echo m > "$d/fg-marker") 2>/dev/null && wrote="$wrote $d"; done
echo "wrote:$wrote"
exit "$FAIL"
`

// TestCheckNoLeakMarkers: a marker an attempt writes into its Go build
// cache (warm: the repository's, read-only, under a throwaway layer), its
// module cache, $HOME, /tmp, /dev/shm or its tree is seen by no retry,
// not by the base, and never lands on the host.
func TestCheckNoLeakMarkers(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go is not installed")
	}
	hostCache, modCache := hostGoEnv(t, "GOCACHE"), hostGoEnv(t, "GOMODCACHE")
	r := newRepo(t, map[string]string{
		"flakegate.yaml":  "version: 1\nretry_cap: 2\nproperties:\n  - path: props/marker.sh\n    seeds: [7]\n    run: [sh, \"{path}\", \"{seed}\"]\n    wall_budget: 60s\n",
		"props/marker.sh": markerProp,
		"src/lib.sh":      "FAIL=0\n",
		"sub/keep":        "x\n",
		"go.mod":          "module example.com/marker\n\ngo 1.21\n",
		"marker_test.go":  "package marker\n\nimport \"testing\"\n\nfunc TestNothing(t *testing.T) {}\n",
	})
	r.candidate("bad", map[string]string{"src/lib.sh": "FAIL=1\n"})
	cr := r.check("--base", "base", "--candidate", "bad")
	if cr.code != 1 || strings.Join(cr.labels(), ",") != "PROPERTY" {
		t.Fatalf("%s", cr)
	}
	if !strings.Contains(cr.stderr, "Go caches: the repository's build cache, built from the base") {
		t.Errorf("the sandbox line does not name the repository's Go caches:\n%s", cr.stderr)
	}
	rec := cr.record(t, 0)
	if len(rec.Attempts) != 4 {
		t.Fatalf("want 3 candidate attempts and 1 base attempt, got %d", len(rec.Attempts))
	}
	for _, a := range rec.Attempts {
		if !strings.Contains(a.OutputTail, "seen: none") {
			t.Errorf("%s attempt %d saw a marker:\n%s", a.Side, a.Index, a.OutputTail)
		}
		// The Go cache and its subfolders, the tree, /tmp and $HOME are
		// writable; the module cache is not.
		for _, d := range []string{" /tmp/go-build ", " /tmp/go-build/00 ", " /sandbox/tree ", " /tmp "} {
			if !strings.Contains(a.OutputTail+" ", d) {
				t.Errorf("%s attempt %d could not write %s:\n%s", a.Side, a.Index, d, a.OutputTail)
			}
		}
		if strings.Contains(strings.SplitN(a.OutputTail+"wrote:", "wrote:", 2)[1], "/sandbox/gomod ") {
			t.Errorf("%s attempt %d wrote the module cache:\n%s", a.Side, a.Index, a.OutputTail)
		}
	}
	caches, _ := filepath.Glob(filepath.Join(r.dir, ".git", "flakegate", "go*", "*"))
	for _, p := range append([]string{hostCache, filepath.Join(hostCache, "00"), modCache, filepath.Join(r.dir, "sub")}, caches...) {
		if _, err := os.Stat(filepath.Join(p, "fg-marker")); err == nil {
			t.Errorf("a marker landed on the host in %s", p)
		}
	}
}

// compiledRe finds the package a `go build -x` compile line compiles.
var compiledRe = regexp.MustCompile(`/compile .* -p (\S+) `)

// TestCheckGoWarmCache: with the repository's build cache, filled from
// the base, under every attempt, an attempt compiles only the package the
// candidate changed (read from `go test -x`): neither the standard
// library, nor a dependency, nor (on the base) anything at all. And it
// compiles that package in every attempt: no attempt reads another's
// build. The runner's own cache plays no part: it is not warmed here.
func TestCheckGoWarmCache(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end to end; run without -short")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go is not installed")
	}
	files := exampleFiles(t, "go-rapid")
	files["props/gox.sh"] = `go test -x -count=1 -run '^TestScheduleProperties$' . -rapid.seed="$1" -rapid.checks=50 -fixture=testdata/limits.json > out.log 2>&1
st=$?
grep -E '/compile .* -p ' out.log | sed -E 's/.* -p ([^ ]+) .*/compiled \1/' | sort -u
grep -E '^(ok|FAIL|---)' out.log
exit $st
`
	files["flakegate.yaml"] = "version: 1\nretry_cap: 1\nproperties:\n  - path: props/gox.sh\n    seeds: [1400, 1401]\n    run: [sh, \"{path}\", \"{seed}\"]\n    wall_budget: 2m\n"
	r := newRepo(t, files)
	r.candidate("edit", map[string]string{"backoff.go": files["backoff.go"] + "\n// A harmless edit.\n"})
	cr := r.check("--base", "base", "--candidate", "edit")
	if cr.code != 0 || strings.Join(cr.labels(), ",") != "PASS,PASS" {
		t.Fatalf("%s", cr)
	}
	if !strings.Contains(cr.stderr, "Go build cache filled from the base") {
		t.Errorf("the first check did not fill the repository's build cache:\n%s", cr.stderr)
	}
	for i := range cr.summary.Results {
		for _, a := range cr.record(t, i).Attempts {
			var pkgs []string
			for _, m := range compiledRe.FindAllStringSubmatch(a.OutputTail, -1) {
				pkgs = append(pkgs, m[1])
			}
			for _, l := range strings.Split(a.OutputTail, "\n") {
				if p, ok := strings.CutPrefix(l, "compiled "); ok {
					pkgs = append(pkgs, p)
				}
			}
			sort.Strings(pkgs)
			if a.Side == "candidate" && !slices.Contains(pkgs, "example.com/backoff") {
				t.Errorf("candidate attempt of seed %d did not compile the changed package:\n%s", i, a.OutputTail)
			}
			for _, p := range pkgs {
				if p != "example.com/backoff" && p != "main" || a.Side == "base" {
					t.Errorf("%s attempt %d compiled %s, which the base's fill built:\n%s", a.Side, a.Index, p, a.OutputTail)
				}
			}
		}
	}
}

// TestCheckGoFillAgainWithModules: a fill that ran while the runner's
// module cache lacked the base's modules built almost nothing. The first
// check that finds every module fills again, so its attempts do not
// compile the standard library and every dependency themselves (before,
// the first fill's "filled" line stood for the base, and every later
// attempt compiled everything: 25 s instead of a second in
// examples/go-rapid).
func TestCheckGoFillAgainWithModules(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end to end; run without -short")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go is not installed")
	}
	files := exampleFiles(t, "go-rapid")
	files["flakegate.yaml"] = strings.NewReplacer("random_seeds: 1", "random_seeds: 0", "[1400, 1401, 1402]", "[1400]").Replace(files["flakegate.yaml"])
	r := newRepo(t, files)
	r.candidate("edit", map[string]string{"README.md": "a harmless patch\n"})
	empty := t.TempDir()
	cr := r.checkEnv([]string{"GOMODCACHE=" + empty, "GOPROXY=off", "GOFLAGS=-mod=mod"}, "--base", "base", "--candidate", "edit")
	if cr.code == 0 || !strings.Contains(cr.stderr, "0 of the 1 modules") {
		t.Fatalf("with an empty module cache the check passed, or did not say the module is missing (exit %d):\n%s", cr.code, cr.stderr)
	}
	cr = r.check("--base", "base", "--candidate", "edit")
	if cr.code != 0 {
		t.Fatalf("with the module the check does not pass:\n%s", cr)
	}
	if !strings.Contains(cr.stderr, "Go build cache filled from the base") {
		t.Errorf("the check that found the module did not fill the build cache again:\n%s", cr.stderr)
	}
}
