package site

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flakegate/flakegate/internal/flock"
)

// TestCollectLayers: the least recently used layers go first until the
// kept ones fit the bound; a layer a check holds, and one being built,
// stay; what went is said once.
func TestCollectLayers(t *testing.T) {
	root := t.TempDir()
	layer := func(name string, used time.Time, meta bool) string {
		dir := filepath.Join(root, name)
		os.MkdirAll(filepath.Join(dir, "tree"), 0o755)
		os.WriteFile(filepath.Join(dir, "tree", "blob"), make([]byte, 64<<10), 0o644)
		if meta {
			os.WriteFile(filepath.Join(dir, "meta.json"), []byte("{}"), 0o644)
			os.Chtimes(filepath.Join(dir, "meta.json"), used, used)
		}
		os.Chtimes(dir, used, used)
		return dir
	}
	now := time.Now()
	oldest := layer("oldest", now.Add(-3*time.Hour), true)
	held := layer("held", now.Add(-2*time.Hour), true)
	older := layer("older", now.Add(-time.Hour), true)
	newest := layer("newest", now, true)
	building := layer("building", now, false)
	f, err := flock.Share(context.Background(), held)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var said []string
	if err := CollectLayers(root, diskUsage(newest)+diskUsage(building)+diskUsage(held), func(s string) { said = append(said, s) }); err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]bool{oldest: false, held: true, older: false, newest: true, building: true} {
		if _, err := os.Stat(dir); (err == nil) != want {
			t.Errorf("%s: kept %v, want %v", filepath.Base(dir), err == nil, want)
		}
	}
	if len(said) != 1 || !strings.HasPrefix(said[0], "prepared layers: removed 2 least recently used") {
		t.Errorf("said %q", said)
	}
	if err := CollectLayers(filepath.Join(root, "none"), 0, func(s string) { t.Errorf("said %q", s) }); err != nil {
		t.Errorf("no layers folder: %v", err)
	}
}
