// Package golden compares what a test produced with a golden file, or
// rewrites the file when the tests run with -update (go test ./pkg
// -update). Only tests import it: it registers the -update flag.
package golden

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/flakegate/flakegate/internal/atomicfile"
)

var update = flag.Bool("update", false, "rewrite the golden files instead of comparing with them")

// Update reports whether the tests run with -update, for a test that
// writes some other file (a documentation example, a screenshot).
func Update() bool { return *update }

// Assert compares got with testdata/name of the test's package, or
// rewrites that file with -update.
func Assert(t testing.TB, name string, got []byte) {
	t.Helper()
	AssertFile(t, filepath.Join("testdata", name), got)
}

// AssertFile compares got with the file at path, or rewrites the file
// with -update.
func AssertFile(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := atomicfile.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the output (check the difference, then go test -update rewrites it)\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}
