package grade

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/grade/infra"
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

// TestExplainWatch: each property lists its file, its generator, the
// config and an in-repository ledger, then its globs, and its prepare's
// command apart (run, not watched).
func TestExplainWatch(t *testing.T) {
	files := map[string]string{"flakegate.yaml": "version: 1\n", "tests/test_x.py": "def test_x():\n    pass\n", "gen.sh": "true\n"}
	g, shas := gitRepo(t, files)
	cfg := &config.Config{Watch: []string{"ci/**"}, Properties: []config.Property{
		{Path: "tests/test_x.py", Name: "test_x", Framework: config.FrameworkPytest, Generator: "gen.sh", Prepare: &config.Prepare{Run: []string{"make", "deps"}}},
	}}
	lists, err := ExplainWatch(context.Background(), cfg, "flakegate.yaml", []string{"ledger/"}, infra.New(g, shas[0]))
	if err != nil {
		t.Fatal(err)
	}
	if len(lists) != 1 || lists[0].Property != "tests/test_x.py::test_x" || lists[0].Framework != config.FrameworkPytest || !slices.Equal(lists[0].Prepare, []string{"make", "deps"}) {
		t.Fatalf("lists %+v", lists)
	}
	var got []string
	for _, w := range lists[0].Watch {
		got = append(got, w.Glob+" = "+w.Why)
	}
	want := []string{"tests/test_x.py = the property file", "gen.sh = the fixture generator", "flakegate.yaml = the config",
		"ledger/ = the ledger (inside the repository)", "tests/conftest.py = pytest configuration"}
	if len(got) < len(want) || !slices.Equal(got[:len(want)], want) {
		t.Errorf("watch %q\nwant it to start with %q", got, want)
	}
	if !slices.Contains(got, "ci/** = the global watch") || slices.Contains(got, "pyproject.toml = pytest configuration") {
		t.Errorf("watch %q: want the global watch, and no pyproject.toml (the prepare reads it)", got)
	}
}
