package sandbox

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// The helper's descriptors go by name, never by position: flakegate puts
// each one among the helper's ExtraFiles and writes the number it got
// there into the helper's arguments as a flag of its own
// (--report-fd=5), and the helper reads them back by those names
// (parseFDs). The helper hands bwrap its status and seccomp descriptors
// the same way, with bwrap's own flags (--json-status-fd N, --seccomp N).
// A descriptor that is not given is none: the helper never guesses one.
const (
	fdOutput      = "output"       // the attempt's output: the helper's stdout and stderr (output), bwrap's and the attempt's
	fdStatus      = "status"       // bwrap's --json-status-fd, passed on to bwrap
	fdSeccomp     = "seccomp"      // bwrap's --seccomp filter, passed on to bwrap
	fdReport      = "report"       // the helper's report (helperReport)
	fdAttempt     = "attempt"      // a standby's attempt line, passed on to bwrap's command as execFD
	fdTreeUserns  = "tree-userns"  // the user namespace whose mapping idmaps the tree
	fdCacheUserns = "cache-userns" // the one that idmaps a host Go build cache (none is given today)
	fdShareUserns = "share-userns" // the one that idmaps the sandbox.rw folders
)

// handOff collects the descriptors a child process gets, each with the
// number it has there (3 for the first of its ExtraFiles).
type handOff struct {
	files []*os.File
	flags []string // --NAME-fd=N, one per named descriptor
}

// add puts f among the child's descriptors and returns its number there.
func (h *handOff) add(f *os.File) int {
	h.files = append(h.files, f)
	return 2 + len(h.files)
}

// give adds f as the helper's descriptor name.
func (h *handOff) give(name string, f *os.File) {
	h.flags = append(h.flags, "--"+name+"-fd="+strconv.Itoa(h.add(f)))
}

// helperFDs are the helper's descriptors by name, as parseFDs read them.
type helperFDs map[string]int

// parseFDs reads the helper's --NAME-fd=N arguments.
func parseFDs(args []string) (helperFDs, error) {
	fds := helperFDs{}
	for _, a := range args {
		kv, ok := strings.CutPrefix(a, "--")
		name, n, ok2 := strings.Cut(kv, "-fd=")
		fd, err := strconv.Atoi(n)
		if !ok || !ok2 || err != nil || fd < 3 {
			return nil, fmt.Errorf("bad descriptor argument %q", a)
		}
		fds[name] = fd
	}
	return fds, nil
}

// get is the descriptor given as name, -1 when none was.
func (f helperFDs) get(name string) int {
	if n, ok := f[name]; ok {
		return n
	}
	return -1
}

// file is the descriptor given as name as a file, nil when none was.
func (f helperFDs) file(name string) *os.File {
	if n := f.get(name); n >= 0 {
		return os.NewFile(uintptr(n), name)
	}
	return nil
}
