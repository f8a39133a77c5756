package postgres

import (
	"fmt"
	"testing"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/internal/pgtest"
	"github.com/flakegate/flakegate/storetest"
)

// TestMigrateCorpusKept upgrades a database at schema 6 whose failure
// corpus holds seeds: every seed is kept with its fields, added by its
// newest failure's candidate and aged from the corpus's first base, and
// the store then applies the new rules to it (a second seed of that
// candidate is refused, the seeds age out after MaxCorpusAge bases).
func TestMigrateCorpusKept(t *testing.T) {
	dsn := pgtest.DSN(t)
	setup := []string{`CREATE SCHEMA flakegate`, bootstrap}
	for _, m := range migrations[:6] {
		setup = append(setup, m.sql, fmt.Sprintf(`INSERT INTO flakegate.schema_version (version, name, flakegate_version) VALUES (%d, '%s', 'old')`, m.version, m.name))
	}
	for _, sql := range setup {
		if err := exec(t, dsn, sql); err != nil {
			t.Fatal(err)
		}
	}
	for _, row := range [][]string{
		{"k1", "1402", "b1", "c2", "2026-01-02T03:04:06.000000000Z"},
		{"k1", "7", "b0", "c1", "2026-01-02T03:04:05.000000000Z"},
		{"k2", "s-1", "b0", "c1", "2026-01-01T00:00:00.000000000Z"},
	} {
		if err := exec(t, dsn, `INSERT INTO flakegate.failure_corpus (corpus_key, seed, first_base_sha, candidate_sha, failed_at) VALUES ($1, $2, $3, $4, $5)`,
			row[0], row[1], row[2], row[3], row[4]); err != nil {
			t.Fatal(err)
		}
	}
	before, after, err := MigrateVersions(ctx, dsn)
	if err != nil || before != 6 || after != SchemaVersion() {
		t.Fatalf("MigrateVersions: %d -> %d, %v", before, after, err)
	}
	s := openDSN(t, dsn)
	read := func() string { return storetest.CorpusText(t, s, "k1", "k2") }
	want := "k1: 1402@b1/c2+c2/2026-01-02T03:04:06Z/0 7@b0/c1+c1/2026-01-02T03:04:05Z/0; k2: s-1@b0/c1+c1/2026-01-01T00:00:00Z/0"
	if got := read(); got != want {
		t.Fatalf("after the migration: %s\nwant %s", got, want)
	}
	if did, err := s.AddFailure(ctx, "k1", flakegate.CorpusEntry{Seed: "9", FirstBaseSHA: "b1", CandidateSHA: "c2", FailedAt: time.Now()}); err != nil || did != flakegate.CorpusOnePerCandidate {
		t.Fatalf("a second seed of c2: %q, %v", did, err)
	}
	gone := 0
	for i := range flakegate.MaxCorpusAge {
		n, err := s.CorpusBase(ctx, fmt.Sprint("base-", i))
		if err != nil {
			t.Fatal(err)
		}
		gone += n
		if i < flakegate.MaxCorpusAge-1 && n != 0 {
			t.Fatalf("base %d: %d seeds left early", i, n)
		}
	}
	if gone != 3 || read() != "k1: ; k2: " {
		t.Fatalf("after %d bases: %d left, %s", flakegate.MaxCorpusAge, gone, read())
	}
	if n := queryInt(t, dsn, `SELECT count(*) FROM flakegate.corpus_bases`); n != flakegate.MaxCorpusAge {
		t.Fatalf("%d bases kept", n)
	}
}

// TestCorpusTotal: a corpus of MaxCorpusTotal seeds refuses a new seed of
// any key and writes nothing for it; a seed it holds is still renewed.
func TestCorpusTotal(t *testing.T) {
	dsn := pgtest.DSN(t)
	s := openDSN(t, dsn)
	if err := exec(t, dsn, `INSERT INTO flakegate.failure_corpus (corpus_key, seed, first_base_sha, candidate_sha, failed_at, added_by)
		SELECT 'k' || (i / $2), i::text, 'b', 'c', '2026-01-02T03:04:05.000000000Z', 'c' || i FROM generate_series(0, $1 - 1) AS i`,
		flakegate.MaxCorpusTotal, flakegate.MaxCorpusSeeds); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if did, err := s.AddFailure(ctx, "new", flakegate.CorpusEntry{Seed: "1", FirstBaseSHA: "b", CandidateSHA: "x", FailedAt: at}); err != nil || did != flakegate.CorpusFull {
		t.Fatalf("a new seed of a full corpus: %q, %v", did, err)
	}
	if n := queryInt(t, dsn, `SELECT count(*) FROM flakegate.failure_corpus`); n != flakegate.MaxCorpusTotal {
		t.Fatalf("%d seeds after a refused one", n)
	}
	if did, err := s.AddFailure(ctx, "k0", flakegate.CorpusEntry{Seed: "0", FirstBaseSHA: "b", CandidateSHA: "y", FailedAt: at.Add(time.Hour)}); err != nil || did != flakegate.CorpusRenewed {
		t.Fatalf("a seed of a full corpus failing again: %q, %v", did, err)
	}
}
