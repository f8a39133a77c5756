package postgres

import (
	"context"

	"github.com/flakegate/flakegate"
	"github.com/jackc/pgx/v5"
)

// AddFailure records a failing seed of the property key in one
// statement, then drops the key's least recently failed seeds beyond
// flakegate.MaxCorpusSeeds.
func (s *Store) AddFailure(ctx context.Context, key string, e flakegate.CorpusEntry) error {
	const op = "postgres add failure"
	if err := flakegate.ValidateCorpusEntry(key, e); err != nil {
		return err
	}
	at := e.FailedAt.UTC().Format(flakegate.CorpusTime)
	return s.inTx(ctx, op, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO flakegate.failure_corpus (corpus_key, seed, first_base_sha, candidate_sha, failed_at)
			VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (corpus_key, seed) DO UPDATE SET candidate_sha = excluded.candidate_sha, failed_at = excluded.failed_at
			WHERE excluded.failed_at > flakegate.failure_corpus.failed_at`,
			key, string(e.Seed), e.FirstBaseSHA, e.CandidateSHA, at); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DELETE FROM flakegate.failure_corpus WHERE corpus_key = $1 AND seed NOT IN (
			SELECT seed FROM flakegate.failure_corpus WHERE corpus_key = $1 ORDER BY failed_at DESC, seed LIMIT $2)`,
			key, flakegate.MaxCorpusSeeds)
		return err
	})
}

// Failures returns key's corpus, the most recently failed first.
func (s *Store) Failures(ctx context.Context, key string) ([]flakegate.CorpusEntry, error) {
	const op = "postgres failures"
	rows, err := s.pool.Query(ctx, `SELECT seed, first_base_sha, candidate_sha, failed_at FROM flakegate.failure_corpus
		WHERE corpus_key = $1 ORDER BY failed_at DESC, seed LIMIT $2`, key, flakegate.MaxCorpusSeeds)
	if err != nil {
		return nil, s.FormatError(op, err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (flakegate.CorpusEntry, error) {
		var e flakegate.CorpusEntry
		var seed, at string
		if err := row.Scan(&seed, &e.FirstBaseSHA, &e.CandidateSHA, &at); err != nil {
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
