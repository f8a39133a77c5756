package postgres

import (
	"context"
	"testing"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/internal/pgtest"
	"github.com/flakegate/flakegate/storetest"
)

// TestMain runs the tests on throwaway PostgreSQL clusters (pgtest), or,
// re-executed by TestConsumeProcesses, one consumer process.
func TestMain(m *testing.M) {
	pgtest.MainWithConsumers(m, map[string]pgtest.Consumer{"store": storeConsumer})
}

// openStore opens a store on a new, empty database.
func openStore(t testing.TB) *Store {
	t.Helper()
	return openDSN(t, pgtest.DSN(t))
}

func openDSN(t testing.TB, dsn string) *Store {
	t.Helper()
	s := openUnkeyed(t, dsn)
	if err := s.UseKey([]byte(pgtest.LedgerKey)); err != nil {
		t.Fatal(err)
	}
	return s
}

// openUnkeyed opens a store without a ledger key: it authenticates no
// row and vouches for no freeze.
func openUnkeyed(t testing.TB, dsn string) *Store {
	t.Helper()
	s, err := Open(context.Background(), dsn)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestContract runs the one store contract suite on PostgreSQL.
func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) flakegate.Store { return openStore(t) })
	storetest.RunShared(t, func(t *testing.T) func() flakegate.Store {
		dsn := pgtest.DSN(t)
		return func() flakegate.Store { return openDSN(t, dsn) }
	})
}
