package check_test

import (
	"crypto/sha256"
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/flakegate/flakegate"
)

// publicSeeds is how seeds were drawn before they were keyed by the
// store's secret: a public function of the candidate sha and the test's
// identity, which anyone can compute before a check runs.
func publicSeeds(candSHA, path, name string, listed []string, n int) []string {
	seen := map[string]bool{}
	for _, s := range listed {
		seen[s] = true
	}
	var out []string
	for i := 0; len(out) < n; i++ {
		sum := sha256.Sum256([]byte("flakegate drawn seed\x00" + candSHA + "\x00" + path + "\x00" + name + "\x00" + strconv.Itoa(i)))
		s := strconv.FormatUint(binary.BigEndian.Uint64(sum[:8])%(1<<53-1)+1, 10)
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// drawnConfig is the scripted repository's config with seed 11 listed
// and two seeds drawn.
func drawnConfig() string {
	return strings.Replace(config("random_seeds: 2\n"), "seeds: [11, 12]", "seeds: [11]", 1)
}

// drawnSeedsOf returns the drawn seeds of a check's summary.
func drawnSeedsOf(t *testing.T, cr *checkRun) []string {
	t.Helper()
	var out []string
	for _, res := range cr.summary.Results {
		if res.SeedOrigin == "drawn" {
			out = append(out, res.Seed.String())
		}
	}
	if len(out) != 2 {
		t.Fatalf("want 2 drawn seeds\n%s", cr)
	}
	return out
}

// TestDrawnSeedsAttackPublicFormula: a patch author who knows only public
// data (the commit sha, the config, the formula) cannot choose the seeds
// a check draws. The candidate's regression hides exactly on the seeds
// the public formula gives for its sha (standing in for an author who
// rewords the commit until the drawn seeds miss the regression): when
// seeds were a public function of the sha the check passed it (exit 0);
// keyed by the store's secret, the drawn seeds hit the regression and the
// check rejects it (PROPERTY, exit 1).
func TestDrawnSeedsAttackPublicFormula(t *testing.T) {
	files := baseFiles(libOK)
	files["flakegate.yaml"] = drawnConfig()
	r := newRepo(t, files)
	// The regression: every seed fails except the listed one and those in
	// safe-seeds, which the author computed from the commit's sha.
	sha := r.candidate("evade", map[string]string{"src/lib.sh": `ok() { [ "$1" = 11 ] || grep -qx "$1" "$FG_STATE/safe-seeds"; }
`})
	safe := publicSeeds(sha, "props/prop.sh", "", []string{"11"}, 2)
	if err := os.WriteFile(filepath.Join(r.state, "safe-seeds"), []byte(strings.Join(safe, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cr := r.check("--base", "base", "--candidate", "evade", "--ledger", filepath.Join(t.TempDir(), "ledger"))
	if cr.code != 1 || strings.Join(cr.labels(), ",") != "PASS,PROPERTY,PROPERTY" {
		t.Fatalf("the candidate that hides its regression from the publicly computable seeds %v: want PASS,PROPERTY,PROPERTY, exit 1\n%s", safe, cr)
	}
	drawn := drawnSeedsOf(t, cr)
	for _, s := range drawn {
		for _, p := range safe {
			if s == p {
				t.Fatalf("the check drew %v, the public formula gives %v", drawn, safe)
			}
		}
	}
	if res := cr.summary.Results[1]; res.Label != flakegate.Property {
		t.Errorf("drawn seed result %+v", res)
	}
}
