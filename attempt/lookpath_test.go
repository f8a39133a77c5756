package attempt

import (
	"os"
	"path/filepath"
	"testing"
)

// TestLookPathAbsoluteOnly: a host lookup finds a program only in the
// absolute folders of PATH. A relative one ("", ".", "bin") is the
// working folder's, a checkout's: its program is the patch's.
func TestLookPathAbsoluteOnly(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for _, p := range []string{"fg-prog", "bin/fg-prog"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, path := range []string{".", "", "bin", ".:bin::"} {
		if got, err := LookPath("fg-prog", []string{"PATH=" + path}); err == nil {
			t.Errorf("PATH=%q: found %q, want nothing", path, got)
		}
	}
	if got, err := LookPath("fg-prog", []string{"PATH=.:" + filepath.Join(dir, "bin")}); err != nil || got != filepath.Join(dir, "bin", "fg-prog") {
		t.Errorf("an absolute folder: %q, %v", got, err)
	}
}
