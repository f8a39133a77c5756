package impact_test

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/flakegate/flakegate/impact"
)

func TestCompare(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	writeTree(t, outside, map[string]string{"lib/x.txt": "x\n"})
	base := map[string]string{
		"same.txt":         "same\n",
		"edit.txt":         "one\n",
		"gone.txt":         "gone\n",
		"big.bin":          string(make([]byte, 200<<10)),
		"common/data.txt":  "data\n",
		"p/data":           "symlink:../common/data.txt",
		"p/all":            "symlink:../common",
		"p/self":           "symlink:..",
		"mods":             "symlink:" + filepath.Join(outside, "lib"),
		"retarget":         "symlink:same.txt",
		".git/HEAD":        "ref: refs/heads/main\n",
		"sub/.git":         "gitdir: elsewhere\n",
		"run.sh":           "#!/bin/sh\n",
		"nested/deep/a.go": "package deep\n",
	}
	big := make([]byte, 200<<10)
	big[150<<10] = 1
	b, c := twoTrees(t, base, map[string]string{
		"edit.txt":        "two\n",
		"gone.txt":        "",
		"new.txt":         "new\n",
		"big.bin":         string(big),
		"common/data.txt": "DATA\n",
		"retarget":        "symlink:edit.txt",
		".git/HEAD":       "ref: refs/heads/other\n",
		"sub/.git":        "gitdir: other\n",
	})
	if err := os.Chmod(filepath.Join(c, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	var got []impact.Change
	for _, ch := range compare(t, b, c).Changes() {
		got = append(got, ch)
	}
	want := []impact.Change{
		{Path: "big.bin", Kind: impact.Modified},
		{Path: "common/data.txt", Kind: impact.Modified},
		{Path: "edit.txt", Kind: impact.Modified},
		{Path: "gone.txt", Kind: impact.Removed},
		{Path: "new.txt", Kind: impact.Added},
		{Path: "p/all/data.txt", Kind: impact.Modified}, // through the link to the folder
		{Path: "p/data", Kind: impact.Modified},         // through the link to the file
		{Path: "p/self", Kind: impact.Modified},         // a link to a folder that holds it
		{Path: "retarget", Kind: impact.Modified},
		{Path: "run.sh", Kind: impact.Modified}, // the execute bit
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("changes\n got %v\nwant %v", got, want)
	}
}

// TestCompareLinkOutside: a link out of the tree is the same only when
// both trees' links resolve to the same place.
func TestCompareLinkOutside(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"base/link": "symlink:../shared-b", "shared-b/x": "x\n",
		"cand/link": "symlink:../shared-b",
	})
	if got := compare(t, filepath.Join(root, "base"), filepath.Join(root, "cand")).Changes(); len(got) != 0 {
		t.Errorf("the same outside target: %v", got)
	}
	deeper := filepath.Join(root, "deeper", "cand")
	writeTree(t, deeper, map[string]string{"link": "symlink:../shared-b"})
	if got := compare(t, filepath.Join(root, "base"), deeper).Changes(); len(got) != 1 || got[0].Path != "link" {
		t.Errorf("another outside target: %v", got)
	}
}
