package sandbox

import (
	"os"
	"sync"
)

// The helper is this binary re-executed (helperCommand). In a binary
// built with coverage (go test -cover, go build -cover) the Go runtime
// writes the helper's counters as it exits, into the folder GOCOVERDIR
// names, and without one it prints "warning: GOCOVERDIR not set" on the
// helper's stderr, which is the attempt's output. So the helper is told
// the folder this binary's own counters go to (helperSpec.CoverDir),
// and what runs only in the helper (the mounts, the cgroup join) is
// counted with the rest; nothing the runtime prints as it exits reaches
// the attempt. The attempt's environment never holds GOCOVERDIR: the
// helper sets it for itself once bwrap has ended.

// coverDir is where this binary's coverage counters go: the Go runtime's
// own variable (go test -cover sets it for a test binary; a binary built
// with go build -cover writes only where it is set), "" for none.
var coverDir = sync.OnceValue(func() string { return os.Getenv("GOCOVERDIR") })

// coverAtExit readies the helper's exit (after its own lines, before the
// runtime's exit hooks): its counters go to dir ("" writes none), and
// whatever the runtime says then goes nowhere.
func coverAtExit(dir string) {
	if dir != "" {
		os.Setenv("GOCOVERDIR", dir) //nolint:errcheck // without it the counters are lost, nothing else
	}
	if null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0); err == nil {
		os.Stderr = null
	}
}
