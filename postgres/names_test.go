package postgres

import (
	"testing"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/internal/pgtest"
	"github.com/flakegate/flakegate/storetest"
)

// TestMigrateTestNames upgrades a database at schema 1 that holds a
// freeze: the freeze keeps every field, gets no name and no bindings, and
// a freeze of a named test of the same file and seed can join it.
func TestMigrateTestNames(t *testing.T) {
	dsn := pgtest.DSN(t)
	for _, sql := range []string{`CREATE SCHEMA flakegate`, bootstrap, migrations[0].sql,
		`INSERT INTO flakegate.schema_version (version, name, flakegate_version) VALUES (1, '0001_init.sql', 'old')`} {
		if err := exec(t, dsn, sql); err != nil {
			t.Fatal(err)
		}
	}
	old := storetest.Freeze("1402", 5)
	if err := exec(t, dsn, `INSERT INTO flakegate.freezes (`+
		`label, property_path, seed, fixture_sha256, runs_left, owner, record_sha256, property_sha256, granted_at, granted_by)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		string(old.Label), old.PropertyPath, string(old.Seed), old.FixtureSHA256, old.ExpiresAfterRuns,
		old.Owner, old.RecordSHA256, old.PropertySHA256, formatTime(old.GrantedAt), old.GrantedBy); err != nil {
		t.Fatal(err)
	}
	before, after, err := MigrateVersions(ctx, dsn)
	if err != nil || before != 1 || after != SchemaVersion() {
		t.Fatalf("MigrateVersions: %d -> %d, %v", before, after, err)
	}
	// A row written before the ledger key is read as it was by a store
	// without a key; a store with the key refuses it (TestKeyRefuses).
	s := openUnkeyed(t, dsn)
	got, err := s.GetFreeze(ctx, old.Triple())
	if err != nil {
		t.Fatalf("GetFreeze after the migration: %v", err)
	}
	if !flakegate.SameFreeze(got, old) {
		t.Fatalf("migrated freeze %+v, want %+v", got, old)
	}
	named := old
	named.Name, named.RunSHA256 = "TestA", storetest.Sha('c')
	if err := s.Grant(ctx, named, false); err != nil {
		t.Fatalf("a named test of the same file and seed: %v", err)
	}
	if fs, err := s.ListFreezes(ctx); err != nil || len(fs) != 2 {
		t.Fatalf("ListFreezes: %d, %v", len(fs), err)
	}
}
