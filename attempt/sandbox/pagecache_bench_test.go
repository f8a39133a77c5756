package sandbox

import (
	"flag"
	"io/fs"
	"path/filepath"
	"testing"
)

var sweepTree = flag.String("sweep.tree", "", "the tree BenchmarkEvictTrees sweeps (bench/page-cache-sweep.sh)")

// BenchmarkEvictTrees is the page-cache sweep of one tree (what a check
// without a memory cgroup runs before every attempt); its peer,
// BenchmarkWalkTree, is a walk of the same tree that only lists it.
func BenchmarkEvictTrees(b *testing.B) {
	if *sweepTree == "" {
		b.Skip("-sweep.tree names no tree")
	}
	for b.Loop() {
		evictTrees([]string{*sweepTree})
	}
}

func BenchmarkWalkTree(b *testing.B) {
	if *sweepTree == "" {
		b.Skip("-sweep.tree names no tree")
	}
	for b.Loop() {
		n := 0
		_ = filepath.WalkDir(*sweepTree, func(_ string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				n++
			}
			return nil
		})
		if n == 0 {
			b.Fatal("no file in the tree")
		}
	}
}
