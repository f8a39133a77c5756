package e2e_test

import (
	"io/fs"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// The non-root modes of the warm Go build cache tests: their own users
// (not nonRootUID), so that their processes count against no other
// test's RLIMIT_NPROC.
var (
	nonRootGo     = mode16{name: "nonroot", uid: 61538}
	nonRootGoCopy = mode16{name: "nonroot-copy", env: []string{"FLAKEGATE_NO_OVERLAY=1"}, uid: 61539}
)

// goWarmFiles is a Go module without dependencies whose property runs
// `go test -x` and prints each package it compiled ("compiled P").
func goWarmFiles() map[string]string {
	return map[string]string{
		"go.mod":  "module example.com/warm\n\ngo 1.21\n",
		"warm.go": "package warm\n\nimport \"strings\"\n\n// Up is s in upper case.\nfunc Up(s string) string { return strings.ToUpper(s) }\n",
		"warm_test.go": "package warm\n\nimport (\n\t\"encoding/json\"\n\t\"testing\"\n)\n\n" +
			"func TestUp(t *testing.T) {\n\tb, _ := json.Marshal(Up(\"x\"))\n\tif string(b) != `\"X\"` {\n\t\tt.Fatal(string(b))\n\t}\n}\n",
		"props/gox.sh": `[ -e "$GOCACHE/fg-marker" ] && echo SEEN-MARKER
go test -x -count=1 -run '^TestUp$' . > out.log 2>&1
st=$?
(echo m > "$GOCACHE/fg-marker" && echo WROTE-MARKER) 2>/dev/null
grep -E '/compile .* -p ' out.log | sed -E 's/.* -p ([^ ]+) .*/compiled \1/' | sort -u
grep -E '^(ok|FAIL|---)' out.log
exit $st
`,
		"flakegate.yaml": "version: 1\nretry_cap: 1\nworkers: 1\nproperties:\n  - path: props/gox.sh\n    seeds: [1400, 1401]\n    run: [sh, \"{path}\", \"{seed}\"]\n    wall_budget: 3m\n",
	}
}

// TestCheckGoWarmCacheNonRoot: without root (a user of its own, on the
// helper's overlays and on fresh copies), a check's attempts get the
// repository's build cache warm, as root's do: a harmless candidate's
// attempts compile only the package it changed (read from `go test
// -x`), never the standard library nor anything the base's fill built,
// and the base's attempts compile nothing. What an attempt writes to its
// cache no later attempt sees, and it never reaches the host (the
// repository's cache lies in its git folder). Before the helper laid the
// cache (bwrap 0.8 has no --overlay-src), every attempt compiled the
// standard library's packages in a cold cache.
func TestCheckGoWarmCacheNonRoot(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end; builds Go code without root")
	}
	forModes(t, []mode16{nonRootGo, nonRootGoCopy}, func(t *testing.T, m mode16) {
		files := goWarmFiles()
		a := newA16Files(t, m, files)
		a.candidate("edit", map[string]string{"warm.go": files["warm.go"] + "\n// A harmless edit.\n"})
		cr := a.run(t, "edit", "")
		labelsAre(t, cr, 0, "PASS")
		if !strings.Contains(cr.stderr, "Go build cache filled from the base") ||
			!strings.Contains(cr.stderr, "Go caches: the repository's build cache, built from the base") {
			t.Errorf("[%s] the check did not lay the repository's build cache under the attempts:\n%s", m.name, cr.stderr)
		}
		// What an attempt writes into its build cache is its own: no
		// later attempt sees it, and the repository's cache never holds it.
		filepath.WalkDir(a.dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Name() == "fg-marker" {
				t.Errorf("[%s] an attempt's write reached the host: %s", m.name, p)
			}
			return nil
		})
		for i := range cr.summary.Results {
			for _, at := range cr.record(t, i).Attempts {
				if strings.Contains(at.OutputTail, "SEEN-MARKER") || !strings.Contains(at.OutputTail, "WROTE-MARKER") {
					t.Errorf("[%s] %s attempt %d saw an earlier attempt's cache write, or could not write its own:\n%s", m.name, at.Side, at.Index, at.OutputTail)
				}
				var pkgs []string
				for _, l := range strings.Split(at.OutputTail, "\n") {
					if p, ok := strings.CutPrefix(l, "compiled "); ok {
						pkgs = append(pkgs, p)
					}
				}
				sort.Strings(pkgs)
				if !strings.Contains(at.OutputTail, "ok ") {
					t.Errorf("[%s] %s attempt %d did not run the test:\n%s", m.name, at.Side, at.Index, at.OutputTail)
				}
				if at.Side == "candidate" && !slices.Contains(pkgs, "example.com/warm") {
					t.Errorf("[%s] candidate attempt %d did not compile the changed package:\n%s", m.name, at.Index, at.OutputTail)
				}
				for _, p := range pkgs {
					if p != "example.com/warm" && p != "main" || at.Side == "base" {
						t.Errorf("[%s] %s attempt %d compiled %s, which the base's fill built", m.name, at.Side, at.Index, p)
					}
				}
			}
		}
	})
}
