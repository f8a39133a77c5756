package pgtest_test

import (
	"context"
	"testing"

	"github.com/flakegate/flakegate/internal/pgtest"
	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestDSN checks that every test gets its own empty database.
func TestDSN(t *testing.T) {
	ctx := context.Background()
	a, b := pgtest.DSN(t), pgtest.DSN(t)
	if a == b {
		t.Fatalf("two calls gave the same database %s", a)
	}
	ca, err := pgx.Connect(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	defer ca.Close(ctx)
	if _, err := ca.Exec(ctx, `CREATE TABLE only_in_a (x int)`); err != nil {
		t.Fatal(err)
	}
	cb, err := pgx.Connect(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close(ctx)
	var n int
	if err := cb.QueryRow(ctx, `SELECT count(*) FROM pg_tables WHERE tablename = 'only_in_a'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("database b sees a's table")
	}
	var user string
	if err := ca.QueryRow(ctx, `SELECT current_user`).Scan(&user); err != nil {
		t.Fatal(err)
	}
	if user == "" {
		t.Fatal("no current user")
	}
}

// TestClusterStopStart checks the fault helpers: a stopped server refuses
// connections, and a restarted one has kept its data.
func TestClusterStopStart(t *testing.T) {
	ctx := context.Background()
	c := pgtest.NewCluster(t)
	dsn := c.DSN(t)
	exec := func(sql string) error {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, sql)
		return err
	}
	if err := exec(`CREATE TABLE kept (x int); INSERT INTO kept VALUES (7)`); err != nil {
		t.Fatal(err)
	}
	c.Stop(t)
	if err := exec(`SELECT 1`); err == nil {
		t.Fatal("a stopped server accepted a query")
	}
	c.Start(t)
	c.Crash(t)
	c.Start(t)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var x int
	if err := conn.QueryRow(ctx, `SELECT x FROM kept`).Scan(&x); err != nil || x != 7 {
		t.Fatalf("after restart: x=%d err=%v, want 7", x, err)
	}
}
