package postgres

import (
	"bytes"
	"strings"
	"testing"

	"github.com/flakegate/flakegate/internal/pgtest"
)

// TestSeedSecretKept: the stored secret is one row that no role changes,
// its owner included (the trigger refuses UPDATE, DELETE and TRUNCATE),
// and a store that makes no check draw a seed never stores one. (Only a
// store without a ledger key keeps its secret in the database.)
func TestSeedSecretKept(t *testing.T) {
	dsn := pgtest.DSN(t)
	s := openUnkeyed(t, dsn)
	if n := queryInt(t, dsn, `SELECT count(*) FROM flakegate.seed_secret`); n != 0 {
		t.Fatalf("a new database has %d seed secrets", n)
	}
	first, err := s.SeedSecret(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, sql := range []string{
		`UPDATE flakegate.seed_secret SET secret = '\x00'::bytea || substring(secret from 2)`,
		`DELETE FROM flakegate.seed_secret`,
		`TRUNCATE flakegate.seed_secret`,
		`INSERT INTO flakegate.seed_secret (id, secret) VALUES (true, decode(repeat('00', 32), 'hex'))`,
	} {
		if err := exec(t, dsn, sql); err == nil {
			t.Errorf("%s: accepted", sql)
		} else if strings.Contains(err.Error(), "0000000000") {
			t.Errorf("%s: %v", sql, err)
		}
	}
	again, err := openUnkeyed(t, dsn).SeedSecret(ctx)
	if err != nil || !bytes.Equal(again, first) {
		t.Fatalf("after the refused changes: %v, same secret %v", err, bytes.Equal(again, first))
	}
}
