package filestore

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/flakegate/flakegate"
)

// How audit.jsonl is written and repaired.
//
// A change appends all its lines in one write to the end of the log and
// fsyncs it, then replaces ledger.json, whose audit_head names the last
// line. Every call repairs the log before it reads or writes anything else,
// so at most one change can be missing from ledger.json: the one whose
// process died after its append and before its rename (more only when
// ledger.json was removed or replaced by hand; those lines roll forward
// the same way). What a kill or a power cut leaves:
//
//   - during the append, or a power cut before its fsync: a torn last line (no newline at its end, or bytes
//     that do not parse or do not chain), or the skip line of a consume
//     that empties a freeze without the expire line written in the same
//     write. The change never reached ledger.json, so nobody saw it
//     succeed: repair cuts those bytes off.
//   - after the append (before or after its fsync, before the rename):
//     complete lines ledger.json lacks. Repair applies them and writes
//     ledger.json, finishing the change.
//   - after the rename, before the folder's fsync: the new ledger.json,
//     or after a power cut possibly the old one and the case above.
//
// A log that disagrees with the ledger in any other way (audit_head names
// no line, a bad line before the last, a line that does not apply) was
// edited by hand: nothing is repaired, and freeze verify reports it.

// crashHook, when a test sets it, runs at each named step of a write; the
// crash tests kill the process there.
var crashHook func(step string)

func crashPoint(step string) {
	if crashHook != nil {
		crashHook(step)
	}
}

// appendAudit appends data, the lines of one change, to the log in one
// write and fsyncs it. On failure it cuts the log back to its old size,
// as repair would.
func appendAudit(dir string, data []byte) error {
	path := filepath.Join(dir, AuditFile)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fsError("append to audit log", path, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return fsError("append to audit log", path, err)
	}
	_, err = f.Write(data)
	if err == nil {
		crashPoint(AuditFile + " appended")
		err = f.Sync()
	}
	if err != nil {
		f.Truncate(fi.Size()) // best effort; repair cuts it otherwise
		f.Close()
		return fsError("append to audit log", path, err)
	}
	if err := f.Close(); err != nil {
		return fsError("append to audit log", path, err)
	}
	crashPoint(AuditFile + " synced")
	if fi.Size() == 0 {
		// The file may be new: make its name durable before ledger.json
		// names its lines.
		return syncDir(dir)
	}
	return nil
}

// tailSize is the first guess at how many bytes hold the log's last line.
const tailSize = 4096

// readTail returns the end of the log, at least its whole last line; nil
// when the file is missing or empty.
func readTail(path string) ([]byte, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, fsError("read audit log", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fsError("read audit log", path, err)
	}
	size := fi.Size()
	for n := int64(tailSize); ; n *= 4 {
		off := max(size-n, 0)
		buf := make([]byte, size-off)
		if _, err := f.ReadAt(buf, off); err != nil && err != io.EOF {
			return nil, fsError("read audit log", path, err)
		}
		if off == 0 || bytes.IndexByte(bytes.TrimSuffix(buf, []byte("\n")), '\n') >= 0 {
			return buf, nil
		}
	}
}

// lastLine returns the last line of b, the end of a log, without its
// newline, and whether a newline ends it.
func lastLine(b []byte) ([]byte, bool) {
	complete := len(b) > 0 && b[len(b)-1] == '\n'
	if complete {
		b = b[:len(b)-1]
	}
	return b[bytes.LastIndexByte(b, '\n')+1:], complete
}

// repair brings log and ledger level after a change was cut short; raw is
// the whole log and head ledger.json's audit_head, which is not raw's last
// line. The caller holds the lock and has loaded the ledger's freezes
// into st.
func (s *Store) repair(st *state, head string, raw []byte) error {
	covered, ok := coveredEnd(raw, head)
	if !ok {
		st.setLog(raw)
		return nil
	}
	// The lines after the covered ones that are whole, parse and chain;
	// cut is where the rest, a torn append, begins.
	type pending struct {
		event flakegate.AuditEvent
		start int
	}
	var done []pending
	prev, off, cut := head, covered, len(raw)
	for off < len(raw) {
		nl := bytes.IndexByte(raw[off:], '\n')
		if nl < 0 {
			cut = off // no newline: the append stopped inside the line
			break
		}
		line := raw[off : off+nl]
		e, err := flakegate.ParseAuditLine(line)
		if err != nil || e.PrevSHA256 != prev {
			if off+nl+1 < len(raw) {
				st.setLog(raw) // a bad line with lines after it: an edit
				return nil
			}
			cut = off
			break
		}
		done = append(done, pending{e, off})
		prev = flakegate.AuditLineSHA256(line)
		off += nl + 1
	}
	// A consume that empties a freeze writes its skip and expire lines in
	// one append; a skip to zero runs with nothing after it is the first
	// half of one that was torn.
	if n := len(done); n > 0 && done[n-1].event.Action == flakegate.ActionSkip && done[n-1].event.RunsLeft == 0 {
		cut = done[n-1].start
		done = done[:n-1]
	}
	m := make(map[string]flakegate.Freeze, len(st.freezes))
	for k, f := range st.freezes {
		m[k] = f
	}
	for _, p := range done {
		if flakegate.ApplyAudit(m, p.event) != nil {
			st.setLog(raw) // lines that do not follow from the ledger: an edit
			return nil
		}
	}
	if cut < len(raw) {
		if err := truncateAudit(s.dir, int64(cut)); err != nil {
			return err
		}
		raw = raw[:cut]
	}
	st.freezes = m
	st.setLog(raw)
	if len(done) == 0 {
		return nil // ledger.json already names the last line left
	}
	return s.writeLedger(st)
}

// coveredEnd returns the offset just after the line of raw whose sha256 is
// head (0 for head ""), searching from the end, and false if no line has it.
func coveredEnd(raw []byte, head string) (int, bool) {
	if head == "" {
		return 0, true
	}
	for end := len(raw); end > 0; {
		lineEnd := end
		if raw[end-1] == '\n' {
			lineEnd--
		}
		start := bytes.LastIndexByte(raw[:lineEnd], '\n') + 1
		if flakegate.AuditLineSHA256(raw[start:lineEnd]) == head {
			return end, true
		}
		end = start
	}
	return 0, false
}

// setLog sets the state's view of the log from its bytes.
func (st *state) setLog(raw []byte) {
	st.lines = splitLines(raw)
	st.head = ""
	if len(st.lines) > 0 {
		st.head = flakegate.AuditLineSHA256(st.lines[len(st.lines)-1])
	}
	st.newline = len(raw) > 0 && raw[len(raw)-1] != '\n'
}

// truncateAudit cuts the log to size bytes and fsyncs it.
func truncateAudit(dir string, size int64) error {
	path := filepath.Join(dir, AuditFile)
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return fsError("repair audit log", path, err)
	}
	err = f.Truncate(size)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fsError("repair audit log", path, err)
	}
	crashPoint(AuditFile + " truncated")
	return nil
}

func splitLines(b []byte) [][]byte {
	if len(b) == 0 {
		return nil
	}
	b = bytes.TrimSuffix(b, []byte("\n"))
	return bytes.Split(b, []byte("\n"))
}
