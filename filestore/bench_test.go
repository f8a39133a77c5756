package filestore

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/storetest"
)

// BenchmarkConsume measures one counted skip (lock, read, append to the
// log, atomic ledger write) with an audit log of the given length already
// on disk. The rewrite variant measures, side by side, how a change was
// written before the log was appended to: the whole log read, then
// rewritten to a temporary file and renamed, on every change.
func BenchmarkConsume(b *testing.B) {
	for _, lines := range []int{0, 10_000} {
		b.Run(fmt.Sprintf("log=%d", lines), func(b *testing.B) {
			benchConsume(b, lines, (*Store).Consume)
		})
	}
	for _, lines := range []int{0, 10_000} {
		b.Run(fmt.Sprintf("rewrite/log=%d", lines), func(b *testing.B) {
			benchConsume(b, lines, (*Store).consumeRewrite)
		})
	}
}

type consumeFunc func(s *Store, ctx context.Context, t flakegate.Triple, recordSHA256, by string) (int, error)

func benchConsume(b *testing.B, lines int, consume consumeFunc) {
	ctx := context.Background()
	s, err := Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	// A long history: grants and revokes of another triple, written as one
	// chained file that the first call rolls forward.
	other := storetest.Freeze("1", flakegate.MaxFreezeRuns)
	var log bytes.Buffer
	prev := ""
	for i := range lines {
		e := flakegate.AuditEvent{Action: flakegate.ActionGrant, At: time.Now(), By: "x", Triple: other.Triple(), RunsLeft: other.ExpiresAfterRuns, Freeze: &other}
		if i%2 == 1 {
			e = flakegate.AuditEvent{Action: flakegate.ActionRevoke, At: time.Now(), By: "x", Triple: other.Triple(), RunsLeft: other.ExpiresAfterRuns}
		}
		line, err := e.Line(prev)
		if err != nil {
			b.Fatal(err)
		}
		log.Write(line)
		log.WriteByte('\n')
		prev = flakegate.AuditLineSHA256(line)
	}
	if err := os.WriteFile(filepath.Join(s.Dir(), AuditFile), log.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	f := storetest.Freeze("1402", flakegate.MaxFreezeRuns)
	if err := s.Grant(ctx, f, true); err != nil { // rolls the history forward
		b.Fatal(err)
	}
	for i := 0; b.Loop(); i++ {
		if i > 0 && i%flakegate.MaxFreezeRuns == 0 {
			if err := s.Grant(ctx, f, true); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := consume(s, ctx, f.Triple(), f.RecordSHA256, "bench"); err != nil {
			b.Fatal(err)
		}
	}
}

// consumeRewrite is Consume as the store wrote it before appends: it reads
// the whole log under the lock and replaces it with the new lines added.
// The freeze changes as in Consume (consume); only the writing differs.
// Benchmarks only; it expects a log and ledger that agree.
func (s *Store) consumeRewrite(ctx context.Context, t flakegate.Triple, recordSHA256, by string) (int, error) {
	unlock, err := s.lock(ctx)
	if err != nil {
		return 0, err
	}
	defer unlock()
	doc, err := s.readLedger()
	if err != nil {
		return 0, err
	}
	st := &state{freezes: make(map[string]flakegate.Freeze, len(doc.Freezes))}
	for _, f := range doc.Freezes {
		st.freezes[f.Triple().Key()] = f
	}
	audit, err := os.ReadFile(filepath.Join(s.dir, AuditFile))
	if err != nil {
		return 0, err
	}
	st.setLog(audit)
	if st.head != doc.AuditHead {
		return 0, fmt.Errorf("log and ledger disagree")
	}
	left, events, err := s.consume(st, t, recordSHA256, by)
	if err != nil {
		return 0, err
	}
	buf := bytes.NewBuffer(make([]byte, 0, len(audit)+512*len(events)))
	buf.Write(audit)
	for _, e := range events {
		line, err := e.Line(st.head)
		if err != nil {
			return 0, err
		}
		buf.Write(line)
		buf.WriteByte('\n')
		st.head = flakegate.AuditLineSHA256(line)
	}
	if err := writeAtomic(s.dir, AuditFile, buf.Bytes()); err != nil {
		return 0, err
	}
	if err := s.writeLedger(st); err != nil {
		return 0, err
	}
	return left, nil
}
