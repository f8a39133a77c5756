package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/jackc/pgx/v5"
)

const freezeColumns = `label, property_path, seed, fixture_sha256, runs_left, owner,
	record_sha256, property_sha256, granted_at, granted_by, name, run_sha256, property_entry_sha256, candidate_sha`

// freezeMAC is the authenticator of a freeze row: every column but mac.
func (s *Store) freezeMAC(f flakegate.Freeze) []byte {
	return s.mac("freezes", freezeFields(f)...)
}

func freezeFields(f flakegate.Freeze) []string {
	return []string{string(f.Label), f.PropertyPath, f.Name, string(f.Seed), f.FixtureSHA256, strconv.Itoa(f.ExpiresAfterRuns),
		f.Owner, f.RecordSHA256, f.PropertySHA256, formatTime(f.GrantedAt.UTC()), f.GrantedBy, f.RunSHA256, f.PropertyEntrySHA256, f.CandidateSHA}
}

// macFreeze is a freeze row with its authenticator.
type macFreeze struct {
	flakegate.Freeze
	mac []byte
}

// tripleWhere selects one triple's row with the arguments $1..$4 of
// tripleArgs.
const tripleWhere = `property_path = $1 AND seed = $2 AND fixture_sha256 = $3 AND name = $4`

func tripleArgs(t flakegate.Triple) []any {
	return []any{t.PropertyPath, string(t.Seed), t.FixtureSHA256, t.Name}
}

// ListFreezes returns every freeze, sorted by triple.
func (s *Store) ListFreezes(ctx context.Context) ([]flakegate.Freeze, error) {
	const op = "postgres list freezes"
	// Sorted here, not by the database, so the order is Triple.Less's
	// (byte order) whatever the database's collation.
	rows, err := s.pool.Query(ctx, `SELECT `+freezeColumns+` FROM flakegate.freezes`)
	if err != nil {
		return nil, s.FormatError(op, err)
	}
	fs, err := pgx.CollectRows(rows, scanFreeze)
	if err != nil {
		return nil, s.FormatError(op, err)
	}
	flakegate.SortFreezes(fs)
	return fs, nil
}

// GetFreeze returns the freeze for t, or ENOTFOUND.
func (s *Store) GetFreeze(ctx context.Context, t flakegate.Triple) (flakegate.Freeze, error) {
	const op = "postgres get freeze"
	rows, err := s.pool.Query(ctx, `SELECT `+freezeColumns+`, mac FROM flakegate.freezes
		WHERE `+tripleWhere, tripleArgs(t)...)
	if err != nil {
		return flakegate.Freeze{}, s.FormatError(op, err)
	}
	f, err := pgx.CollectExactlyOneRow(rows, scanMACFreeze)
	if errors.Is(err, pgx.ErrNoRows) {
		return flakegate.Freeze{}, notFound(op, t)
	}
	if err != nil {
		return flakegate.Freeze{}, s.FormatError(op, err)
	}
	if !s.authentic(f.mac, "freezes", freezeFields(f.Freeze)...) {
		return flakegate.Freeze{}, s.refused(op, "the flakegate.freezes row of "+t.String())
	}
	return f.Freeze, nil
}

// Grant writes f and a grant event in one transaction. A freeze for the
// same triple is ECONFLICT unless replace is true.
func (s *Store) Grant(ctx context.Context, f flakegate.Freeze, replace bool) error {
	const op = "postgres grant"
	if err := f.Validate(); err != nil {
		return err
	}
	f.GrantedAt = f.GrantedAt.UTC()
	t := f.Triple()
	return s.inTx(ctx, op, func(tx pgx.Tx) error {
		head, err := s.lockHead(ctx, tx)
		if err != nil {
			return err
		}
		e := flakegate.AuditEvent{Action: flakegate.ActionGrant, At: s.Now(), By: f.GrantedBy,
			Triple: t, RunsLeft: f.ExpiresAfterRuns, Freeze: &f}
		// Every ledger writer holds the head lock: the row cannot change
		// between this read and the write below.
		var oldRecord string
		var oldRuns int
		err = tx.QueryRow(ctx, `SELECT record_sha256, runs_left FROM flakegate.freezes
			WHERE `+tripleWhere, tripleArgs(t)...).Scan(&oldRecord, &oldRuns)
		switch {
		case err == nil && !replace:
			return &flakegate.Error{Code: flakegate.ECONFLICT, Op: op, Path: t.String(),
				Message: "a freeze for this triple exists already", Hint: "pass --replace to overwrite it"}
		case err == nil:
			e.Reason = fmt.Sprintf("replaces the freeze of record %s with %d runs left", oldRecord, oldRuns)
		case !errors.Is(err, pgx.ErrNoRows):
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO flakegate.freezes (`+freezeColumns+`, mac)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
			ON CONFLICT (property_path, name, seed, fixture_sha256) DO UPDATE SET
				label = excluded.label, runs_left = excluded.runs_left, owner = excluded.owner,
				record_sha256 = excluded.record_sha256, property_sha256 = excluded.property_sha256,
				granted_at = excluded.granted_at, granted_by = excluded.granted_by,
				run_sha256 = excluded.run_sha256, property_entry_sha256 = excluded.property_entry_sha256,
				candidate_sha = excluded.candidate_sha, mac = excluded.mac`,
			string(f.Label), f.PropertyPath, string(f.Seed), f.FixtureSHA256, f.ExpiresAfterRuns,
			f.Owner, f.RecordSHA256, f.PropertySHA256, formatTime(f.GrantedAt), f.GrantedBy,
			f.Name, f.RunSHA256, f.PropertyEntrySHA256, f.CandidateSHA, s.freezeMAC(f)); err != nil {
			return err
		}
		return head.append(ctx, tx, e)
	})
}

// Consume counts one skip of t in one transaction: a single UPDATE
// decrements runs_left only where the freeze names recordSHA256 and has
// runs left, then a skip event is appended, and at zero the freeze is
// deleted with an expire event.
func (s *Store) Consume(ctx context.Context, t flakegate.Triple, recordSHA256, by string) (int, error) {
	const op = "postgres consume"
	left := 0
	err := s.inTx(ctx, op, func(tx pgx.Tx) error {
		head, err := s.lockHead(ctx, tx)
		if err != nil {
			return err
		}
		// Read the row under the head lock and check its authenticator
		// before counting: a skip must never re-authenticate a row that a
		// client without the key edited.
		rows, err := tx.Query(ctx, `SELECT `+freezeColumns+`, mac FROM flakegate.freezes
			WHERE `+tripleWhere+` AND record_sha256 = $5 AND runs_left > 0 FOR UPDATE`,
			append(tripleArgs(t), recordSHA256)...)
		if err != nil {
			return err
		}
		f, err := pgx.CollectExactlyOneRow(rows, scanMACFreeze)
		if errors.Is(err, pgx.ErrNoRows) {
			return &flakegate.Error{Code: flakegate.ENOTFOUND, Op: op, Path: t.String(),
				Message: "no freeze with runs left names this triple and record"}
		}
		if err != nil {
			return err
		}
		if !s.authentic(f.mac, "freezes", freezeFields(f.Freeze)...) {
			return s.refused(op, "the flakegate.freezes row of "+t.String())
		}
		f.ExpiresAfterRuns--
		left = f.ExpiresAfterRuns
		if _, err := tx.Exec(ctx, `UPDATE flakegate.freezes SET runs_left = $5, mac = $6 WHERE `+tripleWhere,
			append(tripleArgs(t), left, s.freezeMAC(f.Freeze))...); err != nil {
			return err
		}
		now := s.Now()
		if err := head.append(ctx, tx, flakegate.AuditEvent{
			Action: flakegate.ActionSkip, At: now, By: by, Triple: t, RunsLeft: left,
		}); err != nil {
			return err
		}
		if left > 0 {
			return nil
		}
		if _, err := tx.Exec(ctx, `DELETE FROM flakegate.freezes
			WHERE `+tripleWhere, tripleArgs(t)...); err != nil {
			return err
		}
		return head.append(ctx, tx, flakegate.AuditEvent{
			Action: flakegate.ActionExpire, At: now, By: by, Triple: t,
			Reason: "no runs left; the triple needs a new classification",
		})
	})
	if err != nil {
		return 0, err
	}
	return left, nil
}

// Remove deletes t's freeze with a void or revoke event.
func (s *Store) Remove(ctx context.Context, t flakegate.Triple, action flakegate.AuditAction, by, reason string) error {
	const op = "postgres remove"
	if action != flakegate.ActionVoid && action != flakegate.ActionRevoke {
		return &flakegate.Error{Code: flakegate.EINVALID, Op: op, Path: t.String(),
			Message: "action " + string(action) + " does not remove a freeze (want void or revoke)"}
	}
	return s.inTx(ctx, op, func(tx pgx.Tx) error {
		head, err := s.lockHead(ctx, tx)
		if err != nil {
			return err
		}
		var left int
		err = tx.QueryRow(ctx, `DELETE FROM flakegate.freezes
			WHERE `+tripleWhere+`
			RETURNING runs_left`, tripleArgs(t)...).Scan(&left)
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound(op, t)
		}
		if err != nil {
			return err
		}
		return head.append(ctx, tx, flakegate.AuditEvent{
			Action: action, At: s.Now(), By: by, Triple: t, RunsLeft: left, Reason: reason,
		})
	})
}

func scanFreeze(row pgx.CollectableRow) (flakegate.Freeze, error) {
	var f flakegate.Freeze
	var label, seed, grantedAt string
	err := row.Scan(&label, &f.PropertyPath, &seed, &f.FixtureSHA256, &f.ExpiresAfterRuns, &f.Owner,
		&f.RecordSHA256, &f.PropertySHA256, &grantedAt, &f.GrantedBy, &f.Name, &f.RunSHA256, &f.PropertyEntrySHA256, &f.CandidateSHA)
	if err != nil {
		return f, err
	}
	f.Label, f.Seed = flakegate.Label(label), flakegate.Seed(seed)
	if f.GrantedAt, err = parseTime(grantedAt); err != nil {
		return f, &flakegate.Error{Code: flakegate.EINTERNAL, Op: "postgres read freeze", Path: f.Triple().String(),
			Message: "granted_at " + grantedAt + " is not an RFC 3339 time"}
	}
	return f, nil
}

func scanMACFreeze(row pgx.CollectableRow) (macFreeze, error) {
	var f macFreeze
	var label, seed, grantedAt string
	err := row.Scan(&label, &f.PropertyPath, &seed, &f.FixtureSHA256, &f.ExpiresAfterRuns, &f.Owner,
		&f.RecordSHA256, &f.PropertySHA256, &grantedAt, &f.GrantedBy, &f.Name, &f.RunSHA256, &f.PropertyEntrySHA256, &f.CandidateSHA, &f.mac)
	if err != nil {
		return f, err
	}
	f.Label, f.Seed = flakegate.Label(label), flakegate.Seed(seed)
	if f.GrantedAt, err = parseTime(grantedAt); err != nil {
		return f, &flakegate.Error{Code: flakegate.EINTERNAL, Op: "postgres read freeze", Path: f.Triple().String(),
			Message: "granted_at " + grantedAt + " is not an RFC 3339 time"}
	}
	return f, nil
}

func notFound(op string, t flakegate.Triple) error {
	return &flakegate.Error{Code: flakegate.ENOTFOUND, Op: op, Path: t.String(), Message: "no freeze for this triple"}
}

func formatTime(t time.Time) string { return t.Format(time.RFC3339Nano) }

func parseTime(s string) (time.Time, error) { return time.Parse(time.RFC3339Nano, s) }
