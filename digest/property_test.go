package digest_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flakegate/flakegate/digest"
	"pgregory.net/rapid"
)

// genTree draws a set of entries with distinct paths, none of which is a
// prefix folder of another entry.
func genTree(t *rapid.T) []specEntry {
	component := rapid.SampledFrom([]string{"a", "b", "a.b", "A", "é", "z z", "a-"})
	paths := rapid.SliceOfNDistinct(
		rapid.Custom(func(t *rapid.T) string {
			return strings.Join(rapid.SliceOfN(component, 1, 3).Draw(t, "components"), "/")
		}), 1, 8, rapid.ID[string],
	).Draw(t, "paths")
	var entries []specEntry
	for _, p := range paths {
		if clashes(p, entries) {
			continue
		}
		entries = append(entries, specEntry{
			typ:  rapid.SampledFrom([]byte{'f', 'x', 'l'}).Draw(t, "type"),
			path: p,
			data: rapid.SliceOfN(rapid.Byte(), 0, 64).Draw(t, "data"),
		})
	}
	for i := range entries {
		if entries[i].typ == 'l' && len(entries[i].data) == 0 {
			entries[i].data = []byte("target") // a symlink needs a target
		}
		if entries[i].typ == 'l' {
			entries[i].data = []byte(strings.ReplaceAll(string(entries[i].data), "\x00", "0"))
		}
	}
	return entries
}

// clashes reports whether p is an entry's folder or has one as a folder.
func clashes(p string, entries []specEntry) bool {
	for _, e := range entries {
		if strings.HasPrefix(e.path, p+"/") || strings.HasPrefix(p, e.path+"/") {
			return true
		}
	}
	return false
}

func treeDigest(t *rapid.T, dir string) string {
	got, err := digest.Tree(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestTreeProperties(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		entries := genTree(rt)

		// Creation order does not matter, and the digest is the spec's.
		dirA, dirB := t.TempDir(), t.TempDir()
		build(rt, dirA, entries)
		perm := rapid.Permutation(entries).Draw(rt, "creation order")
		build(rt, dirB, perm)
		a, b := treeDigest(rt, dirA), treeDigest(rt, dirB)
		if a != b {
			rt.Fatalf("same entries created in another order: %s != %s", a, b)
		}
		if want := specDigest(entries); a != want {
			rt.Fatalf("Tree = %s, spec says %s", a, want)
		}

		// Renaming any entry to a free name changes the digest.
		i := rapid.IntRange(0, len(entries)-1).Draw(rt, "renamed")
		newName := rapid.SampledFrom([]string{"renamed", "x/renamed", "a.c", "ü"}).Draw(rt, "new name")
		if clashes(newName, entries) || entryNamed(newName, entries) {
			return
		}
		oldPath := filepath.Join(dirA, filepath.FromSlash(entries[i].path))
		newPath := filepath.Join(dirA, filepath.FromSlash(newName))
		if err := os.MkdirAll(filepath.Dir(newPath), 0o755); err != nil {
			rt.Fatal(err)
		}
		if err := os.Rename(oldPath, newPath); err != nil {
			rt.Fatal(err)
		}
		if c := treeDigest(rt, dirA); c == a {
			rt.Fatalf("renaming %q to %q kept the digest %s", entries[i].path, newName, c)
		}
	})
}

func entryNamed(p string, entries []specEntry) bool {
	for _, e := range entries {
		if e.path == p {
			return true
		}
	}
	return false
}
