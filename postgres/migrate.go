package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/flakegate/flakegate"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migration is one embedded SQL file, migrations/NNNN_name.sql.
type migration struct {
	version int
	name    string
	sql     string
}

// migrations lists the embedded migrations in order; their versions are
// 1, 2, ... without gaps (checked by the tests).
var migrations = loadMigrations()

func loadMigrations() []migration {
	names, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		panic(err) // the pattern is constant
	}
	var ms []migration
	for _, name := range names {
		base := path.Base(name)
		num, _, _ := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if err != nil {
			panic("postgres: migration " + base + " does not start with a number")
		}
		raw, err := migrationFiles.ReadFile(name)
		if err != nil {
			panic(err)
		}
		ms = append(ms, migration{version: v, name: base, sql: string(raw)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	return ms
}

// SchemaVersion is the newest schema version this flakegate knows.
func SchemaVersion() int { return migrations[len(migrations)-1].version }

// migrateLock is the key of the advisory lock that serializes migrations
// of one database, so runners starting at once migrate it exactly once.
const migrateLock = 0x666c616b65676174 // "flakegat"

// bootstrap creates what the migrator itself needs, in the schema
// "flakegate" (created first unless a DBA created it already).
const bootstrap = `
CREATE TABLE IF NOT EXISTS flakegate.schema_version (
    version           integer     PRIMARY KEY,
    name              text        NOT NULL,
    flakegate_version text        NOT NULL,
    applied_at        timestamptz NOT NULL DEFAULT now()
)`

// Migrate brings the database named by dsn to the newest schema this
// flakegate knows. It is safe to run from many runners at once and again
// and again. A schema newer than this flakegate knows is an error.
func Migrate(ctx context.Context, dsn string) error {
	_, _, err := MigrateVersions(ctx, dsn)
	return err
}

// MigrateVersions is Migrate that also returns the schema version before
// and after (0 for a database that had no flakegate schema).
func MigrateVersions(ctx context.Context, dsn string) (before, after int, err error) {
	s, err := connect(dsn)
	if err != nil {
		return 0, 0, err
	}
	defer s.Close()
	return s.migrate(ctx, "postgres migrate")
}

// migrate checks the schema version and applies missing migrations. A
// database already at the newest version is only read, so runners whose
// role cannot CREATE still open it.
func (s *Store) migrate(ctx context.Context, op string) (before, after int, err error) {
	v, err := s.readVersion(ctx)
	switch {
	case err != nil && !isMissingSchema(err):
		return 0, 0, s.FormatError(op, err)
	case err == nil && v == SchemaVersion():
		return v, v, nil
	case err == nil && v > SchemaVersion():
		return v, v, s.tooNew(op, v)
	}
	err = s.inMigrationTx(ctx, func(tx pgx.Tx) error {
		// CREATE SCHEMA IF NOT EXISTS would still need CREATE on the
		// database; a schema made by a DBA for the migrating role does not.
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = 'flakegate')`).Scan(&exists); err != nil {
			return err
		}
		if !exists {
			if _, err := tx.Exec(ctx, `CREATE SCHEMA flakegate`); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, bootstrap); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM flakegate.schema_version`).Scan(&before); err != nil {
			return err
		}
		if before > SchemaVersion() {
			return s.tooNew(op, before)
		}
		after = before
		for _, m := range migrations {
			if m.version <= before {
				continue
			}
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return fmt.Errorf("migration %s: %w", m.name, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO flakegate.schema_version (version, name, flakegate_version) VALUES ($1, $2, $3)`,
				m.version, m.name, flakegate.Version); err != nil {
				return err
			}
			after = m.version
		}
		return nil
	})
	if err != nil {
		return 0, 0, s.FormatError(op, err)
	}
	return before, after, nil
}

// inMigrationTx runs fn in a transaction that holds the migration lock.
// DDL is transactional in PostgreSQL: a failed migration leaves nothing.
func (s *Store) inMigrationTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // after Commit it is a no-op
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(migrateLock)); err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// readVersion returns the database's schema version (0 if the version
// table is empty).
func (s *Store) readVersion(ctx context.Context) (int, error) {
	var v int
	err := s.pool.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM flakegate.schema_version`).Scan(&v)
	return v, err
}

// isMissingSchema reports whether err says the schema or the version table
// does not exist yet.
func isMissingSchema(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "42P01" || pgErr.Code == "3F000")
}

func (s *Store) tooNew(op string, v int) error {
	return &flakegate.Error{
		Code:    flakegate.EINTERNAL,
		Op:      op,
		Path:    s.redacted,
		Message: fmt.Sprintf("schema version %d is newer than this flakegate (knows %d)", v, SchemaVersion()),
		Hint:    "upgrade flakegate on this runner to the release that migrated the database (see flakegate.schema_version), or use another database",
	}
}

// SchemaStatus connects to the database named by dsn and returns its
// schema version (0 when it has no flakegate schema yet) without
// migrating anything: what `flakegate doctor` reports. Errors are those
// of Open: a database that cannot be reached is EINTERNAL, its message
// without the password.
func SchemaStatus(ctx context.Context, dsn string) (int, error) {
	s, err := connect(dsn)
	if err != nil {
		return 0, err
	}
	defer s.Close()
	v, err := s.readVersion(ctx)
	if err != nil && isMissingSchema(err) {
		return 0, nil
	}
	if err != nil {
		return 0, s.FormatError("postgres status", err)
	}
	return v, nil
}
