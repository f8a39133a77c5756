package grade

import (
	"slices"
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
		if got := strings.Join(InDiff(tc.diff, tc.watched), ","); got != tc.want {
			t.Errorf("InDiff(%q, %q) = %q, want %q", tc.diff, tc.watched, got, tc.want)
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

func TestWatchGlobsAndDigests(t *testing.T) {
	cfg := &config.Config{RetryCap: 2, Watch: []string{"ci/**"}}
	py := &config.Property{Path: "a/b/test_x.py", Run: []string{"python3", "-m", "pytest", "{path}"}, Watch: []string{"a/helpers.py"}}
	var got []string
	for _, g := range WatchGlobs(cfg, py) {
		got = append(got, g.Glob)
	}
	for _, want := range []string{"a/b/conftest.py", "a/conftest.py", "conftest.py", "pytest.ini", "a/b/tox.ini", "a/helpers.py", "ci/**"} {
		if !slices.Contains(got, want) {
			t.Errorf("pytest globs %v lack %s", got, want)
		}
	}
	gop := &config.Property{Path: "pkg/x_test.go", Run: []string{"go", "test", "./pkg"}}
	got = got[:0]
	for _, g := range WatchGlobs(cfg, gop) {
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
