package postgres

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/jackc/pgx/v5"
)

// PutRecord stores raw under sha; a sha stored already keeps its first
// bytes.
func (s *Store) PutRecord(ctx context.Context, sha string, raw []byte) error {
	const op = "postgres put record"
	if !flakegate.ValidSHA256(sha) {
		return &flakegate.Error{Code: flakegate.EINVALID, Op: op, Path: sha, Message: "not a sha256"}
	}
	if raw == nil {
		raw = []byte{} // bytea NOT NULL: an empty record is still a record
	}
	mac := s.mac("records", sha, string(raw))
	_, err := s.pool.Exec(ctx, `INSERT INTO flakegate.records (record_sha256, raw, mac) VALUES ($1, $2, $3)
		ON CONFLICT (record_sha256) DO NOTHING`, sha, raw, mac)
	if err != nil || mac == nil {
		return s.FormatError(op, err)
	}
	// A row that was there first without a valid authenticator is not a
	// record this ledger wrote: the bytes that hash to sha replace it.
	var stored, storedMAC []byte
	if err := s.pool.QueryRow(ctx, `SELECT raw, mac FROM flakegate.records WHERE record_sha256 = $1`, sha).Scan(&stored, &storedMAC); err != nil {
		return s.FormatError(op, err)
	}
	if s.authentic(storedMAC, "records", sha, string(stored)) {
		return nil
	}
	_, err = s.pool.Exec(ctx, `UPDATE flakegate.records SET raw = $2, mac = $3 WHERE record_sha256 = $1 AND mac IS NOT DISTINCT FROM $4`,
		sha, raw, mac, storedMAC)
	return s.FormatError(op, err)
}

// GetRecord returns the bytes stored under sha, or ENOTFOUND.
func (s *Store) GetRecord(ctx context.Context, sha string) ([]byte, error) {
	const op = "postgres get record"
	if !flakegate.ValidSHA256(sha) {
		return nil, &flakegate.Error{Code: flakegate.EINVALID, Op: op, Path: sha, Message: "not a sha256"}
	}
	var raw, mac []byte
	err := s.pool.QueryRow(ctx, `SELECT raw, mac FROM flakegate.records WHERE record_sha256 = $1`, sha).Scan(&raw, &mac)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, &flakegate.Error{Code: flakegate.ENOTFOUND, Op: op, Path: sha, Message: "no such record"}
	}
	if err != nil {
		return nil, s.FormatError(op, err)
	}
	if !s.authentic(mac, "records", sha, string(raw)) {
		return nil, s.refused(op, "the flakegate.records row "+sha)
	}
	if raw == nil {
		raw = []byte{}
	}
	return raw, nil
}

// recordPage is how many records EachRecord reads per query.
const recordPage = 64

// EachRecord calls fn for every stored record, in record_sha256 order,
// until fn returns an error (which it returns). With a key (UseKey) a row
// whose authenticator does not match is left out: it is no record of
// this ledger (a forged base failure must not become history). It reads the records a page
// at a time and holds no connection while fn runs, so fn may use the store.
func (s *Store) EachRecord(ctx context.Context, fn func(sha string, raw []byte) error) error {
	const op = "postgres each record"
	type rec struct {
		sha      string
		raw, mac []byte
	}
	after := "" // every stored sha is longer
	for {
		rows, err := s.pool.Query(ctx, `SELECT record_sha256, raw, mac FROM flakegate.records
			WHERE record_sha256 > $1 ORDER BY record_sha256 LIMIT $2`, after, recordPage)
		if err != nil {
			return s.FormatError(op, err)
		}
		page, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (rec, error) {
			var r rec
			err := row.Scan(&r.sha, &r.raw, &r.mac)
			return r, err
		})
		if err != nil {
			return s.FormatError(op, err)
		}
		for _, r := range page {
			if r.raw == nil {
				r.raw = []byte{}
			}
			if !s.authentic(r.mac, "records", r.sha, string(r.raw)) {
				continue
			}
			if err := fn(r.sha, r.raw); err != nil {
				return err
			}
		}
		if len(page) < recordPage {
			return nil
		}
		after = page[len(page)-1].sha
	}
}

// GetReplay returns the base result stored under key, if any.
func (s *Store) GetReplay(ctx context.Context, key string) (flakegate.BaseReplay, bool, error) {
	const op = "postgres get replay"
	r, mac, err := s.getReplay(ctx, key)
	if errors.Is(err, pgx.ErrNoRows) {
		return flakegate.BaseReplay{}, false, nil
	}
	if err != nil {
		return flakegate.BaseReplay{}, false, s.FormatError(op, err)
	}
	if !s.authentic(mac, "replays", replayFields(key, r)...) {
		// Not a result this ledger stored: the base runs again, and
		// PutReplay replaces the row.
		return flakegate.BaseReplay{}, false, nil
	}
	return r, true, nil
}

// PutReplay stores r under key unless a result is there already, and
// returns the stored (first) result. Insert-if-absent is one statement, so
// across runners the first base result wins.
func (s *Store) PutReplay(ctx context.Context, key string, r flakegate.BaseReplay) (flakegate.BaseReplay, error) {
	const op = "postgres put replay"
	if key == "" {
		return flakegate.BaseReplay{}, &flakegate.Error{Code: flakegate.EINVALID, Op: op, Message: "empty replay key"}
	}
	r.At = r.At.UTC()
	mac := s.mac("replays", replayFields(key, r)...)
	if _, err := s.pool.Exec(ctx, `INSERT INTO flakegate.replays (replay_key, result, wall_seconds, run_id, at, mac)
		VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (replay_key) DO NOTHING`,
		key, r.Result, r.WallSeconds, r.RunID, formatTime(r.At), mac); err != nil {
		return flakegate.BaseReplay{}, s.FormatError(op, err)
	}
	// A row, once there, is never changed or deleted: reading it back
	// after the insert returns the winner. With a key, a row without a
	// valid authenticator is no result of this ledger: it is replaced,
	// once, by this one.
	stored, storedMAC, err := s.getReplay(ctx, key)
	if err != nil {
		return flakegate.BaseReplay{}, s.FormatError(op, err)
	}
	if s.authentic(storedMAC, "replays", replayFields(key, stored)...) {
		return stored, nil
	}
	if _, err := s.pool.Exec(ctx, `UPDATE flakegate.replays SET result = $2, wall_seconds = $3, run_id = $4, at = $5, mac = $6
		WHERE replay_key = $1 AND mac IS NOT DISTINCT FROM $7`,
		key, r.Result, r.WallSeconds, r.RunID, formatTime(r.At), mac, storedMAC); err != nil {
		return flakegate.BaseReplay{}, s.FormatError(op, err)
	}
	stored, storedMAC, err = s.getReplay(ctx, key)
	if err != nil {
		return flakegate.BaseReplay{}, s.FormatError(op, err)
	}
	if !s.authentic(storedMAC, "replays", replayFields(key, stored)...) {
		return flakegate.BaseReplay{}, s.refused(op, "the flakegate.replays row "+key)
	}
	return stored, nil
}

func (s *Store) getReplay(ctx context.Context, key string) (flakegate.BaseReplay, []byte, error) {
	var r flakegate.BaseReplay
	var at string
	var mac []byte
	err := s.pool.QueryRow(ctx, `SELECT result, wall_seconds, run_id, at, mac FROM flakegate.replays WHERE replay_key = $1`, key).
		Scan(&r.Result, &r.WallSeconds, &r.RunID, &at, &mac)
	if err != nil {
		return r, nil, err
	}
	if r.At, err = parseTime(at); err != nil {
		return r, nil, &flakegate.Error{Code: flakegate.EINTERNAL, Op: "postgres get replay", Path: key,
			Message: "stored time " + at + " is not an RFC 3339 time"}
	}
	return r, mac, nil
}

// replayFields are what a replay row's authenticator covers.
func replayFields(key string, r flakegate.BaseReplay) []string {
	return []string{key, r.Result, strconv.FormatFloat(r.WallSeconds, 'g', -1, 64), r.RunID, formatTime(r.At.UTC())}
}

// LockReplay takes a session advisory lock on a 64-bit hash of key
// (hashtextextended) on a session of its own, so that checks on every
// runner sharing the database replay one key's base once. The wait has
// no lock_timeout (a base replay may take longer than a ledger change);
// ctx bounds it. release unlocks and returns the session; a session that
// cannot unlock, or whose wait was given up, is closed, and the server
// drops its locks with it, so no lock outlives its holder.
func (s *Store) LockReplay(ctx context.Context, key string) (func(), error) {
	const op = "postgres lock replay"
	if key == "" {
		return nil, &flakegate.Error{Code: flakegate.EINVALID, Op: op, Message: "empty replay key"}
	}
	conn, err := s.lockPool.Acquire(ctx)
	if err != nil {
		return nil, s.FormatError(op, err)
	}
	drop := func() {
		closeCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		conn.Conn().Close(closeCtx) //nolint:errcheck // the session is discarded either way
		conn.Release()
	}
	tx, err := conn.Begin(ctx)
	if err == nil {
		_, err = tx.Exec(ctx, `SET LOCAL lock_timeout = 0`)
	}
	if err == nil {
		_, err = tx.Exec(ctx, `SELECT pg_advisory_lock(hashtextextended($1, 0))`, key)
	}
	if err == nil {
		err = tx.Commit(ctx) // a session lock outlives the transaction
	}
	if err != nil {
		// The lock may have been granted as the wait was cut short.
		drop()
		return nil, s.FormatError(op, err)
	}
	return sync.OnceFunc(func() {
		unlockCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var unlocked bool
		if err := conn.QueryRow(unlockCtx, `SELECT pg_advisory_unlock(hashtextextended($1, 0))`, key).Scan(&unlocked); err != nil || !unlocked {
			drop()
			return
		}
		conn.Release()
	}), nil
}
