package check

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/internal/atomicfile"
	"github.com/flakegate/flakegate/report"
)

// writeFile replaces path with data, durably and atomically.
func writeFile(path string, data []byte) error {
	if err := atomicfile.WriteFile(path, data, 0o644); err != nil {
		return &flakegate.Error{Code: flakegate.EINTERNAL, Op: "check", Path: path, Message: "cannot write", Err: err}
	}
	return nil
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return &flakegate.Error{Code: flakegate.EINTERNAL, Op: "check", Path: path, Message: "cannot encode", Err: err}
	}
	return writeFile(path, append(b, '\n'))
}

func mustJSON(v json.Marshaler) []byte {
	b, err := v.MarshalJSON()
	if err != nil {
		return []byte("null")
	}
	return b
}

// reproduce returns the command line that replays exactly one seed of the
// triple in the candidate worktree, checking the fixture digest first.
func (c *checker) reproduce(workdir string, ps *propState, seed flakegate.Seed, argv []string) string {
	args := []string{"flakegate", "replay",
		"--workdir", workdir,
		"--seed", seed.String(),
		"--expect-fixture-sha256", ps.candFixtureSHA256,
		"--fixture", ps.prop.Fixture,
		"--property", ps.prop.Path,
		"--timeout", ps.prop.WallBudget.String(),
		"--"}
	args = append(args, argv...)
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	safe := true
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// progressSink shows finished triples (report.Progress) and rare notes.
type progressSink struct {
	mu sync.Mutex
	w  io.Writer
	p  *report.Progress
}

func newProgress(w io.Writer, tty bool, total int) *progressSink {
	if w == nil {
		w = io.Discard
		tty = false
	}
	return &progressSink{w: w, p: report.NewProgress(w, tty, total)}
}

func (s *progressSink) Done(r flakegate.Result) { s.p.Done(r) }

func (s *progressSink) Finish() { s.p.Finish() }

func (s *progressSink) Note(msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fmt.Fprintf(s.w, "note: %s\n", msg)
}
