package postgres

import (
	"context"
	"fmt"
	"strconv"

	"github.com/flakegate/flakegate"
	"github.com/jackc/pgx/v5"
)

// chainHead is the locked head of the audit chain inside one transaction.
type chainHead struct {
	seq    int64
	sha256 string
	store  *Store // authenticates the lines it appends
}

// lockHead locks the chain head row for the rest of the transaction. Every
// ledger change takes this lock first, so ledger writers serialize and
// never deadlock.
func (s *Store) lockHead(ctx context.Context, tx pgx.Tx) (*chainHead, error) {
	h := &chainHead{store: s}
	err := tx.QueryRow(ctx, `SELECT seq, sha256 FROM flakegate.audit_head WHERE id FOR UPDATE`).Scan(&h.seq, &h.sha256)
	return h, err
}

// append writes ev as the next line of the chain and moves the head.
func (h *chainHead) append(ctx context.Context, tx pgx.Tx, ev flakegate.AuditEvent) error {
	line, err := ev.Line(h.sha256)
	if err != nil {
		return err
	}
	next := chainHead{seq: h.seq + 1, sha256: flakegate.AuditLineSHA256(line)}
	if _, err := tx.Exec(ctx, `INSERT INTO flakegate.audit (seq, line, sha256, prev_sha256, mac) VALUES ($1, $2, $3, $4, $5)`,
		next.seq, line, next.sha256, h.sha256, h.store.mac("audit", strconv.FormatInt(next.seq, 10), string(line))); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `UPDATE flakegate.audit_head SET seq = $1, sha256 = $2 WHERE id`, next.seq, next.sha256); err != nil {
		return err
	}
	next.store = h.store
	*h = next
	return nil
}

// AuditLines returns every event line, oldest first, as stored bytes.
// With a key (UseKey), a line whose authenticator does not match is
// refused: the error names its seq and wraps flakegate.ErrUnauthenticated.
func (s *Store) AuditLines(ctx context.Context) ([][]byte, error) {
	const op = "postgres audit lines"
	rows, err := s.pool.Query(ctx, `SELECT seq, line, mac FROM flakegate.audit ORDER BY seq`)
	if err != nil {
		return nil, s.FormatError(op, err)
	}
	type auditRow struct {
		seq  int64
		line []byte
		mac  []byte
	}
	got, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (auditRow, error) {
		var r auditRow
		err := row.Scan(&r.seq, &r.line, &r.mac)
		return r, err
	})
	if err != nil {
		return nil, s.FormatError(op, err)
	}
	lines := make([][]byte, 0, len(got))
	for _, r := range got {
		if !s.authentic(r.mac, "audit", strconv.FormatInt(r.seq, 10), string(r.line)) {
			return nil, s.refused(op, fmt.Sprintf("the flakegate.audit row seq %d", r.seq))
		}
		lines = append(lines, r.line)
	}
	return lines, nil
}
