package flakegate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// The audit log is a chain of JSON lines: every line carries the sha256 of
// the line before it, so an edit, insertion or deletion anywhere but at the
// end breaks the chain, and replaying the events from the first line must
// give exactly the ledger. The chain shows changes made by hand; it is not
// a signature, and someone who rewrites every line after an edit can forge
// it. Review of the ledger is what stops a forger.

// AuditLineSHA256 returns the hex sha256 of one audit line, the bytes
// without the newline that ends it. The next line's prev_sha256 holds it.
func AuditLineSHA256(line []byte) string {
	return SHA256Hex(line)
}

// Line encodes e as one audit line (no newline) chained to prev, the
// AuditLineSHA256 of the previous line ("" for the first line). At is
// written in UTC. Every store writes its lines with Line, so the file
// store and PostgreSQL keep byte-identical logs for the same events.
func (e AuditEvent) Line(prev string) ([]byte, error) {
	e.PrevSHA256 = prev
	e.At = e.At.UTC()
	if e.Freeze != nil {
		f := *e.Freeze
		f.GrantedAt = f.GrantedAt.UTC()
		e.Freeze = &f
	}
	if err := e.validate(); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// ParseAuditLine reads one audit line strictly: one JSON object with only
// the audit keys, a known action and a well-formed triple.
func ParseAuditLine(line []byte) (AuditEvent, error) {
	var e AuditEvent
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		return AuditEvent{}, Errorf(EINVALID, "not an audit event: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return AuditEvent{}, Errorf(EINVALID, "not an audit event: data after the object")
	}
	if err := e.validate(); err != nil {
		return AuditEvent{}, err
	}
	return e, nil
}

func (e AuditEvent) validate() error {
	switch e.Action {
	case ActionGrant, ActionSkip, ActionExpire, ActionVoid, ActionRevoke:
	default:
		return Errorf(EINVALID, "audit event: unknown action %q", e.Action)
	}
	if err := e.Triple.validate(); err != nil {
		return err
	}
	if e.RunsLeft < 0 {
		return Errorf(EINVALID, "audit event: runs_left is %d, want 0 or more", e.RunsLeft)
	}
	if e.PrevSHA256 != "" && !ValidSHA256(e.PrevSHA256) {
		return Errorf(EINVALID, "audit event: prev_sha256 %q is not a sha256", e.PrevSHA256)
	}
	if e.Action != ActionGrant {
		if e.Freeze != nil {
			return Errorf(EINVALID, "audit event: a %s event carries a freeze; only grant does", e.Action)
		}
		return nil
	}
	if e.Freeze == nil {
		return Errorf(EINVALID, "audit event: a grant event without its freeze")
	}
	if err := e.Freeze.Validate(); err != nil {
		return err
	}
	if e.Freeze.Triple() != e.Triple {
		return Errorf(EINVALID, "audit event: the grant's freeze names another triple")
	}
	if e.Freeze.ExpiresAfterRuns != e.RunsLeft {
		return Errorf(EINVALID, "audit event: grant runs_left %d differs from its freeze's %d", e.RunsLeft, e.Freeze.ExpiresAfterRuns)
	}
	return nil
}

// VerifyAuditChain checks that every line is an audit event and carries the
// sha256 of the line before it (the first line carries ""). The error names
// the first line that fails, counting from 1.
func VerifyAuditChain(lines [][]byte) error {
	prev := ""
	for i, line := range lines {
		e, err := ParseAuditLine(line)
		if err != nil {
			return auditLineError(i, err)
		}
		if e.PrevSHA256 != prev {
			what := "the line before it"
			if i == 0 {
				what = "nothing (it is the first line)"
				prev = `""`
			}
			return &Error{Code: EINVALID, Message: fmt.Sprintf(
				"audit log line %d: prev_sha256 is %s but %s hashes to %s: a line was changed, removed or inserted by hand",
				i+1, quoteEmpty(e.PrevSHA256), what, prev)}
		}
		prev = AuditLineSHA256(line)
	}
	return nil
}

// ReplayAudit applies every event, oldest first, to an empty ledger and
// returns the freezes it ends with, by Triple.Key. It does not check the
// chain (VerifyAuditChain does); it fails on the first event that does not
// follow from the ones before it, such as a skip that does not count down
// by one or an expire of a freeze that still has runs.
func ReplayAudit(lines [][]byte) (map[string]Freeze, error) {
	m := make(map[string]Freeze)
	for i, line := range lines {
		e, err := ParseAuditLine(line)
		if err != nil {
			return nil, auditLineError(i, err)
		}
		if err := ApplyAudit(m, e); err != nil {
			return nil, auditLineError(i, err)
		}
	}
	return m, nil
}

// ApplyAudit applies one event to the freezes in m (by Triple.Key): a grant
// writes its freeze, a skip sets the runs left (one less than before), an
// expire deletes a freeze with no runs left, a void or revoke deletes it
// (a void of an entry the log never granted, one added by hand, is
// allowed and changes nothing).
// Stores use it to roll a half-finished change forward.
func ApplyAudit(m map[string]Freeze, e AuditEvent) error {
	key := e.Triple.Key()
	f, ok := m[key]
	switch {
	case e.Action == ActionGrant:
		m[key] = *e.Freeze
		return nil
	case e.Action == ActionVoid || e.Action == ActionRevoke:
		// Voiding an entry added to the ledger by hand removes what the
		// log never granted: nothing to undo here.
		delete(m, key)
		return nil
	case !ok:
		return Errorf(EINVALID, "%s event for %s, which has no freeze", e.Action, e.Triple)
	}
	switch e.Action {
	case ActionSkip:
		if e.RunsLeft != f.ExpiresAfterRuns-1 {
			return Errorf(EINVALID, "skip event for %s leaves %d runs, but the freeze had %d", e.Triple, e.RunsLeft, f.ExpiresAfterRuns)
		}
		f.ExpiresAfterRuns = e.RunsLeft
		m[key] = f
	default: // expire
		if f.ExpiresAfterRuns != 0 || e.RunsLeft != 0 {
			return Errorf(EINVALID, "expire event for %s, which has %d runs left", e.Triple, f.ExpiresAfterRuns)
		}
		delete(m, key)
	}
	return nil
}

func auditLineError(i int, err error) error {
	return &Error{Code: EINVALID, Message: fmt.Sprintf("audit log line %d", i+1), Err: err}
}

func quoteEmpty(s string) string {
	if s == "" {
		return `""`
	}
	return s
}
