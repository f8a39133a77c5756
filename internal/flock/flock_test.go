package flock_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/internal/flock"
)

// syncBuffer is a bytes.Buffer safe for the waiter and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestLockTimeoutNamesHolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	held, err := flock.Lock(context.Background(), path, flock.Options{What: "the test lock"})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	var wait syncBuffer
	start := time.Now()
	_, err = flock.Lock(context.Background(), path, flock.Options{What: "the test lock", Timeout: 300 * time.Millisecond, Wait: &wait, Notice: time.Millisecond})
	if flakegate.ErrorCode(err) != flakegate.EINTERNAL {
		t.Fatalf("err = %v, want EINTERNAL", err)
	}
	if time.Since(start) > 10*time.Second {
		t.Fatalf("the deadline was not honoured: %s", time.Since(start))
	}
	pid := "pid " + strconv.Itoa(os.Getpid())
	if !strings.Contains(err.Error(), pid) || !strings.Contains(err.Error(), "the test lock") {
		t.Errorf("error %q does not name %s and the lock", err, pid)
	}
	if !strings.Contains(wait.String(), "waiting for another check ("+pid) {
		t.Errorf("wait note = %q", wait.String())
	}
}

func TestLockCancelled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	held, err := flock.Lock(context.Background(), path, flock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	ctx, cancel := context.WithCancelCause(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := flock.Lock(ctx, path, flock.Options{})
		done <- err
	}()
	sentinel := errors.New("SIGTERM")
	cancel(sentinel)
	select {
	case err := <-done:
		if !errors.Is(err, sentinel) || flakegate.ErrorCode(err) != flakegate.EINTERNAL {
			t.Fatalf("err = %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a cancelled wait did not return")
	}
}

func TestLockAfterRelease(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	held, err := flock.Lock(context.Background(), path, flock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(50 * time.Millisecond)
		held.Close()
	}()
	f, err := flock.Lock(context.Background(), path, flock.Options{Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
}
