package check

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/config"
)

func TestInDiff(t *testing.T) {
	type testCase struct {
		name    string
		diff    []string
		watched []string
		want    string
	}
	run := func(t *testing.T, tc testCase) {
		if got := strings.Join(inDiff(tc.diff, tc.watched), ","); got != tc.want {
			t.Errorf("inDiff(%q, %q) = %q, want %q", tc.diff, tc.watched, got, tc.want)
		}
	}
	tests := []testCase{
		{"none", []string{"src/a.go"}, []string{"props/p.sh"}, ""},
		{"exact", []string{"src/a.go", "props/p.sh"}, []string{"props/p.sh", "tools/gen.sh"}, "props/p.sh"},
		{"folder prefix", []string{"ledger/ledger.json"}, []string{"ledger", "ledger/"}, "ledger/"},
		{"folder itself is not a prefix of a sibling", []string{"ledger2/x"}, []string{"ledger/"}, ""},
		{"uncleaned diff path", []string{"./props//p.sh"}, []string{"props/p.sh"}, "props/p.sh"},
		{"config", []string{"flakegate.yaml"}, []string{"props/p.sh", "flakegate.yaml"}, "flakegate.yaml"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func TestShellQuote(t *testing.T) {
	type testCase struct{ in, want string }
	run := func(t *testing.T, tc testCase) {
		if got := shellQuote(tc.in); got != tc.want {
			t.Errorf("shellQuote(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
	for _, tc := range []testCase{
		{"pytest", "pytest"},
		{"--hypothesis-seed=1400", "--hypothesis-seed=1400"},
		{"", "''"},
		{"a b", "'a b'"},
		{"it's", `'it'\''s'`},
		{"$HOME", "'$HOME'"},
		{"^TestX$", "'^TestX$'"},
	} {
		t.Run(tc.in, func(t *testing.T) { run(t, tc) })
	}
}

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

func TestWatchGlobsAndDigests(t *testing.T) {
	cfg := &config.Config{RetryCap: 2, Watch: []string{"ci/**"}}
	py := &config.Property{Path: "a/b/test_x.py", Run: []string{"python3", "-m", "pytest", "{path}"}, Watch: []string{"a/helpers.py"}}
	var got []string
	for _, g := range watchGlobs(cfg, py) {
		got = append(got, g.Glob)
	}
	for _, want := range []string{"a/b/conftest.py", "a/conftest.py", "conftest.py", "pytest.ini", "a/b/tox.ini", "a/helpers.py", "ci/**"} {
		if !slices.Contains(got, want) {
			t.Errorf("pytest globs %v lack %s", got, want)
		}
	}
	gop := &config.Property{Path: "pkg/x_test.go", Run: []string{"go", "test", "./pkg"}}
	got = got[:0]
	for _, g := range watchGlobs(cfg, gop) {
		got = append(got, g.Glob)
	}
	if strings.Join(got, " ") != "pkg/*_test.go pkg/testdata/rapid/** ci/**" {
		t.Errorf("go test globs: %v", got)
	}
	// The entry digest follows the entry, not its seeds.
	e1 := EntrySHA256(cfg, py)
	py2 := *py
	py2.Seeds = []flakegate.Seed{"9"}
	if EntrySHA256(cfg, &py2) != e1 {
		t.Errorf("a new seed changed the entry digest")
	}
	py2.Run = []string{"pytest", "{path}"}
	if EntrySHA256(cfg, &py2) == e1 || RunSHA256(&py2) == RunSHA256(py) {
		t.Errorf("a new command kept the digests")
	}
}
