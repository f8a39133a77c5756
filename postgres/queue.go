package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/jackc/pgx/v5"
)

var _ flakegate.GroupQueue = (*Store)(nil)

// maxProgressChecks bounds the checks Progress lists when no id is given.
const maxProgressChecks = 50

// Enqueue creates check c and its triples in one transaction, or, when a
// check of that id exists, compares it with c and changes nothing.
// Runners starting at once serialize on the check row's insert.
func (s *Store) Enqueue(ctx context.Context, c flakegate.QueuedCheck, triples []flakegate.QueuedTriple) (bool, error) {
	const op = "postgres enqueue check"
	switch {
	case strings.TrimSpace(c.ID) == "":
		return false, &flakegate.Error{Code: flakegate.EINVALID, Op: op, Message: "empty check id", Hint: "pass --check-id ID"}
	case len(triples) == 0:
		return false, &flakegate.Error{Code: flakegate.EINVALID, Op: op, Path: c.ID, Message: "a check without triples"}
	case c.TriplesSHA256 != flakegate.QueuedTriplesSHA256(triples):
		return false, &flakegate.Error{Code: flakegate.EINVALID, Op: op, Path: c.ID, Message: "triples_sha256 does not match the triples"}
	}
	created := false
	err := s.inTx(ctx, op, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO flakegate.checks (check_id, base_sha, candidate_sha, config_sha256,
				triples_sha256, triples, max_lease_expiries, created_by)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (check_id) DO NOTHING`,
			c.ID, c.BaseSHA, c.CandidateSHA, c.ConfigSHA256, c.TriplesSHA256, len(triples), c.MaxLeaseExpiries, c.CreatedBy)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			have, n, err := readCheck(ctx, tx, c.ID)
			if err != nil {
				return err
			}
			return sameCheck(have, n, c, len(triples))
		}
		created = true
		rows := make([][]any, len(triples))
		for i, t := range triples {
			rows[i] = []any{c.ID, t.ID, t.Position, t.PropertyPath, t.Name, string(t.Seed)}
		}
		_, err = tx.CopyFrom(ctx, pgx.Identifier{"flakegate", "check_triples"},
			[]string{"check_id", "triple_id", "position", "property_path", "name", "seed"}, pgx.CopyFromRows(rows))
		return err
	})
	return created, err
}

// sameCheck is nil when the stored check have (of n triples) is the one
// c describes; else an EINVALID error naming every difference.
func sameCheck(have flakegate.QueuedCheck, n int, c flakegate.QueuedCheck, triples int) error {
	var diffs []string
	differ := func(what, stored, given string) {
		if stored != given {
			diffs = append(diffs, fmt.Sprintf("%s %s (this runner: %s)", what, stored, given))
		}
	}
	differ("base", have.BaseSHA, c.BaseSHA)
	differ("candidate", have.CandidateSHA, c.CandidateSHA)
	differ("config digest", have.ConfigSHA256, c.ConfigSHA256)
	if have.TriplesSHA256 != c.TriplesSHA256 {
		diffs = append(diffs, fmt.Sprintf("%d triples %s (this runner: %d triples %s)", n, flakegate.ShortSHA(have.TriplesSHA256), triples, flakegate.ShortSHA(c.TriplesSHA256)))
	}
	if have.MaxLeaseExpiries != c.MaxLeaseExpiries {
		diffs = append(diffs, fmt.Sprintf("--max-lease-expiries %d (this runner: %d)", have.MaxLeaseExpiries, c.MaxLeaseExpiries))
	}
	if len(diffs) == 0 {
		return nil
	}
	return &flakegate.Error{Code: flakegate.EINVALID, Op: "check --join", Path: c.ID,
		Message: "this check id was created with " + strings.Join(diffs, ", ") + "; nothing was changed",
		Hint:    "every runner of one check passes the same --base, --candidate and config; use a new --check-id for another one"}
}

func readCheck(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, id string) (flakegate.QueuedCheck, int, error) {
	c := flakegate.QueuedCheck{ID: id}
	var n int
	err := q.QueryRow(ctx, `SELECT base_sha, candidate_sha, config_sha256, triples_sha256, triples,
			max_lease_expiries, created_by, created_at
		FROM flakegate.checks WHERE check_id = $1`, id).
		Scan(&c.BaseSHA, &c.CandidateSHA, &c.ConfigSHA256, &c.TriplesSHA256, &n, &c.MaxLeaseExpiries, &c.CreatedBy, &c.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return c, 0, unknownCheck(id)
	}
	return c, n, err
}

func unknownCheck(id string) error {
	return &flakegate.Error{Code: flakegate.ENOTFOUND, Op: "check queue", Path: id, Message: "no check with this id in the ledger",
		Hint: "pass the --check-id the runners were started with ('flakegate check --join' creates it)"}
}

// Claim takes the first claimable triple of the check: queued, or
// claimed under a lease that has expired (by the server's clock). Rows
// other runners are claiming at this moment are skipped (SKIP LOCKED).
// Taking over an expired lease counts an expiry against the triple.
func (s *Store) Claim(ctx context.Context, checkID string, r flakegate.Runner, lease time.Duration) (flakegate.TripleLease, bool, error) {
	l, ok, err := claimFirst(ctx, s.pool, checkID, r, lease)
	if err != nil {
		return flakegate.TripleLease{}, false, s.FormatError("postgres claim triple", err)
	}
	return l, ok, nil
}

// rowQuerier is a pool or a transaction.
type rowQuerier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// claimFirst is Claim's statement, on q.
func claimFirst(ctx context.Context, q rowQuerier, checkID string, r flakegate.Runner, lease time.Duration) (flakegate.TripleLease, bool, error) {
	l := flakegate.TripleLease{Token: newToken()}
	err := q.QueryRow(ctx, `
		WITH pick AS (
			SELECT triple_id, state FROM flakegate.check_triples
			WHERE check_id = $1 AND (state = 'queued' OR (state = 'claimed' AND lease_expires < now()))
			ORDER BY position LIMIT 1
			FOR UPDATE SKIP LOCKED)
		UPDATE flakegate.check_triples t SET
			state = 'claimed', lease_token = $2, runner_id = $3, runner_host = $4,
			lease_expires = now() + $5 * interval '1 millisecond',
			claims = t.claims + 1,
			expiries = t.expiries + CASE WHEN pick.state = 'claimed' THEN 1 ELSE 0 END,
			expired_runners = CASE WHEN pick.state = 'claimed' THEN t.expired_runners || coalesce(t.runner_id, '') ELSE t.expired_runners END
		FROM pick
		WHERE t.check_id = $1 AND t.triple_id = pick.triple_id
		RETURNING t.triple_id, t.position, t.expiries, t.expired_runners`,
		checkID, l.Token, r.ID, r.Host, lease.Milliseconds()).Scan(&l.TripleID, &l.Position, &l.Expiries, &l.Runners)
	if errors.Is(err, pgx.ErrNoRows) {
		return flakegate.TripleLease{}, false, nil
	}
	if err != nil {
		return flakegate.TripleLease{}, false, err
	}
	return l, true, nil
}

// ClaimGroup claims the first claimable triple (Claim's statement) and,
// in the same transaction, the claimable triples of its group, each
// under its own token. The group claims of one check are serialized by
// a transaction's advisory lock (a few milliseconds). An expired lease taken over counts an expiry
// against its triple, as in Claim; rows other runners are claiming at
// this moment are skipped (SKIP LOCKED).
func (s *Store) ClaimGroup(ctx context.Context, checkID string, r flakegate.Runner, lease time.Duration, group func(position int) []int) ([]flakegate.TripleLease, error) {
	const op = "postgres claim batch"
	var out []flakegate.TripleLease
	err := s.inTx(ctx, op, func(tx pgx.Tx) error {
		out = nil
		// Group claims of one check take turns (a lock held for two
		// statements), so that another runner's claim never takes a
		// triple out of a batch between its first triple and the rest.
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('flakegate claim ' || $1, 0))`, checkID); err != nil {
			return err
		}
		first, ok, err := claimFirst(ctx, tx, checkID, r, lease)
		if err != nil || !ok {
			return err
		}
		out = append(out, first)
		var positions []int32
		var tokens []string
		for _, p := range group(first.Position) {
			if p != first.Position && p >= 0 && !slices.Contains(positions, int32(p)) {
				positions = append(positions, int32(p))
				tokens = append(tokens, newToken())
			}
		}
		if len(positions) == 0 {
			return nil
		}
		rows, err := tx.Query(ctx, `
			WITH want AS (SELECT * FROM unnest($5::integer[], $6::text[]) AS w(position, token)),
			pick AS (
				SELECT t.triple_id, t.state, want.token FROM flakegate.check_triples t JOIN want ON t.position = want.position
				WHERE t.check_id = $1 AND (t.state = 'queued' OR (t.state = 'claimed' AND t.lease_expires < now()))
				FOR UPDATE OF t SKIP LOCKED)
			UPDATE flakegate.check_triples t SET
				state = 'claimed', lease_token = pick.token, runner_id = $2, runner_host = $3,
				lease_expires = now() + $4 * interval '1 millisecond',
				claims = t.claims + 1,
				expiries = t.expiries + CASE WHEN pick.state = 'claimed' THEN 1 ELSE 0 END,
				expired_runners = CASE WHEN pick.state = 'claimed' THEN t.expired_runners || coalesce(t.runner_id, '') ELSE t.expired_runners END
			FROM pick
			WHERE t.check_id = $1 AND t.triple_id = pick.triple_id
			RETURNING t.triple_id, t.position, t.lease_token, t.expiries, t.expired_runners`,
			checkID, r.ID, r.Host, lease.Milliseconds(), positions, tokens)
		if err != nil {
			return err
		}
		var rest []flakegate.TripleLease
		for rows.Next() {
			var l flakegate.TripleLease
			if err := rows.Scan(&l.TripleID, &l.Position, &l.Token, &l.Expiries, &l.Runners); err != nil {
				rows.Close()
				return err
			}
			rest = append(rest, l)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		sort.Slice(rest, func(i, k int) bool { return rest[i].Position < rest[k].Position })
		out = append(out, rest...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Renew extends l's lease from now, if l.Token still holds it.
func (s *Store) Renew(ctx context.Context, checkID string, l flakegate.TripleLease, lease time.Duration) error {
	const op = "postgres renew lease"
	tag, err := s.pool.Exec(ctx, `UPDATE flakegate.check_triples SET lease_expires = now() + $4 * interval '1 millisecond'
		WHERE check_id = $1 AND triple_id = $2 AND lease_token = $3 AND state = 'claimed'`,
		checkID, l.TripleID, l.Token, lease.Milliseconds())
	if err != nil {
		return s.FormatError(op, err)
	}
	if tag.RowsAffected() == 0 {
		return leaseLost(op, checkID, l)
	}
	return nil
}

func leaseLost(op, checkID string, l flakegate.TripleLease) error {
	return &flakegate.Error{Code: flakegate.ECONFLICT, Op: op, Path: checkID + " " + l.TripleID,
		Message: "the lease is no longer this runner's: it expired and another runner took the triple"}
}

// Complete labels l's triple if l.Token still holds its lease, and stores
// the record, in one transaction.
func (s *Store) Complete(ctx context.Context, checkID string, l flakegate.TripleLease, res flakegate.Result, raw []byte) error {
	const op = "postgres label triple"
	line, err := json.Marshal(res)
	if err != nil {
		return &flakegate.Error{Code: flakegate.EINTERNAL, Op: op, Message: "cannot encode the result", Err: err}
	}
	if raw != nil && !flakegate.ValidSHA256(res.RecordSHA256) {
		return &flakegate.Error{Code: flakegate.EINVALID, Op: op, Path: res.RecordSHA256, Message: "not a sha256"}
	}
	return s.inTx(ctx, op, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE flakegate.check_triples SET
				state = 'done', label = $4, record_sha256 = $5, result = $6, done_at = now(),
				lease_token = NULL, lease_expires = NULL, mac = $7
			WHERE check_id = $1 AND triple_id = $2 AND lease_token = $3 AND state = 'claimed'`,
			checkID, l.TripleID, l.Token, string(res.Label), res.RecordSHA256, line,
			s.mac("check_triples", checkID, l.TripleID, string(res.Label), res.RecordSHA256, string(line)))
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return leaseLost(op, checkID, l)
		}
		if raw == nil {
			return nil
		}
		_, err = tx.Exec(ctx, `INSERT INTO flakegate.records (record_sha256, raw, mac) VALUES ($1, $2, $3)
			ON CONFLICT (record_sha256) DO NOTHING`, res.RecordSHA256, raw, s.mac("records", res.RecordSHA256, string(raw)))
		return err
	})
}

// CheckState returns the check and its triples in position order.
func (s *Store) CheckState(ctx context.Context, checkID string) (flakegate.QueuedCheck, []flakegate.QueuedTripleState, error) {
	const op = "postgres read check"
	c, _, err := readCheck(ctx, s.pool, checkID)
	if err != nil {
		return c, nil, s.FormatError(op, err)
	}
	rows, err := s.pool.Query(ctx, `SELECT triple_id, position, property_path, name, seed, state,
			coalesce(runner_id, ''), coalesce(runner_host, ''), expiries, result,
			coalesce(label, ''), coalesce(record_sha256, ''), mac
		FROM flakegate.check_triples WHERE check_id = $1 ORDER BY position`, checkID)
	if err != nil {
		return c, nil, s.FormatError(op, err)
	}
	ts, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (flakegate.QueuedTripleState, error) {
		var t flakegate.QueuedTripleState
		var seed, label, recordSHA string
		var result, mac []byte
		err := row.Scan(&t.ID, &t.Position, &t.PropertyPath, &t.Name, &seed, &t.State,
			&t.Runner.ID, &t.Runner.Host, &t.Expiries, &result, &label, &recordSHA, &mac)
		t.Seed = flakegate.Seed(seed)
		if result != nil {
			t.Result = json.RawMessage(result)
		}
		if err == nil && t.State == "done" && !s.authentic(mac, "check_triples", checkID, t.ID, label, recordSHA, string(result)) {
			// A label a client that can only write the database set.
			return t, s.refused(op, "the flakegate.check_triples row of check "+checkID+" triple "+t.ID)
		}
		return t, err
	})
	if err != nil {
		return c, nil, s.FormatError(op, err)
	}
	return c, ts, nil
}

// Progress counts the triples of checkID (or of the newest checks) by
// state and runner.
func (s *Store) Progress(ctx context.Context, checkID string) ([]flakegate.CheckProgress, error) {
	const op = "postgres check progress"
	byID := map[string]*flakegate.CheckProgress{}
	runners := map[string]map[string]*flakegate.RunnerProgress{}
	var order []string
	rows, err := s.pool.Query(ctx, `
		WITH c AS (
			SELECT * FROM flakegate.checks WHERE $1 = '' OR check_id = $1
			ORDER BY created_at DESC, check_id LIMIT $2)
		SELECT c.check_id, c.base_sha, c.candidate_sha, c.config_sha256, c.triples_sha256, c.triples,
			c.max_lease_expiries, c.created_by, c.created_at,
			t.state, coalesce(t.runner_id, ''), coalesce(t.runner_host, ''), count(*)
		FROM c JOIN flakegate.check_triples t ON t.check_id = c.check_id
		GROUP BY c.check_id, c.base_sha, c.candidate_sha, c.config_sha256, c.triples_sha256, c.triples,
			c.max_lease_expiries, c.created_by, c.created_at, t.state, t.runner_id, t.runner_host`,
		checkID, maxProgressChecks)
	if err != nil {
		return nil, s.FormatError(op, err)
	}
	defer rows.Close()
	for rows.Next() {
		var c flakegate.QueuedCheck
		var total, n int
		var state, rid, rhost string
		if err := rows.Scan(&c.ID, &c.BaseSHA, &c.CandidateSHA, &c.ConfigSHA256, &c.TriplesSHA256, &total,
			&c.MaxLeaseExpiries, &c.CreatedBy, &c.CreatedAt, &state, &rid, &rhost, &n); err != nil {
			return nil, s.FormatError(op, err)
		}
		p, ok := byID[c.ID]
		if !ok {
			p = &flakegate.CheckProgress{Check: c, Total: total}
			byID[c.ID] = p
			runners[c.ID] = map[string]*flakegate.RunnerProgress{}
			order = append(order, c.ID)
		}
		switch state {
		case flakegate.TripleQueued:
			p.Queued += n
			continue
		case flakegate.TripleClaimed:
			p.Claimed += n
		case flakegate.TripleDone:
			p.Done += n
		}
		rp, ok := runners[c.ID][rid]
		if !ok {
			rp = &flakegate.RunnerProgress{Runner: flakegate.Runner{ID: rid, Host: rhost}}
			runners[c.ID][rid] = rp
		}
		if state == flakegate.TripleClaimed {
			rp.Claimed += n
		} else {
			rp.Done += n
		}
	}
	if err := rows.Err(); err != nil {
		return nil, s.FormatError(op, err)
	}
	if checkID != "" && len(order) == 0 {
		return nil, unknownCheck(checkID)
	}
	out := make([]flakegate.CheckProgress, 0, len(order))
	for _, id := range order {
		p := byID[id]
		for _, rp := range runners[id] {
			p.Runners = append(p.Runners, *rp)
		}
		sort.Slice(p.Runners, func(i, j int) bool { return p.Runners[i].ID < p.Runners[j].ID })
		out = append(out, *p)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].Check.CreatedAt.Equal(out[j].Check.CreatedAt) {
			return out[i].Check.CreatedAt.After(out[j].Check.CreatedAt)
		}
		return out[i].Check.ID < out[j].Check.ID
	})
	return out, nil
}

// newToken returns a lease token: 16 random bytes in hex.
func newToken() string {
	var b [16]byte
	rand.Read(b[:]) //nolint:errcheck // never fails
	return hex.EncodeToString(b[:])
}
