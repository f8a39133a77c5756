package cli

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestFreezeFixturePrefix: revoke and consume take any prefix of a
// fixture digest that names one freeze of the triple (freeze list shows
// 12 characters), and refuse one that names several (exit 2, listing
// them), changing nothing.
func TestFreezeFixturePrefix(t *testing.T) {
	repo := gitRepo(t)
	digestA := strings.Repeat("a", 20) + strings.Repeat("1", 44)
	digestB := strings.Repeat("a", 20) + strings.Repeat("2", 44)
	for i, d := range []string{digestA, digestB} {
		rec := writeFile(t, filepath.Join(t.TempDir(), "run.json"),
			runRecord("1402", "run-"+strconv.Itoa(i), "fixture_sha256", strconv.Quote(d), "base_fixture_sha256", strconv.Quote(d)))
		wantExit(t, fg(t, repo, "freeze", "grant", "--record", rec, "--owner", "alice", "--runs", "3"), 0, "freeze grant")
	}
	list := fg(t, repo, "freeze", "list")
	wantExit(t, list, 0, "freeze list")
	if !strings.Contains(list.out, digestA[:12]) {
		t.Fatalf("freeze list:\n%s", list.out)
	}
	triple := func(fixture string) []string {
		return []string{"--property", frozenProperty, "--seed", "1402", "--fixture-sha256", fixture}
	}
	// The 12 characters freeze list shows name both: refused.
	for _, cmd := range [][]string{{"freeze", "revoke", "--by", "bob"}, {"freeze", "consume"}} {
		r := fg(t, repo, append(cmd, triple(digestA[:12])...)...)
		if r.code != ExitUsage || !strings.Contains(r.errOut, "is ambiguous") || !strings.Contains(r.errOut, digestA) || !strings.Contains(r.errOut, digestB) ||
			!strings.Contains(r.errOut, "give more characters") {
			t.Errorf("%v with an ambiguous prefix: exit %d\n%s", cmd, r.code, r.errOut)
		}
	}
	// A unique prefix consumes and revokes that one freeze.
	r := fg(t, repo, append([]string{"freeze", "consume"}, triple(digestB[:21])...)...)
	wantExit(t, r, 0, "freeze consume with a prefix")
	if !strings.Contains(r.out, "runs left: 2") {
		t.Errorf("consume printed %q", r.out)
	}
	r = fg(t, repo, append([]string{"freeze", "revoke", "--by", "bob"}, triple(digestA[:21])...)...)
	wantExit(t, r, 0, "freeze revoke with a prefix")
	if !strings.Contains(r.out, "revoked "+frozenProperty+" seed 1402") {
		t.Errorf("revoke printed %q", r.out)
	}
	list = fg(t, repo, "freeze", "list", "--json")
	if strings.Contains(list.out, digestA) || !strings.Contains(list.out, digestB) {
		t.Errorf("after revoking A:\n%s", list.out)
	}
	// A prefix of no freeze is the store's "no such freeze".
	r = fg(t, repo, append([]string{"freeze", "revoke", "--by", "bob"}, triple("bbbb")...)...)
	if r.code == 0 {
		t.Errorf("revoke of no freeze: exit 0\n%s", r.out)
	}
}
