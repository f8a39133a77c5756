// Package transcript writes a check's transcripts, one per triple: the
// hash-chained JSON lines log of its attempts, written as they happen,
// and re-checks a run record against the transcript it names (Verify).
// It starts no process.
package transcript

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"hash"
	"os"
	"sync"
	"time"

	"github.com/flakegate/flakegate"
)

// Event types, in the order a check writes them:
//
//	retry_cap      the cap (RetryCap), before any attempt runs
//	attempt_start  an attempt begins (Side, Index)
//	attempt_end    it ended (Side, Index, Result, ExitCode, WallSeconds,
//	               Signal, Reason); results are pass|fail|error|timeout
//	base_replay    the base seed result the record uses (Result, and
//	               FromCache when it came from the replay cache instead of
//	               a base attempt in this transcript)
//	complete       last line: nothing more will be written
//
// Side is "candidate" or "base". Candidate index 0 is the first run and
// 1.. are the retries; a base attempt has index 0.
const (
	EventRetryCap     = "retry_cap"
	EventAttemptStart = "attempt_start"
	EventAttemptEnd   = "attempt_end"
	EventBaseReplay   = "base_replay"
	EventComplete     = "complete"
	// EventPrepare is the prepare of a tree the attempts ran on: Side,
	// ExitCode, WallSeconds, FromCache (its layer came from an earlier
	// check) and Reason (why it failed, with its output tail).
	EventPrepare = "prepare"
)

// Sides of an attempt.
const (
	SideCandidate = "candidate"
	SideBase      = "base"
	// SideProbe is a flake probe: the base seed run again, after a
	// SCHEDULER result, looking for a base failure. It is not the base
	// replay and never changes base_seed_result.
	SideProbe = "probe"
)

// Event is one line of a transcript. PrevSHA256 is filled in by
// Writer.Write: the sha256 (hex) of the previous line's bytes without
// its newline, "" on the first line.
type Event struct {
	Type        string    `json:"type"`
	At          time.Time `json:"at"`
	Side        string    `json:"side,omitempty"`
	Index       int       `json:"index,omitempty"`
	RetryCap    *int      `json:"retry_cap,omitempty"`
	Result      string    `json:"result,omitempty"`
	ExitCode    int       `json:"exit_code,omitempty"`
	Signal      string    `json:"signal,omitempty"`
	WallSeconds float64   `json:"wall_seconds,omitempty"`
	FromCache   bool      `json:"from_cache,omitempty"`
	Reason      string    `json:"reason,omitempty"`
	// Batch, on the attempt_end of an attempt that ran in a batch (one
	// process for many triples), names that process; Output is then the
	// test's own output as the framework's report gives it.
	Batch      *Batch `json:"batch,omitempty"`
	Output     string `json:"output,omitempty"`
	PrevSHA256 string `json:"prev_sha256"`
}

// Batch is the process a batched attempt ran in: its argv, its members
// (the triples' labels, in the order they were given) and the sha256
// and size of its whole output.
//
// KnownAnswers are the tests of flakegate's own the process also ran
// (drawn for this attempt, never triples): what each was planted to do,
// what the framework's report says it did, and whether the report shows
// its nonce. A report that does not show each as planted is no report
// of the framework's: every member of the batch is then an error.
type Batch struct {
	Argv         []string      `json:"argv"`
	Members      []string      `json:"members"`
	OutputSHA256 string        `json:"output_sha256"`
	OutputBytes  int64         `json:"output_bytes"`
	ExitCode     int           `json:"exit_code"`
	WallSeconds  float64       `json:"wall_seconds"`
	KnownAnswers []KnownAnswer `json:"known_answers,omitempty"`
}

// KnownAnswer is one planted test of a batch and what its report says.
type KnownAnswer struct {
	Test   string `json:"test"`   // its label, path::name
	Want   string `json:"want"`   // pass or fail
	Nonce  string `json:"nonce"`  // what its body prints or records
	Result string `json:"result"` // what the report says: pass, fail, error, or "" when absent
	Shown  bool   `json:"shown"`  // the report shows the nonce as its body's
	Why    string `json:"why,omitempty"`
}

// Writer writes a transcript: an append-only JSON lines file whose lines
// are chained by sha256: editing, dropping or reordering a line breaks the
// chain at the line after it. Each Write is one write(2) of a whole line, so a crash
// leaves a prefix of complete lines (plus at most one torn line).
type Writer struct {
	mu     sync.Mutex
	f      *os.File
	path   string
	prev   string
	sum    hash.Hash
	err    error
	closed bool
}

// Create creates a new transcript file at path. An existing
// file is never overwritten (ECONFLICT): a record may still refer to it.
func Create(path string) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		code := flakegate.EINTERNAL
		if errors.Is(err, os.ErrExist) {
			code = flakegate.ECONFLICT
		}
		return nil, &flakegate.Error{Code: code, Op: "create transcript", Path: path, Err: err,
			Hint: "a transcript is never overwritten; write the next check into a new folder"}
	}
	return &Writer{f: f, path: path, sum: sha256.New()}, nil
}

// Write appends ev as one line, chained to the previous line. A zero At
// is set to the current time (UTC). After a failed write every later
// write fails too, so a transcript never has a gap.
func (t *Writer) Write(ev Event) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return t.fail(errors.New("write after close"))
	}
	if t.err != nil {
		return t.err
	}
	if ev.At.IsZero() {
		ev.At = time.Now()
	}
	ev.At = ev.At.UTC()
	ev.PrevSHA256 = t.prev
	line, err := json.Marshal(ev)
	if err != nil {
		return t.fail(err)
	}
	line = append(line, '\n')
	if _, err := t.f.Write(line); err != nil {
		return t.fail(err)
	}
	t.sum.Write(line)
	t.prev = lineSHA256(line[:len(line)-1])
	return nil
}

func (t *Writer) fail(err error) error {
	if t.err == nil {
		t.err = &flakegate.Error{Code: flakegate.EINTERNAL, Op: "write transcript", Path: t.path, Err: err}
	}
	return t.err
}

// Close closes the file, without an fsync: a transcript is its check's
// output, as the check's per-triple records are (a power cut may lose
// it; the stored record holds its digest durably), and a suite's check
// closes hundreds at once, where two fsyncs each cost more than the
// tests. A transcript is a log written as the attempts happen, so it is
// appended, not replaced (internal/atomicfile is for files that are
// replaced whole).
func (t *Writer) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return t.err
	}
	t.closed = true
	if err := t.f.Close(); err != nil && t.err == nil {
		t.err = &flakegate.Error{Code: flakegate.EINTERNAL, Op: "close transcript", Path: t.path, Err: err}
	}
	return t.err
}

// SHA256 returns the sha256 (hex) of the bytes written so far; after Close
// it is the digest of the file, the record's transcript_sha256.
func (t *Writer) SHA256() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return hex.EncodeToString(t.sum.Sum(nil))
}

// Path returns the transcript's file path.
func (t *Writer) Path() string { return t.path }

func lineSHA256(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
