package check

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	sitepkg "github.com/flakegate/flakegate/site"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/config"
)

// TestBwrapInsideTheRepository: a bwrap that PATH finds inside the
// repository (a folder of the checkout on PATH) is refused: it would
// build every attempt's sandbox, and it is the patch's file.
func TestBwrapInsideTheRepository(t *testing.T) {
	repo := t.TempDir()
	bwrap := filepath.Join(repo, "bin", "bwrap")
	if err := os.MkdirAll(filepath.Dir(bwrap), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bwrap, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "bwrap")
	if err := os.Symlink(bwrap, link); err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{bwrap, link} {
		_, err := sitepkg.BuildIsolation(sitepkg.Spec{Op: "check", Block: &config.Sandbox{Limits: config.DefaultLimits()}, Bwrap: b, Guarded: []string{repo}})
		if flakegate.ErrorCode(err) != flakegate.EINVALID || !strings.Contains(err.Error(), "inside "+repo) {
			t.Errorf("bwrap %s: %v, want it refused", b, err)
		}
	}
	if b := (&sitepkg.Base{Top: repo}); !b.Holds(link) || b.Holds("/usr/bin/bwrap") {
		t.Errorf("Holds: the link %v, /usr/bin/bwrap %v", b.Holds(link), b.Holds("/usr/bin/bwrap"))
	}
}
