package e2e_test

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/flakegate/flakegate"
)

// libThird is a regression that breaks a third of all seeds (those
// divisible by 3) and passes the listed seed 11.
const libThird = "ok() { [ $(($1 % 3)) -ne 0 ]; }\n"

// TestRewordedRegressionCannotReRoll: three authors' worth of tries at
// re-rolling the drawn seeds of a regression that breaks a third of
// them, with random_seeds: 3, under 20 rewordings of its commit (git
// commit --amend -m), the base moving on under it every other try. Drawn
// seeds come from the base, so a rewording draws the same ones; a seed
// that failed once enters the failure corpus and runs again for every
// later candidate of the property, whatever its base. Once any try failed
// (exit 1), none passes; the corpus seeds are in the records
// (seed_origin: corpus).
func TestRewordedRegressionCannotReRoll(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end: 20 checks")
	}
	files := baseFiles(libOK)
	files["flakegate.yaml"] = strings.Replace(config("random_seeds: 3\n"), "seeds: [11, 12]", "seeds: [11]", 1)
	r := newRepo(t, files)
	ledger := filepath.Join(t.TempDir(), "ledger")
	r.git("checkout", "-q", "main")
	r.git("checkout", "-q", "-b", "patch")
	r.commit("regression", map[string]string{"src/lib.sh": libThird})

	failed, corpusSeen := -1, false
	var codes []string
	for i := range 20 {
		if i%2 == 1 {
			// The base moves on; the patch is rebased onto it.
			r.git("checkout", "-q", "main")
			r.commit(fmt.Sprintf("main %d", i), map[string]string{"README.md": fmt.Sprintf("main %d\n", i)})
			r.git("checkout", "-q", "patch")
			r.git("rebase", "-q", "main")
		}
		r.git("commit", "-q", "--amend", "-m", fmt.Sprintf("regression, take %d", i))
		cr := r.check("--base", "main", "--candidate", "patch", "--ledger", ledger)
		codes = append(codes, fmt.Sprint(cr.code))
		switch {
		case cr.code == 1 && failed < 0:
			failed = i
		case cr.code != 1 && failed >= 0:
			t.Fatalf("take %d passed (exit %d) after take %d failed; exits %s\n%s", i, cr.code, failed, strings.Join(codes, ","), cr)
		case cr.code > 1:
			t.Fatalf("take %d\n%s", i, cr)
		}
		for j, res := range cr.summary.Results {
			if res.SeedOrigin != "corpus" {
				continue
			}
			corpusSeen = true
			if rec := cr.record(t, j); rec.SeedOrigin != "corpus" || res.Label != flakegate.Property {
				t.Errorf("take %d: corpus seed %s: record origin %q, label %s", i, res.Seed, rec.SeedOrigin, res.Label)
			}
		}
	}
	if failed < 0 {
		t.Fatalf("no take of 20 failed: exits %s", strings.Join(codes, ","))
	}
	if failed < 18 && !corpusSeen {
		t.Errorf("take %d failed, but no later check ran a corpus seed; exits %s", failed, strings.Join(codes, ","))
	}
	t.Logf("exits %s", strings.Join(codes, ","))
}

// corpusNonRoot is the user the corpus attack's non-root mode runs
// flakegate as.
var corpusNonRoot = mode16{name: "nonroot", uid: 61544}

// corpusAttackConfig: one property with 34 drawn seeds (more than a
// property's corpus once held) and a second one of the same command with
// a listed seed only, which the throwaway patch fails too.
const corpusAttackConfig = `version: 1
retry_cap: 1
workers: 2
flake_probe_runs: 0
properties:
  - path: props/prop.sh
    fixture: fixtures/data.txt
    seeds: [11]
    random_seeds: 34
    run: [sh, "{path}", "{seed}"]
    wall_budget: 20s
  - path: props/prop.sh
    name: second
    fixture: fixtures/data.txt
    seeds: [21]
    run: [sh, "{path}", "{seed}"]
    wall_budget: 20s
`

// TestAttackCorpusEviction is issue 42's attack 6. The failure corpus
// kept the 32 most recently failed seeds of a property, from any patch.
// A seed of the base's drawn ones catches patch P1's regression and
// enters the corpus. A throwaway patch P2, which an attacker who read
// that seed in the log pushes again and again, fails every seed of both
// properties but that one, on that base and on the next: each of its
// checks fails (exit 1), and it once pushed the seed out at its first
// check. The base moves on, and P3 brings P1's regression back: the
// seed, kept, runs as a corpus seed of the later base and catches it
// (exit 1, PROPERTY, seed_origin corpus). As root and as a normal user.
func TestAttackCorpusEviction(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: six checks per mode")
	}
	forModes(t, []mode16{rootOverlay, corpusNonRoot}, func(t *testing.T, m mode16) {
		files := baseFiles(libOK)
		files["flakegate.yaml"] = corpusAttackConfig
		a := newA16Files(t, m, files)
		env := append([]string{"FLAKEGATE_LEDGER=" + a.ledger}, m.env...)
		check := func(base, cand string) *checkRun {
			t.Helper()
			a.grant(t)
			cr := a.exec(t, env, "--base", base, "--candidate", cand)
			a.revoke(t)
			if cr.code > 1 {
				t.Fatalf("[%s] check of %s on %s:\n%s", m.name, cand, base, cr)
			}
			return cr
		}
		on := func(base, tag string, lib string) {
			t.Helper()
			a.git("checkout", "-q", "--detach", base)
			a.commit(tag, map[string]string{"src/lib.sh": lib})
			a.git("tag", tag)
		}
		moveBase := func(tag string) {
			t.Helper()
			a.git("checkout", "-q", "main")
			a.commit(tag, map[string]string{"README.md": tag + "\n"})
			a.git("tag", tag)
		}

		// The base's drawn seeds, from a harmless patch.
		on("base", "docs", libOK+"# docs\n")
		var s flakegate.Seed
		for _, r := range check("base", "docs").summary.Results {
			if r.SeedOrigin == "drawn" && r.Name == "" {
				s = r.Seed
				break
			}
		}
		if s == "" {
			t.Fatal("no drawn seed")
		}
		regression := `ok() { [ "$1" != "` + string(s) + `" ]; }` + "\n"
		throwaway := `ok() { [ "$1" = "` + string(s) + `" ]; }` + "\n"

		// P1: a regression only seed s catches.
		on("base", "p1", regression)
		if cr := check("base", "p1"); cr.code != 1 || !failedSeed(cr, s, "") {
			t.Fatalf("[%s] P1's regression was not caught by seed %s:\n%s", m.name, s, cr)
		}

		// P2: the throwaway patch, pushed again and again, on that base
		// and on the next.
		for i, base := range []string{"base", "base", "b2"} {
			if i == 2 {
				moveBase("b2")
			}
			tag := fmt.Sprintf("p2-%d", i)
			on(base, tag, throwaway+"# take "+strconv.Itoa(i)+"\n")
			cr := check(base, tag)
			if cr.code != 1 {
				t.Fatalf("[%s] P2 take %d did not fail:\n%s", m.name, i, cr)
			}
			if i == 0 && !strings.Contains(cr.stderr, "not kept: this candidate added a seed of the property already") {
				t.Errorf("[%s] P2's check does not say which failing seeds the corpus did not keep:\n%s", m.name, cr.stderr)
			}
		}

		// The base moves on; P3 brings P1's regression back.
		moveBase("b3")
		on("b3", "p3", regression)
		cr := check("b3", "p3")
		if cr.code != 1 || !failedSeed(cr, s, "corpus") {
			t.Fatalf("[%s] P3 brought P1's regression back and the corpus seed %s did not catch it (exit %d):\n%s", m.name, s, cr.code, cr)
		}
	})
}

// failedSeed reports whether the check labelled seed PROPERTY in the
// first property's results, with that seed origin ("" any).
func failedSeed(cr *checkRun, seed flakegate.Seed, origin string) bool {
	for _, r := range cr.summary.Results {
		if r.Name == "" && r.Seed == seed && r.Label == flakegate.Property && (origin == "" || r.SeedOrigin == origin) {
			return true
		}
	}
	return false
}
