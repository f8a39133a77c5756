package check

import (
	"strings"
	"testing"
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
