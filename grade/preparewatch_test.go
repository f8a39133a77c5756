package grade

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/digest"
	"github.com/flakegate/flakegate/grade/infra"
	"github.com/flakegate/flakegate/transcript"
)

func TestTouches(t *testing.T) {
	for _, tc := range []struct {
		e, f string
		want bool
	}{
		{"data/a.json", "data/a.json", true},
		{"data", "data/a.json", true},
		{"data/a.json/x", "data/a.json", true},
		{"data/a.json", "./data//a.json", true},
		{"data/a.jsonl", "data/a.json", false},
		{"dat", "data/a.json", false},
	} {
		if got := touches(tc.e, tc.f); got != tc.want {
			t.Errorf("touches(%q, %q) = %t, want %t", tc.e, tc.f, got, tc.want)
		}
	}
}

// TestLayerWrites: a prepared layer's upper tree lists a written file,
// a whiteout (a 0/0 character device) as deleted, and an opaque folder
// as hiding what is below it; a plain folder is none.
func TestLayerWrites(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"build/out.txt": "x", "plain/keep.txt": "y"})
	wantDeleted, wantHides := false, false
	if err := unix.Mknod(filepath.Join(root, "gone.py"), unix.S_IFCHR, 0); err == nil {
		wantDeleted = true
	} else {
		t.Logf("no whiteout here (%v): deletions not tried", err)
	}
	if err := os.Mkdir(filepath.Join(root, "opaque"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Setxattr(filepath.Join(root, "opaque"), "trusted.overlay.opaque", []byte("y"), 0); err == nil {
		wantHides = true
	} else {
		t.Logf("no trusted xattr here (%v): opaque folders not tried", err)
	}
	got, err := LayerWrites(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []LayerEntry{{"build/out.txt", "written"}}
	if wantDeleted {
		want = append(want, LayerEntry{"gone.py", "deleted"})
	}
	if wantHides {
		want = append(want, LayerEntry{"opaque", "hides"})
	}
	want = append(want, LayerEntry{"plain/keep.txt", "written"})
	if !slices.Equal(got, want) {
		t.Errorf("LayerWrites = %v, want %v", got, want)
	}
	if _, err := LayerWrites(filepath.Join(root, "missing")); err == nil {
		t.Errorf("a missing layer read without an error")
	}
}

// TestPrepareHits: a watched path a prepare wrote is a hit on its side
// (a conftest.py by its glob, the config by its exact path, a base file
// under a folder it deleted: the generator), a path nothing watches is none; a fixture
// a prepare replaced with a file is seen by its digest, one under a
// folder it rewrote by a text no digest equals; the base's hits say why
// its triples are INCOMPLETE.
func TestPrepareHits(t *testing.T) {
	ctx := context.Background()
	base := map[string]string{"flakegate.yaml": "properties: []\n", "tests/test_a.py": "def test_a():\n    pass\n",
		"tests/data.json": "{}\n", "tools/gen/make.py": "print(1)\n", "src/app.py": "A = 1\n"}
	g, shas := gitRepo(t, base)
	gr := &Grader{Git: g, BaseSHA: shas[0], Config: &config.Config{}, Watch: []string{"flakegate.yaml"}, Finder: infra.New(g, shas[0])}
	p := &config.Property{Path: "tests/test_a.py", Name: "test_a", Framework: config.FrameworkPytest, Fixture: "tests/data.json"}
	candTree := t.TempDir()
	writeTree(t, candTree, map[string]string{"tests/data.json": "{\"rewritten\": true}\n"})
	cand := Prepared{Side: transcript.SideCandidate, Tree: candTree, Wrote: []LayerEntry{
		{"tests/conftest.py", "written"}, {"src/app.pyc", "written"}, {"tests/data.json", "written"}, {"flakegate.yaml", "written"}}}
	baseSide := Prepared{Side: transcript.SideBase, Tree: t.TempDir(), Wrote: []LayerEntry{{"tests", "hides"}}}
	pw, err := gr.PrepareHits(ctx, p, []Prepared{cand, baseSide})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"flakegate.yaml", "tests/conftest.py"}; !slices.Equal(pw.CandWrote, want) {
		t.Errorf("candidate wrote %v, want %v", pw.CandWrote, want)
	}
	// The base's hiding folder holds the fixture: it is the fixture's
	// rewrite, not a hit; its other files are.
	if len(pw.BaseWrote) != 0 {
		t.Errorf("base wrote %v, want none (tests/ holds the fixture)", pw.BaseWrote)
	}
	sum, _ := digest.Path(ctx, filepath.Join(candTree, "tests/data.json"))
	gotCand, gotBase := pw.Fixtures("c", "b")
	if gotCand != sum || gotBase != "rewritten by the base's prepare" {
		t.Errorf("fixtures %q %q, want %q and the base's rewrite", gotCand, gotBase, sum)
	}
	if want := "the candidate's prepare rewrote the fixture tests/data.json; the base's prepare rewrote the fixture tests/data.json"; pw.FixtureWhy != want {
		t.Errorf("fixture why %q\nwant %q", pw.FixtureWhy, want)
	}

	p.Fixture, p.Generator = "", "tools/gen/make.py"
	pw, err = gr.PrepareHits(ctx, p, []Prepared{{Side: transcript.SideCandidate, Wrote: []LayerEntry{{"tools", "written"}}},
		{Side: transcript.SideBase, Wrote: []LayerEntry{{"tools", "deleted"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"tools/gen/make.py"}; !slices.Equal(pw.BaseWrote, want) || pw.CandWrote != nil {
		t.Errorf("base wrote %v, candidate %v, want %v and none", pw.BaseWrote, pw.CandWrote, want)
	}
	if why := pw.BaseWroteWhy(); !strings.HasPrefix(why, "base prepare wrote watched test infrastructure (tools/gen/make.py)") {
		t.Errorf("base why %q", why)
	}
	if c, b := pw.Fixtures("c", "b"); c != "c" || b != "b" {
		t.Errorf("untouched fixtures %q %q", c, b)
	}
	var none *PrepareWatch
	if c, b := none.Fixtures("c", "b"); c != "c" || b != "b" || none.BaseWroteWhy() != "" {
		t.Errorf("before the prepares ran: %q %q %q", c, b, none.BaseWroteWhy())
	}
}
