package digest_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/flakegate/flakegate/digest"
)

// benchTree builds files of size bytes each, spread over 16 folders.
func benchTree(b *testing.B, files, size int) string {
	b.Helper()
	dir := b.TempDir()
	data := make([]byte, size)
	rand.Read(data)
	for i := range files {
		p := filepath.Join(dir, fmt.Sprintf("d%02d", i%16), fmt.Sprintf("f%05d", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		data[0] = byte(i) // distinct contents
		if err := os.WriteFile(p, data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

func BenchmarkFile(b *testing.B) {
	for _, size := range []int{4 << 10, 1 << 20, 64 << 20} {
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			dir := benchTree(b, 1, size)
			p := filepath.Join(dir, "d00", "f00000")
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := digest.File(p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkTree(b *testing.B) {
	for _, shape := range []struct{ files, size int }{
		{files: 4096, size: 4 << 10},
		{files: 256, size: 256 << 10},
		{files: 4, size: 16 << 20},
	} {
		b.Run(fmt.Sprintf("%dx%dKiB", shape.files, shape.size>>10), func(b *testing.B) {
			dir := benchTree(b, shape.files, shape.size)
			b.SetBytes(int64(shape.files * shape.size))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := digest.Tree(context.Background(), dir); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
