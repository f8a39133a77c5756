package postgres

import (
	"context"

	"github.com/flakegate/flakegate"
	"github.com/jackc/pgx/v5"
)

// chainHead is the locked head of the audit chain inside one transaction.
type chainHead struct {
	seq    int64
	sha256 string
}

// lockHead locks the chain head row for the rest of the transaction. Every
// ledger change takes this lock first, so ledger writers serialize and
// never deadlock.
func lockHead(ctx context.Context, tx pgx.Tx) (*chainHead, error) {
	h := &chainHead{}
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
	if _, err := tx.Exec(ctx, `INSERT INTO flakegate.audit (seq, line, sha256, prev_sha256) VALUES ($1, $2, $3, $4)`,
		next.seq, line, next.sha256, h.sha256); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `UPDATE flakegate.audit_head SET seq = $1, sha256 = $2 WHERE id`, next.seq, next.sha256); err != nil {
		return err
	}
	*h = next
	return nil
}

// AuditLines returns every event line, oldest first, as stored bytes.
func (s *Store) AuditLines(ctx context.Context) ([][]byte, error) {
	const op = "postgres audit lines"
	rows, err := s.pool.Query(ctx, `SELECT line FROM flakegate.audit ORDER BY seq`)
	if err != nil {
		return nil, s.FormatError(op, err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		return nil, s.FormatError(op, err)
	}
	return lines, nil
}
