// Package postgres keeps flakegate's stores (the freeze ledger, its audit
// log, the record store and the replay cache) in PostgreSQL, so that many
// CI runners share one ledger. The schema is created and upgraded by
// embedded, versioned migrations, applied on first use and by
// 'flakegate db migrate'.
//
// Every ledger change runs in one transaction that first locks the head of
// the audit chain, so concurrent runners never lose or double a decrement
// and the audit log never forks. Every error is a *flakegate.Error; a
// database that cannot be reached, refuses, or has a schema newer than
// this flakegate is EINTERNAL (exit 3), and messages name the DSN without
// its password.
package postgres

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Store is flakegate's store on one PostgreSQL database. It is safe for
// concurrent use.
type Store struct {
	pool *pgxpool.Pool
	// lockPool holds the sessions of replay locks (LockReplay), apart from
	// pool: a check holding a lock per worker still gets connections for
	// its queries, however many workers it has.
	lockPool *pgxpool.Pool
	redacted string // the DSN without its password, for messages
	password string // scrubbed from messages

	// macKey authenticates rows and seedSecret keys drawn seeds, both
	// derived from the runner's ledger key (UseKey); nil without one.
	macKey, seedSecret []byte

	// Now is the clock audit events are stamped with; tests replace it.
	Now func() time.Time

	// beforeCommit, when set by a test, runs inside every ledger
	// transaction just before COMMIT.
	beforeCommit func()
}

var _ flakegate.Store = (*Store)(nil)

// connectTimeout bounds a connection attempt when the DSN sets none, so a
// database that is down fails a check quickly instead of hanging it.
const connectTimeout = 10 * time.Second

// defaultParams are session settings used unless the DSN sets them. A
// runner that stops answering in the middle of a ledger change (its
// network gone, its process stopped) holds the audit chain's lock: the
// server ends its session after a minute, and other runners wait at most
// that long for the lock.
var defaultParams = map[string]string{
	"application_name":                    "flakegate",
	"idle_in_transaction_session_timeout": "60s",
	"lock_timeout":                        "90s",
}

// lockConns bounds the sessions holding replay locks at once: one per
// worker of a check (at most 64); more callers wait for a session.
const lockConns = 64

// IsDSN reports whether spec names a PostgreSQL database (a postgres:// or
// postgresql:// URL) rather than a ledger directory.
func IsDSN(spec string) bool {
	return strings.HasPrefix(spec, "postgres://") || strings.HasPrefix(spec, "postgresql://")
}

// Open connects to the database named by dsn (a postgres:// or
// postgresql:// URL), applies any migration the database lacks and returns
// the store. A database whose schema is newer than this flakegate knows is
// refused. Close the store when done.
func Open(ctx context.Context, dsn string) (*Store, error) {
	s, err := connect(dsn)
	if err != nil {
		return nil, err
	}
	if _, _, err := s.migrate(ctx, "postgres open"); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// connect parses dsn and sets up the connection pool; it does not connect
// yet.
func connect(dsn string) (*Store, error) {
	redacted := Redact(dsn)
	if !IsDSN(dsn) {
		return nil, &flakegate.Error{Code: flakegate.EINVALID, Op: "postgres", Path: redacted,
			Message: "not a PostgreSQL DSN", Hint: "use postgres://USER:PASSWORD@HOST:PORT/DATABASE"}
	}
	if _, err := url.Parse(dsn); err != nil {
		// url's error quotes the whole DSN, password included: drop it.
		return nil, &flakegate.Error{Code: flakegate.EINVALID, Op: "postgres", Path: redacted,
			Message: "the DSN is not a valid URL", Hint: "use postgres://USER:PASSWORD@HOST:PORT/DATABASE; percent-encode special characters in the password"}
	}
	pw := password(dsn)
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, &flakegate.Error{Code: flakegate.EINVALID, Op: "postgres", Path: redacted,
			Message: scrub("invalid DSN: "+err.Error(), pw), Hint: "use postgres://USER:PASSWORD@HOST:PORT/DATABASE"}
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = connectTimeout
	}
	for k, v := range defaultParams {
		if _, ok := cfg.ConnConfig.RuntimeParams[k]; !ok {
			cfg.ConnConfig.RuntimeParams[k] = v
		}
	}
	// Ping a connection taken from the pool unless it was used just now:
	// after the server restarts, idle connections are dead, and a
	// statement sent on one would fail although the server is back.
	cfg.ShouldPing = func(_ context.Context, p pgxpool.ShouldPingParams) bool { return p.IdleDuration > 100*time.Millisecond }
	lockCfg := cfg.Copy()
	lockCfg.MaxConns = lockConns
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		return nil, formatError("postgres", redacted, pw, err)
	}
	lockPool, err := pgxpool.NewWithConfig(context.Background(), lockCfg)
	if err != nil {
		pool.Close()
		return nil, formatError("postgres", redacted, pw, err)
	}
	return &Store{pool: pool, lockPool: lockPool, redacted: redacted, password: pw, Now: time.Now}, nil
}

// Close closes every connection of the store. A nil store (from a failed
// Open behind an interface) closes nothing.
func (s *Store) Close() error {
	if s != nil && s.pool != nil {
		s.pool.Close()
	}
	if s != nil && s.lockPool != nil {
		s.lockPool.Close()
	}
	return nil
}

// String returns the store's DSN without its password.
func (s *Store) String() string { return s.redacted }

// inTx runs fn in a transaction and commits it. If fn fails, or the commit
// fails, nothing of fn's work is kept; the error says so, or says that the
// outcome is unknown when the connection broke after COMMIT was sent.
func (s *Store) inTx(ctx context.Context, op string, fn func(tx pgx.Tx) error) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return s.FormatError(op, err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // after Commit it is a no-op
	if err := fn(tx); err != nil {
		return rolledBack(s.FormatError(op, err), err)
	}
	if s.beforeCommit != nil {
		s.beforeCommit()
	}
	if err := tx.Commit(ctx); err != nil {
		ferr := s.FormatError(op, err)
		var e *flakegate.Error
		// A server error, or a COMMIT that never left this process
		// (SafeToRetry), means the transaction was not committed.
		if errors.As(err, new(*pgconn.PgError)) || pgconn.SafeToRetry(err) {
			return rolledBack(ferr, err)
		}
		if errors.As(ferr, &e) {
			e.Message = "the change may or may not have been written: " + e.Message
			e.Hint = "check with 'flakegate freeze list' before retrying; " + e.Hint
		}
		return ferr
	}
	return nil
}

// rolledBack adds to a driver error's message that the change was not
// written; flakegate's own errors (ECONFLICT, ENOTFOUND, ...) say enough.
func rolledBack(ferr, cause error) error {
	var e *flakegate.Error
	if errors.As(cause, new(*flakegate.Error)) || !errors.As(ferr, &e) {
		return ferr
	}
	e.Message += "; nothing was written"
	return ferr
}
