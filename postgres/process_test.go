package postgres

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/internal/pgtest"
	"github.com/flakegate/flakegate/storetest"
)

// storeConsumer skips storetest.Freeze("1402") (TestConsumeProcesses's)
// through the store API.
func storeConsumer(dsn string, tries int) int {
	f := storetest.Freeze("1402", 1)
	ctx := context.Background()
	s, err := Open(ctx, dsn)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	if err := s.UseKey([]byte(pgtest.LedgerKey)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	defer s.Close()
	pgtest.WaitForStart()
	by := "pid-" + strconv.Itoa(os.Getpid())
	for range tries {
		n, err := s.Consume(ctx, f.Triple(), f.RecordSHA256, by)
		if flakegate.ErrorCode(err) == flakegate.ENOTFOUND {
			continue
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
		fmt.Println(n)
	}
	return 0
}

// TestConsumeProcesses has 8 OS processes consume one freeze of 300 runs
// through the store API, 100 times each, all starting at once: exactly 300
// skips succeed, each told a different count, and the audit log holds 300
// skips and an expiry. (TestFreezeConsumeProcesses does the same with
// 'flakegate freeze consume'.)
func TestConsumeProcesses(t *testing.T) {
	const procs, tries, runs = 8, 100, 300
	dsn := pgtest.DSN(t)
	s := openDSN(t, dsn)
	f := storetest.Freeze("1402", runs)
	if err := s.Grant(ctx, f, false); err != nil {
		t.Fatal(err)
	}
	pgtest.WantEachOnce(t, pgtest.RunConsumers(t, dsn, "store", procs, tries), runs)
	_, err := s.GetFreeze(ctx, f.Triple())
	wantCode(t, "GetFreeze after the last skip", err, flakegate.ENOTFOUND)
	lines, err := s.AuditLines(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := flakegate.VerifyAuditChain(lines); err != nil {
		t.Fatalf("audit chain: %v", err)
	}
	m, err := flakegate.ReplayAudit(lines)
	if err != nil || len(m) != 0 {
		t.Fatalf("ReplayAudit: %d freezes, %v; want none", len(m), err)
	}
	if len(lines) != 1+runs+1 {
		t.Fatalf("audit log has %d lines, want grant, %d skips, expire", len(lines), runs)
	}
}
