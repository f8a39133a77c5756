package postgres

import (
	"context"
	"crypto/rand"
	"errors"

	"github.com/flakegate/flakegate"
	"github.com/jackc/pgx/v5"
)

// SeedSecret returns the database's seed secret (flakegate.seed_secret).
// The first call on a database inserts 32 random bytes unless a row is
// there already (ON CONFLICT DO NOTHING), then reads the row: runners that
// start at once all get the one secret that was stored. The row is never
// updated.
//
// With a ledger key (UseKey) the secret is derived from the key instead,
// and the table is not touched: whoever can read the database cannot
// read the secret.
func (s *Store) SeedSecret(ctx context.Context) ([]byte, error) {
	const op = "postgres seed secret"
	if s.seedSecret != nil {
		return append([]byte(nil), s.seedSecret...), nil
	}
	if secret, ok, err := s.readSecret(ctx, op); ok || err != nil {
		return secret, err
	}
	fresh := make([]byte, flakegate.SeedSecretSize)
	rand.Read(fresh) //nolint:errcheck // crypto/rand.Read never fails
	if _, err := s.pool.Exec(ctx, `INSERT INTO flakegate.seed_secret (id, secret) VALUES (true, $1)
		ON CONFLICT (id) DO NOTHING`, fresh); err != nil {
		return nil, s.FormatError(op, err)
	}
	secret, ok, err := s.readSecret(ctx, op)
	if err == nil && !ok {
		err = &flakegate.Error{Code: flakegate.EINTERNAL, Op: op, Path: s.redacted, Message: "no seed secret after storing one"}
	}
	return secret, err
}

// readSecret reads the stored secret: ok is false, with no error, when
// there is none yet. Errors never quote the secret.
func (s *Store) readSecret(ctx context.Context, op string) (secret []byte, ok bool, err error) {
	err = s.pool.QueryRow(ctx, `SELECT secret FROM flakegate.seed_secret WHERE id`).Scan(&secret)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, s.FormatError(op, err)
	}
	if len(secret) != flakegate.SeedSecretSize {
		return nil, false, &flakegate.Error{Code: flakegate.EINVALID, Op: op, Path: s.redacted,
			Message: "flakegate.seed_secret does not hold a 32-byte secret; flakegate never replaces a stored secret",
			Hint:    "restore the row from a backup of the database; see docs/postgres.md on the seed secret"}
	}
	return secret, true, nil
}
