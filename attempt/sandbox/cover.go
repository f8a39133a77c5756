package sandbox

import (
	"os"
	"slices"
	"strings"
	"sync"
)

// The helper is this binary re-executed (helperCommand). In a binary
// built with coverage (go test -cover, go build -cover) the Go runtime
// writes the helper's counters into the folder GOCOVERDIR names, and
// without one it prints "warning: GOCOVERDIR not set" on the helper's
// stderr, which is the attempt's output. A test binary reads GOCOVERDIR
// as it exits; a binary built with go build -cover reads it as it
// starts, and prints the warning then. So the helper is started with the
// folder this binary's own counters go to (helperSpec.CoverDir) as its
// GOCOVERDIR, takes it out of its environment before bwrap inherits
// that (uncover: bwrap gets the attempt's environment, exactly), and
// sets it again as it exits (coverAtExit): what runs only in the helper
// (the mounts, the cgroup join) is counted with the rest, and nothing
// the runtime prints as it exits reaches the attempt. The attempt's
// environment never holds the runtime's GOCOVERDIR.

// coverDir is where this binary's coverage counters go: the Go runtime's
// own variable (go test -cover sets it for a test binary; a binary built
// with go build -cover writes only where it is set), "" for none.
var coverDir = sync.OnceValue(func() string { return os.Getenv("GOCOVERDIR") })

// coverVar is the Go runtime's coverage variable.
const coverVar = "GOCOVERDIR"

// cover sets spec.CoverDir and returns the helper's environment: env
// (the attempt's, or a standby's) with GOCOVERDIR set to it, when there
// is one. An attempt's own GOCOVERDIR (a config passes it by name) goes
// into spec.AttemptCover, for uncover to give back.
func (spec *helperSpec) cover(env []string) []string {
	spec.CoverDir, spec.AttemptCover = coverDir(), nil
	if spec.CoverDir == "" {
		return env
	}
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, coverVar+"="); ok {
			spec.AttemptCover = &v // the last one, as exec.Cmd keeps it
		}
	}
	return append(slices.Clip(env), coverVar+"="+spec.CoverDir)
}

// uncover gives the helper's environment, which bwrap inherits, back to
// the attempt: without the GOCOVERDIR cover added (a binary built with
// go build -cover read it as the helper started), with the attempt's
// own where it had one.
func (spec *helperSpec) uncover() {
	switch {
	case spec.CoverDir == "":
	case spec.AttemptCover != nil:
		os.Setenv(coverVar, *spec.AttemptCover) //nolint:errcheck // a valid name
	default:
		os.Unsetenv(coverVar) //nolint:errcheck // a valid name
	}
}

// coverAtExit readies the helper's exit (after its own lines, before the
// runtime's exit hooks): its counters go to dir ("" writes none), and
// whatever the runtime says then goes nowhere.
func coverAtExit(dir string) {
	if dir != "" {
		os.Setenv(coverVar, dir) //nolint:errcheck // without it the counters are lost, nothing else
	}
	if null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0); err == nil {
		os.Stderr = null
	}
}
