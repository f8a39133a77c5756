// Package filestore is flakegate's embedded store: plain files in one
// folder, by default .git/flakegate under the repository's git common
// directory, so every worktree of a repository shares one ledger.
//
//	DIR/ledger.json                  the freezes, small, sorted, indented
//	DIR/audit.jsonl                  one event per line, each line carrying
//	                                 the sha256 of the line before it
//	DIR/records/<record_sha256>.json the exact bytes of every frozen record
//	DIR/replay/<sha256(key)>.json    the first base result per replay key
//	DIR/replay/<sha256(key)>.lock    the flock of a base replay in progress
//	DIR/seed-secret                  the secret drawn seeds are keyed by
//	                                 (64 hex digits, mode 0600; secret.go)
//	DIR/lock                         the flock every change holds
//
// Every change takes the lock. A change of the ledger appends its audit
// lines to audit.jsonl in one write and fsyncs the log, then replaces
// ledger.json (temporary file, fsync, rename, fsync of the folder);
// ledger.json names the last audit line it includes (audit_head). So a
// change costs the same however long the log is. A process killed in
// between leaves the log ahead of the ledger, and the next call repairs
// that under the lock before anything else (audit.go): a torn last append
// is cut off, since its change never reached the ledger, and complete
// lines the ledger lacks are rolled forward, so log and ledger never
// disagree. Records and replay results are written atomically (temporary
// file, fsync, rename, fsync of the folder).
package filestore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/internal/atomicfile"
	"github.com/flakegate/flakegate/internal/flock"
)

// DefaultDir is the folder of the embedded store inside the git common
// directory, shared by every worktree of the repository.
const DefaultDir = "flakegate"

// The files of a store.
const (
	LedgerFile = "ledger.json"
	AuditFile  = "audit.jsonl"
	LockFile   = "lock"
	RecordsDir = "records"
	ReplayDir  = "replay"
	SecretFile = "seed-secret"
	CorpusFile = "corpus.json"
)

// ledgerVersion is the "version" key of ledger.json.
const ledgerVersion = 1

// Store is the embedded store in one folder. Its methods are safe for
// concurrent use by goroutines and by processes sharing the folder.
type Store struct {
	dir string
	// Now is the clock audit events are stamped with; tests replace it.
	Now func() time.Time
	// LockTimeout bounds a wait for the store's lock (0: until the
	// context ends); LockWait receives a line when a wait lasts.
	LockTimeout time.Duration
	LockWait    io.Writer
}

var _ flakegate.Store = (*Store)(nil)

// Open opens the store in dir, creating the folder if it is missing.
func Open(dir string) (*Store, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fsError("open ledger", dir, err)
	}
	if fi, err := os.Stat(abs); err == nil && !fi.IsDir() {
		return nil, &flakegate.Error{Code: flakegate.EINVALID, Op: "open ledger", Path: abs,
			Message: "not a folder", Hint: "pass --ledger DIR naming a folder (or a postgres:// DSN)"}
	}
	for _, d := range []string{abs, filepath.Join(abs, RecordsDir), filepath.Join(abs, ReplayDir)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fsError("open ledger", d, err)
		}
	}
	return &Store{dir: abs, Now: time.Now}, nil
}

// Dir returns the store's folder.
func (s *Store) Dir() string { return s.dir }

// Close releases nothing: every call opens and closes its own files.
func (s *Store) Close() error { return nil }

// lock takes the store's exclusive lock; the returned func releases it.
// flock locks belong to the open file, so goroutines of one process
// exclude each other as processes do, and a killed process's lock goes
// with it.
func (s *Store) lock(ctx context.Context) (func(), error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, err := flock.Lock(ctx, filepath.Join(s.dir, LockFile), flock.Options{
		What: "the ledger lock", Op: "lock ledger", Timeout: s.LockTimeout, Wait: s.LockWait})
	if err != nil {
		return nil, err
	}
	return func() { f.Close() }, nil
}

// ledgerDoc is the JSON of ledger.json.
type ledgerDoc struct {
	Version int `json:"version"`
	// AuditHead is the sha256 of the last audit line the ledger includes.
	AuditHead string             `json:"audit_head"`
	Freezes   []flakegate.Freeze `json:"freezes"`
}

// state is the ledger and the end of the audit log as read under the lock.
type state struct {
	freezes map[string]flakegate.Freeze
	// lines is every audit line, read only when a caller asks for them
	// (AuditLines) or a repair needed the whole log.
	lines [][]byte
	// head is the sha256 of the log's last line, "" for an empty log.
	head string
	// newline is set when the log does not end in a newline (its last line
	// was kept without one by hand); the next append starts with one.
	newline bool
}

// load reads the ledger and the end of the log (all of it with
// withLines); the caller holds the lock. When ledger.json's audit_head is
// not the log's last line, a change was cut short and repair finishes or
// drops it first.
func (s *Store) load(withLines bool) (*state, error) {
	doc, err := s.readLedger()
	if err != nil {
		return nil, err
	}
	st := &state{freezes: make(map[string]flakegate.Freeze, len(doc.Freezes))}
	for _, f := range doc.Freezes {
		st.freezes[f.Triple().Key()] = f
	}
	auditPath := filepath.Join(s.dir, AuditFile)
	var raw []byte
	if withLines {
		raw, err = os.ReadFile(auditPath)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fsError("read audit log", auditPath, err)
		}
	} else if raw, err = readTail(auditPath); err != nil {
		return nil, err
	}
	last, complete := lastLine(raw)
	if (len(raw) == 0 && doc.AuditHead == "") || (len(raw) > 0 && flakegate.AuditLineSHA256(last) == doc.AuditHead) {
		st.head = doc.AuditHead
		st.newline = len(raw) > 0 && !complete
		if withLines {
			st.lines = splitLines(raw)
		}
		return st, nil
	}
	if !withLines {
		if raw, err = os.ReadFile(auditPath); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fsError("read audit log", auditPath, err)
		}
	}
	if err := s.repair(st, doc.AuditHead, raw); err != nil {
		return nil, err
	}
	return st, nil
}

// readLedger reads and checks ledger.json; a missing file is an empty
// ledger. Nothing is ever rewritten on a file that fails here.
func (s *Store) readLedger() (*ledgerDoc, error) {
	path := filepath.Join(s.dir, LedgerFile)
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &ledgerDoc{Version: ledgerVersion}, nil
	} else if err != nil {
		return nil, fsError("read ledger", path, err)
	}
	bad := func(format string, args ...any) error {
		return &flakegate.Error{Code: flakegate.EINVALID, Op: "read ledger", Path: path,
			Message: fmt.Sprintf(format, args...),
			Hint:    "fix the file by hand, or move it aside to rebuild it from " + AuditFile + "; then run 'flakegate freeze verify'"}
	}
	var doc ledgerDoc
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			line, col := position(raw, syn.Offset)
			return nil, bad("not valid JSON at line %d, column %d: %v", line, col, err)
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			line, _ := position(raw, int64(len(raw)))
			return nil, bad("not valid JSON: the file ends at line %d in the middle of the ledger", line)
		}
		var fe *flakegate.Error
		if errors.As(err, &fe) {
			return nil, bad("%s", fe.Message)
		}
		return nil, bad("not a ledger: %v", strings.TrimPrefix(err.Error(), "json: "))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, bad("data after the ledger object")
	}
	if doc.Version != ledgerVersion {
		return nil, bad("version is %d, want %d", doc.Version, ledgerVersion)
	}
	if doc.AuditHead != "" && !flakegate.ValidSHA256(doc.AuditHead) {
		return nil, bad("audit_head %q is not a sha256", doc.AuditHead)
	}
	seen := make(map[string]bool, len(doc.Freezes))
	for i, f := range doc.Freezes {
		if f.ExpiresAfterRuns < 0 {
			return nil, bad("entry %d (%s): expires_after_runs is %d; runs left cannot be negative", i+1, f.Triple(), f.ExpiresAfterRuns)
		}
		// A spent entry (0 runs) loads; Skip and verify void it.
		g := f
		if g.ExpiresAfterRuns == 0 {
			g.ExpiresAfterRuns = 1
		}
		if err := g.Validate(); err != nil {
			return nil, bad("entry %d: %s", i+1, err)
		}
		if seen[f.Triple().Key()] {
			return nil, bad("entry %d: a second freeze for %s", i+1, f.Triple())
		}
		seen[f.Triple().Key()] = true
	}
	return &doc, nil
}

// position turns a byte offset into a 1-based line and column.
func position(raw []byte, off int64) (int, int) {
	if off > int64(len(raw)) {
		off = int64(len(raw))
	}
	before := raw[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := len(before) - bytes.LastIndexByte(before, '\n')
	return line, col
}

// commit appends events to the log, then writes the ledger; the caller
// holds the lock and has applied the events to st.freezes.
func (s *Store) commit(st *state, events ...flakegate.AuditEvent) error {
	if len(events) > 0 {
		var buf bytes.Buffer
		if st.newline {
			buf.WriteByte('\n')
		}
		prev := st.head
		for _, e := range events {
			line, err := e.Line(prev)
			if err != nil {
				return err
			}
			buf.Write(line)
			buf.WriteByte('\n')
			prev = flakegate.AuditLineSHA256(line)
		}
		if err := appendAudit(s.dir, buf.Bytes()); err != nil {
			return err
		}
		st.head, st.newline = prev, false
	}
	return s.writeLedger(st)
}

func (s *Store) writeLedger(st *state) error {
	doc := ledgerDoc{Version: ledgerVersion, AuditHead: st.head, Freezes: sorted(st.freezes)}
	for i := range doc.Freezes {
		doc.Freezes[i].GrantedAt = doc.Freezes[i].GrantedAt.UTC()
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // owners like "Zoë <zoe@example.com>" stay readable
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	return writeAtomic(s.dir, LedgerFile, b.Bytes())
}

func sorted(m map[string]flakegate.Freeze) []flakegate.Freeze {
	out := make([]flakegate.Freeze, 0, len(m))
	for _, f := range m {
		out = append(out, f)
	}
	flakegate.SortFreezes(out)
	return out
}

// writeAtomic replaces dir/name with data through atomicfile: temporary
// file, fsync, rename, fsync of the folder. A temporary file left by a
// killed process starts with a dot and ends in .tmp; nothing reads it.
func writeAtomic(dir, name string, data []byte) error {
	return writeAtomicMode(dir, name, data, 0o644)
}

// writeAtomicMode is writeAtomic for a file of mode perm.
func writeAtomicMode(dir, name string, data []byte, perm os.FileMode) error {
	final := filepath.Join(dir, name)
	f, err := atomicfile.New(final, perm)
	if err != nil {
		return fsError("write", final, err)
	}
	defer f.Cleanup()
	f.Step = func(step string) { crashPoint(name + " " + step) }
	if _, err := f.Write(data); err != nil {
		return fsError("write", final, err)
	}
	if err := f.Commit(); err != nil {
		return fsError("write", final, err)
	}
	return nil
}

func syncDir(dir string) error {
	if err := atomicfile.SyncDir(dir); err != nil {
		return fsError("sync", dir, err)
	}
	return nil
}

// fsError wraps a file system error for users: permissions are theirs to
// fix (EINVALID), anything else is flakegate failing (EINTERNAL).
func fsError(op, path string, err error) error {
	var fe *flakegate.Error
	if errors.As(err, &fe) {
		return err
	}
	e := &flakegate.Error{Code: flakegate.EINTERNAL, Op: op, Path: path, Err: unwrapPath(err)}
	if errors.Is(err, fs.ErrPermission) {
		e.Code = flakegate.EINVALID
		e.Hint = "check the folder's permissions, or pass --ledger DIR (FLAKEGATE_LEDGER) to keep the ledger elsewhere"
	}
	return e
}

// unwrapPath drops the *PathError wrapper, whose path the Error carries.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
