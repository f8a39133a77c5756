package e2e_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/internal/pgtest"
	"github.com/flakegate/flakegate/postgres"
	"github.com/flakegate/flakegate/storetest"
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
	t.Parallel()
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

// cloneAt clones origin into a new folder with tag checked out, as a CI
// runner checks out; it keeps origin's state folder (FG_STATE).
func (r *repo) cloneAt(t *testing.T, name, tag string) *repo {
	t.Helper()
	c := &repo{t: t, dir: filepath.Join(t.TempDir(), name), state: r.state}
	r.git("clone", "-q", "--no-checkout", r.dir, c.dir)
	c.git("checkout", "-q", "--detach", tag)
	return c
}

// readSecretFile returns the seed secret of the file store in dir.
func readSecretFile(t *testing.T, dir string) []byte {
	t.Helper()
	path := filepath.Join(dir, "seed-secret")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatalf("the store has no seed secret: %v", err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("%s has mode %v, want 0600", path, fi.Mode().Perm())
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	secret, err := hex.DecodeString(strings.TrimSpace(string(raw)))
	if err != nil || len(secret) != flakegate.SeedSecretSize {
		t.Fatalf("%s: not a 32-byte secret in hex (%v)", path, err)
	}
	return secret
}

// TestDrawnSeedsPerStore: on one store the same candidate draws the same
// seeds every time, also when two checks (two clones sharing the ledger)
// make the store's secret at once; a new store draws other seeds for the
// same candidate, and its records still replay. A check without drawn
// seeds makes no secret.
func TestDrawnSeedsPerStore(t *testing.T) {
	t.Parallel()
	files := baseFiles(libOK)
	files["flakegate.yaml"] = drawnConfig()
	origin := newRepo(t, files)
	origin.candidate("a", map[string]string{"README.md": "a\n"})
	storeA := filepath.Join(t.TempDir(), "ledger-a")

	// Two runners start at once on the new store A.
	var procs []*proc
	for i := range 2 {
		c := origin.cloneAt(t, fmt.Sprintf("runner-%d", i), "a")
		procs = append(procs, c.start(t, fmt.Sprintf("runner %d", i), "check", "--json", "--base", "base", "--candidate", "a",
			"--ledger", storeA, "--out", filepath.Join(t.TempDir(), "out")))
	}
	var first []string
	for _, p := range procs {
		p.wait(t, 2*time.Minute)
		if p.code != 0 {
			t.Fatalf("%s", p)
		}
		cr := &checkRun{summary: p.summary(t), stdout: p.stdout.String(), stderr: p.stderr.String()}
		seeds := drawnSeedsOf(t, cr)
		if first == nil {
			first = seeds
		} else if strings.Join(seeds, ",") != strings.Join(first, ",") {
			t.Fatalf("two checks of one candidate starting at once on a new store drew %v and %v", first, seeds)
		}
	}
	secretA := readSecretFile(t, storeA)

	// Later checks on store A draw the same seeds; the secret stays.
	again := origin.check("--base", "base", "--candidate", "a", "--ledger", storeA)
	if again.code != 0 || strings.Join(drawnSeedsOf(t, again), ",") != strings.Join(first, ",") {
		t.Fatalf("store A drew %v first\n%s", first, again)
	}
	if !bytes.Equal(readSecretFile(t, storeA), secretA) {
		t.Fatal("the secret of store A changed")
	}

	// A new store (the embedded one of the repository) draws other seeds
	// for the same candidate, the same ones each time, and they replay.
	embedded := origin.check("--base", "base", "--candidate", "a")
	other := drawnSeedsOf(t, embedded)
	for i := range other {
		if other[i] == first[i] {
			t.Fatalf("a new store drew %v, store A %v", other, first)
		}
	}
	if bytes.Equal(readSecretFile(t, filepath.Join(origin.dir, ".git", "flakegate")), secretA) {
		t.Fatal("two stores have one secret")
	}
	if e2 := origin.check("--base", "base", "--candidate", "a"); strings.Join(drawnSeedsOf(t, e2), ",") != strings.Join(other, ",") {
		t.Fatalf("the embedded store drew %v, then\n%s", other, e2)
	}
	checkReproduce(t, embedded.summary.Results[1], 0)

	// A config without drawn seeds makes no secret.
	plain := filepath.Join(t.TempDir(), "ledger-plain")
	origin.candidate("c", map[string]string{"flakegate.yaml": config("")})
	r := origin.check("--base", "c", "--candidate", "c", "--ledger", plain)
	if r.code != 0 || len(r.summary.Results) != 2 {
		t.Fatalf("no drawn seeds\n%s", r)
	}
	if _, err := os.Stat(filepath.Join(plain, "seed-secret")); !os.IsNotExist(err) {
		t.Errorf("a check without drawn seeds made a seed secret: %v", err)
	}
}

// leaks returns where any 8 bytes in a row of secret appear in data,
// raw or in hex (either case) or base64.
func leaks(secret []byte, data string) string {
	forms := []string{string(secret), base64.StdEncoding.EncodeToString(secret), base64.RawURLEncoding.EncodeToString(secret)}
	for i := 0; i+8 <= len(secret); i++ {
		w := secret[i : i+8]
		h := hex.EncodeToString(w)
		forms = append(forms, string(w), h, strings.ToUpper(h))
	}
	for _, f := range forms {
		if strings.Contains(data, f) {
			return fmt.Sprintf("%q", f)
		}
	}
	return ""
}

// TestDrawnSeedsSecretNeverShown: no part of the store's secret (8 bytes
// in a row, raw, hex or base64) is in the check's stdout and stderr, its
// records, transcripts, summary, JUnit and Markdown reports, the store's
// other files (records, ledger, audit log, replay cache), nor in the
// output of 'freeze list', 'report --html' and 'report --from'.
func TestDrawnSeedsSecretNeverShown(t *testing.T) {
	t.Parallel()
	files := baseFiles(libOK)
	files["flakegate.yaml"] = drawnConfig()
	r := newRepo(t, files)
	r.candidate("flaky", map[string]string{"src/lib.sh": libFlaky})
	r.candidate("red", map[string]string{"src/lib.sh": libRed})
	ledger := filepath.Join(t.TempDir(), "ledger")
	reports := t.TempDir()
	var outputs []string
	var outDirs []string
	for _, tag := range []string{"flaky", "red"} {
		out := filepath.Join(t.TempDir(), "out-"+tag)
		outDirs = append(outDirs, out)
		cr := r.check("--base", "base", "--candidate", tag, "--ledger", ledger, "--out", out, "--freeze-owner", "lead",
			"--junit", filepath.Join(reports, tag+".xml"), "--markdown", filepath.Join(reports, tag+".md"))
		if want := map[string]int{"flaky": 0, "red": 1}[tag]; cr.code != want {
			t.Fatalf("%s: want exit %d\n%s", tag, want, cr)
		}
		drawnSeedsOf(t, cr)
		outputs = append(outputs, cr.stdout, cr.stderr)
	}
	for _, args := range [][]string{
		{"freeze", "list", "--ledger", ledger},
		{"freeze", "list", "--json", "--ledger", ledger},
		{"freeze", "verify", "--ledger", ledger},
		{"report", "--html", filepath.Join(reports, "ledger.html"), "--ledger", ledger},
		{"report", "--from", filepath.Join(outDirs[0], "summary.json"), "--junit", filepath.Join(reports, "from.xml"), "--markdown", filepath.Join(reports, "from.md"), "--github"},
	} {
		code, out := r.run(args...)
		if code > 1 {
			t.Fatalf("%s: exit %d\n%s", strings.Join(args, " "), code, out)
		}
		outputs = append(outputs, out)
	}
	secret := readSecretFile(t, ledger)
	for i, o := range outputs {
		if f := leaks(secret, o); f != "" {
			t.Errorf("output %d shows the secret (%s):\n%s", i, f, o)
		}
	}
	scanned := 0
	for _, dir := range append([]string{ledger, reports}, outDirs...) {
		for name, data := range storetest.SnapshotDir(t, dir) {
			if dir == ledger && name == "/seed-secret" {
				continue
			}
			scanned++
			if f := leaks(secret, data); f != "" {
				t.Errorf("%s%s shows the secret (%s)", dir, name, f)
			}
		}
	}
	if scanned < 20 {
		t.Errorf("scanned only %d files", scanned)
	}
}

// seedsOf lists a summary's seeds and labels in order.
func seedsOf(s *flakegate.Summary) string {
	var b strings.Builder
	for _, r := range s.Results {
		fmt.Fprintf(&b, "%s:%s:%s ", r.Seed, r.SeedOrigin, r.Label)
	}
	return b.String()
}

// TestDrawnSeedsFleetPostgres: runners sharing one PostgreSQL store draw
// the same seeds: two shards starting at once on a new database merge
// into the summary of the unsharded check, and two runners joining one
// queued check agree on its triples. Shards on two file stores draw
// different seeds, and verdict refuses to merge them, saying why.
func TestDrawnSeedsFleetPostgres(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end: PostgreSQL, git and flakegate processes")
	}
	dsn := pgtest.DSN(t)
	files := baseFiles(libOK)
	files["flakegate.yaml"] = drawnConfig()
	origin := newRepo(t, files)
	origin.candidate("odd", map[string]string{"src/lib.sh": "ok() { [ $(($1 % 2)) -eq 1 ]; }\n"})
	check := func(name, ledger string, extra ...string) *proc {
		c := origin.cloneAt(t, strings.ReplaceAll(name, " ", "-"), "odd")
		return c.start(t, name, append([]string{"check", "--json", "--base", "base", "--candidate", "odd", "--ledger", ledger}, extra...)...)
	}
	var all []*proc
	shards := func(ledger func(i int) string) *proc {
		var procs []*proc
		var sums []string
		for i := 1; i <= 2; i++ {
			out := filepath.Join(t.TempDir(), "out")
			procs = append(procs, check(fmt.Sprintf("shard %d", i), ledger(i), "--shard", fmt.Sprintf("%d/2", i), "--out", out))
			sums = append(sums, filepath.Join(out, "summary.json"))
		}
		for _, p := range procs {
			p.wait(t, 2*time.Minute)
			if p.code > 1 {
				t.Fatalf("%s", p)
			}
		}
		v := origin.start(t, "verdict", append([]string{"verdict", "--json"}, sums...)...)
		v.wait(t, time.Minute)
		all = append(all, append(procs, v)...)
		return v
	}

	merged := shards(func(int) string { return dsn })
	if merged.code > 1 {
		t.Fatalf("merging the shards of one PostgreSQL store\n%s", merged)
	}
	whole := origin.check("--base", "base", "--candidate", "odd", "--ledger", dsn)
	if whole.code > 1 || len(whole.summary.Results) != 3 || whole.summary.Results[2].SeedOrigin != "drawn" {
		t.Fatalf("the unsharded check\n%s", whole)
	}
	want := seedsOf(whole.summary)
	if got := seedsOf(merged.summary(t)); got != want || merged.code != whole.code {
		t.Fatalf("the shards drew %s (exit %d), the unsharded check %s (exit %d)", got, merged.code, want, whole.code)
	}

	var joined []*proc
	for i := 1; i <= 2; i++ {
		joined = append(joined, check(fmt.Sprintf("join %d", i), dsn, "--join", "--check-id", "seeds-1", "--runner-id", fmt.Sprintf("r%d", i)))
	}
	for _, p := range joined {
		p.wait(t, 2*time.Minute)
		if p.code != whole.code || seedsOf(p.summary(t)) != want {
			t.Fatalf("a runner of the joined check, want %s (exit %d):\n%s", want, whole.code, p)
		}
	}
	all = append(all, joined...)

	// Each shard on its own file store: other seeds, refused.
	apart := shards(func(i int) string { return filepath.Join(t.TempDir(), fmt.Sprintf("ledger-%d", i)) })
	if apart.code != 2 || !strings.Contains(apart.stderr.String(), "random_seeds") || !strings.Contains(apart.stderr.String(), "one store") {
		t.Fatalf("shards on two file stores: want exit 2 naming drawn seeds\n%s", apart)
	}

	// The secret is derived from the runners' ledger key; the database
	// holds none.
	if n := queryString(t, dsn, `SELECT count(*)::text FROM flakegate.seed_secret`); n != "0" {
		t.Fatalf("the database holds %s seed secret(s)", n)
	}
	keyed, err := postgres.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer keyed.Close()
	if err := keyed.UseKey([]byte(pgtest.LedgerKey)); err != nil {
		t.Fatal(err)
	}
	secret, err := keyed.SeedSecret(context.Background())
	if err != nil || len(secret) != flakegate.SeedSecretSize {
		t.Fatalf("the runners' secret: %v", err)
	}
	outputs := []string{whole.stdout, whole.stderr}
	for _, p := range all {
		outputs = append(outputs, p.stdout.String(), p.stderr.String())
	}
	for _, o := range outputs {
		if f := leaks(secret, o); f != "" {
			t.Errorf("an output shows the secret (%s):\n%s", f, o)
		}
	}
}

// TestDrawnSeedsGarbledSecret: a check on a store whose secret file is
// garbled stops with exit 2 and a hint before any attempt, and leaves
// the file as it was: a stored secret is never silently made anew.
func TestDrawnSeedsGarbledSecret(t *testing.T) {
	t.Parallel()
	files := baseFiles(libOK)
	files["flakegate.yaml"] = drawnConfig()
	r := newRepo(t, files)
	r.candidate("a", map[string]string{"README.md": "a\n"})
	ledger := filepath.Join(t.TempDir(), "ledger")
	if err := os.MkdirAll(ledger, 0o755); err != nil {
		t.Fatal(err)
	}
	garbled := strings.Repeat("5e", 20) + "\n"
	path := filepath.Join(ledger, "seed-secret")
	if err := os.WriteFile(path, []byte(garbled), 0o600); err != nil {
		t.Fatal(err)
	}
	cr := r.check("--base", "base", "--candidate", "a", "--ledger", ledger)
	if cr.code != 2 || !strings.Contains(cr.stderr, "seed secret") || !strings.Contains(cr.stderr, "Try:") || strings.Contains(cr.stderr, strings.TrimSpace(garbled)) {
		t.Fatalf("want exit 2 naming the seed secret, with a hint, not quoting the file\n%s", cr)
	}
	if raw, _ := os.ReadFile(path); string(raw) != garbled {
		t.Fatal("the garbled secret was replaced")
	}
	if strings.Contains(cr.stderr, "[1/") {
		t.Errorf("a triple ran\n%s", cr)
	}
}
