package e2e_test

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

// coverBuild readies the binary's coverage when the tests run under go
// test -cover: the build flags that instrument it, as the test binary
// is, and a folder its counters go to: the GOCOVERDIR of every flakegate
// the tests run, and of its sandbox helpers (flakegate re-executed),
// which every identity the tests run it as may write. collect copies
// what is there into the test binary's own coverage folder as the tests
// end, beside its counters: go test -cover ./e2e/ -args
// -test.gocoverdir=DIR keeps them, for go tool covdata percent -i=DIR.
// Without -cover it returns no flags, and collect does nothing.
func coverBuild() (flags []string, collect func(), err error) {
	mode := testing.CoverMode()
	if mode == "" {
		return nil, func() {}, nil
	}
	dir, err := os.MkdirTemp("", "flakegate-e2e-cover-")
	if err == nil {
		err = os.Chmod(dir, 0o1777) // as /tmp: the tests run flakegate as other users too
	}
	if err == nil {
		// The test binary's own coverage goes where -test.gocoverdir
		// says; this is the environment of what it runs.
		err = os.Setenv("GOCOVERDIR", dir)
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	own := ""
	if f := flag.Lookup("test.gocoverdir"); f != nil {
		own = f.Value.String()
	}
	collect = func() {
		defer os.RemoveAll(dir)
		if own == "" {
			return
		}
		names, _ := filepath.Glob(filepath.Join(dir, "cov*"))
		for _, n := range names {
			if b, err := os.ReadFile(n); err == nil {
				_ = os.WriteFile(filepath.Join(own, filepath.Base(n)), b, 0o644)
			}
		}
	}
	return []string{"-cover", "-covermode=" + mode}, collect, nil
}
