package postgres

import (
	"context"
	"errors"

	"github.com/flakegate/flakegate"
	"github.com/jackc/pgx/v5"
)

// corpusLock is the key of the advisory lock that serializes the
// corpus's changes: a new seed's bounds are counted, and an epoch drawn,
// by one transaction at a time.
const corpusLock = 0x636f72707573 // "corpus"

// corpusEpoch is the corpus's epoch: the newest base's, 0 before any.
const corpusEpoch = `SELECT coalesce(max(epoch), 0) FROM flakegate.corpus_bases`

// CorpusBase says that a check runs on base: a base not among the last
// 2*MaxCorpusAge seen makes the corpus one base older, and the seeds
// whose newest failure is MaxCorpusAge bases old leave.
func (s *Store) CorpusBase(ctx context.Context, base string) (int, error) {
	const op = "postgres corpus base"
	if base == "" {
		return 0, flakegate.Errorf(flakegate.EINVALID, "failure corpus: empty base")
	}
	removed := 0
	err := s.inTx(ctx, op, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(corpusLock)); err != nil {
			return err
		}
		var seen bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM flakegate.corpus_bases WHERE base_sha = $1)`, base).Scan(&seen); err != nil || seen {
			return err
		}
		var epoch int64
		if err := tx.QueryRow(ctx, corpusEpoch).Scan(&epoch); err != nil {
			return err
		}
		epoch++
		if _, err := tx.Exec(ctx, `INSERT INTO flakegate.corpus_bases (base_sha, epoch) VALUES ($1, $2)`, base, epoch); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM flakegate.corpus_bases WHERE epoch <= $1`, epoch-2*flakegate.MaxCorpusAge); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `DELETE FROM flakegate.failure_corpus WHERE failed_epoch + $1 <= $2`, int64(flakegate.MaxCorpusAge), epoch)
		removed = int(tag.RowsAffected())
		return err
	})
	return removed, err
}

// AddFailure records a failing seed of the property key in one
// transaction, under the corpus's lock: a seed held already is renewed
// when the failure is newer; a new one is added within the bounds, or
// refused.
func (s *Store) AddFailure(ctx context.Context, key string, e flakegate.CorpusEntry) (flakegate.CorpusAdd, error) {
	const op = "postgres add failure"
	if err := flakegate.ValidateCorpusEntry(key, e); err != nil {
		return "", err
	}
	at := e.FailedAt.UTC().Format(flakegate.CorpusTime)
	var did flakegate.CorpusAdd
	err := s.inTx(ctx, op, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(corpusLock)); err != nil {
			return err
		}
		var epoch int64
		if err := tx.QueryRow(ctx, corpusEpoch).Scan(&epoch); err != nil {
			return err
		}
		var old string
		err := tx.QueryRow(ctx, `SELECT failed_at FROM flakegate.failure_corpus WHERE corpus_key = $1 AND seed = $2`, key, string(e.Seed)).Scan(&old)
		switch {
		case err == nil && at <= old:
			did = flakegate.CorpusUnchanged
			return nil
		case err == nil:
			did = flakegate.CorpusRenewed
			_, err = tx.Exec(ctx, `UPDATE flakegate.failure_corpus SET candidate_sha = $3, failed_at = $4, failed_epoch = $5
				WHERE corpus_key = $1 AND seed = $2`, key, string(e.Seed), e.CandidateSHA, at, epoch)
			return err
		case !errors.Is(err, pgx.ErrNoRows):
			return err
		}
		var mine, inKey, total int
		if err = tx.QueryRow(ctx, `SELECT count(*) FILTER (WHERE corpus_key = $1 AND added_by = $2), count(*) FILTER (WHERE corpus_key = $1), count(*)
			FROM flakegate.failure_corpus`, key, e.CandidateSHA).Scan(&mine, &inKey, &total); err != nil {
			return err
		}
		switch {
		case mine > 0:
			did = flakegate.CorpusOnePerCandidate
		case inKey >= flakegate.MaxCorpusSeeds:
			did = flakegate.CorpusKeyFull
		case total >= flakegate.MaxCorpusTotal:
			did = flakegate.CorpusFull
		default:
			did = flakegate.CorpusAdded
			_, err = tx.Exec(ctx, `INSERT INTO flakegate.failure_corpus (corpus_key, seed, first_base_sha, candidate_sha, failed_at, added_by, failed_epoch)
				VALUES ($1, $2, $3, $4, $5, $4, $6)`, key, string(e.Seed), e.FirstBaseSHA, e.CandidateSHA, at, epoch)
		}
		return err
	})
	if err != nil {
		return "", err
	}
	return did, nil
}

// Failures returns key's corpus, the most recently failed first.
func (s *Store) Failures(ctx context.Context, key string) ([]flakegate.CorpusEntry, error) {
	const op = "postgres failures"
	rows, err := s.pool.Query(ctx, `SELECT seed, first_base_sha, candidate_sha, failed_at, added_by, failed_epoch FROM flakegate.failure_corpus
		WHERE corpus_key = $1 ORDER BY failed_at DESC, seed LIMIT $2`, key, flakegate.MaxCorpusSeeds)
	if err != nil {
		return nil, s.FormatError(op, err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (flakegate.CorpusEntry, error) {
		var e flakegate.CorpusEntry
		var seed, at string
		if err := row.Scan(&seed, &e.FirstBaseSHA, &e.CandidateSHA, &at, &e.AddedBy, &e.FailedEpoch); err != nil {
			return e, err
		}
		e.Seed = flakegate.Seed(seed)
		var err error
		e.FailedAt, err = parseTime(at)
		return e, err
	})
	if err != nil {
		return nil, s.FormatError(op, err)
	}
	return out, nil
}
