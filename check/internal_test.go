package check

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"strconv"
	"strings"
	"testing"

	"github.com/flakegate/flakegate"
)

func TestSlug(t *testing.T) {
	if got := slug("tests/props/test_x.py"); got != "tests_props_test_x.py" {
		t.Errorf("slug = %q", got)
	}
	if got := slug("nightly:3"); got != "nightly_3" {
		t.Errorf("slug = %q", got)
	}
}

func TestDrawSeeds(t *testing.T) {
	secret := []byte(strings.Repeat("k", flakegate.SeedSecretSize))
	base, run := strings.Repeat("a", 40), strings.Repeat("r", 64)
	a := DrawSeeds(secret, base, run, "", 50)
	again := DrawSeeds(secret, base, run, "", 50)
	b := DrawSeeds(secret, strings.Repeat("b", 40), run, "", 50)
	otherRun := DrawSeeds(secret, base, strings.Repeat("s", 64), "", 50)
	otherStore := DrawSeeds([]byte(strings.Repeat("K", flakegate.SeedSecretSize)), base, run, "", 50)
	seen := map[flakegate.Seed]bool{}
	for i, s := range a {
		n, err := strconv.ParseUint(s.String(), 10, 64)
		if err != nil || n == 0 || n > MaxDrawnSeed || seen[s] || !s.Valid() {
			t.Errorf("seed %d = %s: zero, out of range, invalid or repeated", i, s)
		}
		seen[s] = true
		if again[i] != s {
			t.Errorf("seed %d drawn twice for one base: %s then %s", i, s, again[i])
		}
		if b[i] == s || otherRun[i] == s || otherStore[i] == s {
			t.Errorf("seed %d = %s for another base, run template or secret too", i, s)
		}
	}
	// A shorter draw is a prefix of a longer one: properties with the same
	// template share their seeds whatever their random_seeds.
	if short := DrawSeeds(secret, base, run, "", 3); strings.Join(seedTexts(short), ",") != strings.Join(seedTexts(a[:3]), ",") {
		t.Errorf("3 drawn seeds %v are not the first 3 of 50 %v", short, a[:3])
	}
}

func seedTexts(seeds []flakegate.Seed) []string {
	var out []string
	for _, s := range seeds {
		out = append(out, s.String())
	}
	return out
}

// TestDrawSeedsVector pins the formula: HMAC-SHA256 keyed by the secret
// over the base sha and the run template digest, first 8 bytes
// big-endian, mod 2^53-1, plus 1.
func TestDrawSeedsVector(t *testing.T) {
	secret := make([]byte, flakegate.SeedSecretSize)
	for i := range secret {
		secret[i] = byte(i)
	}
	base, run := strings.Repeat("c", 40), strings.Repeat("d", 64)
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte("flakegate drawn seed v2\x00" + base + "\x00" + run + "\x000"))
	want := binary.BigEndian.Uint64(mac.Sum(nil)[:8])%MaxDrawnSeed + 1
	got := DrawSeeds(secret, base, run, "", 1)
	if len(got) != 1 || got[0].String() != strconv.FormatUint(want, 10) {
		t.Fatalf("DrawSeeds = %v, want [%d]", got, want)
	}
	// The public sha256 of the same text gives another seed.
	pub := sha256.Sum256([]byte("flakegate drawn seed v2\x00" + base + "\x00" + run + "\x000"))
	if old := binary.BigEndian.Uint64(pub[:8])%MaxDrawnSeed + 1; strconv.FormatUint(old, 10) == got[0].String() {
		t.Fatalf("DrawSeeds gives the public formula's seed %d", old)
	}
}
