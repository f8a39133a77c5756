package e2e_test

import (
	"fmt"
	"path/filepath"
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
