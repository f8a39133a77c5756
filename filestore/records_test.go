package filestore_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/flakegate/flakegate/filestore"
	"github.com/flakegate/flakegate/internal/flock"
)

// TestPutRecordConcurrent: many writers of one record name race; the
// file holds one writer's bytes whole, the first to land, and later
// writers change nothing. No temporary file is left.
func TestPutRecordConcurrent(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	sum := sha256.Sum256([]byte("r"))
	sha := hex.EncodeToString(sum[:])
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.PutRecord(ctx, sha, fmt.Appendf(nil, `{"writer":%02d}`, i)); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	first, err := s.GetRecord(ctx, sha)
	if err != nil || len(first) != len(`{"writer":00}`) {
		t.Fatalf("record %q, %v", first, err)
	}
	if err := s.PutRecord(ctx, sha, []byte(`{"writer":99}`)); err != nil {
		t.Fatal(err)
	}
	if again, _ := s.GetRecord(ctx, sha); string(again) != string(first) {
		t.Fatalf("a later put changed %q to %q", first, again)
	}
	ents, _ := os.ReadDir(filepath.Join(s.Dir(), filestore.RecordsDir))
	if len(ents) != 1 {
		t.Fatalf("want one file in records/, got %d", len(ents))
	}
}

// TestPutRecordTakesNoLock: a record is stored while another process
// holds the ledger lock (records are written once and never changed, so
// they need none), where before it waited out the lock's timeout.
func TestPutRecordTakesNoLock(t *testing.T) {
	s := openStore(t)
	s.LockTimeout = 200 * time.Millisecond
	ctx := context.Background()
	held, err := flock.Lock(ctx, filepath.Join(s.Dir(), filestore.LockFile), flock.Options{What: "a test's hold"})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	sum := sha256.Sum256([]byte("x"))
	if err := s.PutRecord(ctx, hex.EncodeToString(sum[:]), []byte(`{}`)); err != nil {
		t.Fatalf("PutRecord under a held ledger lock: %v", err)
	}
}
