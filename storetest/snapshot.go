package storetest

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// SnapshotDir returns every file under dir with its bytes, keyed by its
// path below dir, so a test can show that a refused operation changed
// nothing on disk.
func SnapshotDir(t testing.TB, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		files[strings.TrimPrefix(path, dir)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
