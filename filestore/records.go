package filestore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/internal/atomicfile"
	"github.com/flakegate/flakegate/internal/flock"
)

// PutRecord stores raw as records/<sha>.json unless that file exists.
// It takes no ledger lock: a record is written once and never changed or
// removed, so the only race is two writers of one name, and link(2)
// settles it: the file is written and synced under a temporary name and
// linked to its own, which fails when the name exists (the first bytes
// stay). A check of a suite stores hundreds of records at once; under
// the lock each waited for every other's two fsyncs.
func (s *Store) PutRecord(ctx context.Context, sha string, raw []byte) error {
	if !flakegate.ValidSHA256(sha) {
		return flakegate.Errorf(flakegate.EINVALID, "store a record: %q is not a sha256", sha)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	dir := filepath.Join(s.dir, RecordsDir)
	final := filepath.Join(dir, sha+".json")
	if _, err := os.Stat(final); err == nil {
		return nil // the first bytes stay
	}
	name := sha + ".json"
	if err := atomicfile.CreateOnce(final, raw, 0o644, func(step string) { crashPoint(name + " " + step) }); err != nil {
		return fsError("write", final, err)
	}
	return nil
}

// GetRecord returns the bytes of records/<sha>.json, or ENOTFOUND.
func (s *Store) GetRecord(ctx context.Context, sha string) ([]byte, error) {
	if !flakegate.ValidSHA256(sha) {
		return nil, flakegate.Errorf(flakegate.EINVALID, "read a record: %q is not a sha256", sha)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	path := filepath.Join(s.dir, RecordsDir, sha+".json")
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &flakegate.Error{Code: flakegate.ENOTFOUND, Op: "read a record", Path: path, Message: "no such record"}
	} else if err != nil {
		return nil, fsError("read a record", path, err)
	}
	return raw, nil
}

// EachRecord calls fn for every stored record, in sha order.
func (s *Store) EachRecord(ctx context.Context, fn func(sha string, raw []byte) error) error {
	dir := filepath.Join(s.dir, RecordsDir)
	ents, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fsError("list records", dir, err)
	}
	for _, ent := range ents {
		sha, ok := strings.CutSuffix(ent.Name(), ".json")
		if !ok || !flakegate.ValidSHA256(sha) || !ent.Type().IsRegular() {
			continue // a temporary file or something not ours
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		raw, err := s.GetRecord(ctx, sha)
		if err != nil {
			return err
		}
		if err := fn(sha, raw); err != nil {
			return err
		}
	}
	return nil
}

// replayEntry is the JSON of one replay cache file.
type replayEntry struct {
	Key    string               `json:"key"`
	Result flakegate.BaseReplay `json:"result"`
}

func (s *Store) replayPath(key string) string {
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(s.dir, ReplayDir, hex.EncodeToString(sum[:])+".json")
}

// GetReplay returns the base result stored for key.
func (s *Store) GetReplay(ctx context.Context, key string) (flakegate.BaseReplay, bool, error) {
	if err := ctx.Err(); err != nil {
		return flakegate.BaseReplay{}, false, err
	}
	return s.readReplay(key)
}

func (s *Store) readReplay(key string) (flakegate.BaseReplay, bool, error) {
	path := s.replayPath(key)
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return flakegate.BaseReplay{}, false, nil
	} else if err != nil {
		return flakegate.BaseReplay{}, false, fsError("read replay cache", path, err)
	}
	var e replayEntry
	if err := json.Unmarshal(raw, &e); err != nil || e.Key != key {
		return flakegate.BaseReplay{}, false, &flakegate.Error{Code: flakegate.EINVALID, Op: "read replay cache", Path: path,
			Message: "not a replay cache entry for this key", Hint: "remove the file; the base will be replayed again"}
	}
	return e.Result, true, nil
}

// PutReplay stores r under key unless a result is there; it returns the
// stored (first) result.
func (s *Store) PutReplay(ctx context.Context, key string, r flakegate.BaseReplay) (flakegate.BaseReplay, error) {
	unlock, err := s.lock(ctx)
	if err != nil {
		return flakegate.BaseReplay{}, err
	}
	defer unlock()
	if old, ok, err := s.readReplay(key); err != nil || ok {
		return old, err
	}
	r.At = r.At.UTC()
	b, err := json.MarshalIndent(replayEntry{Key: key, Result: r}, "", "  ")
	if err != nil {
		return flakegate.BaseReplay{}, err
	}
	path := s.replayPath(key)
	if err := writeAtomic(filepath.Dir(path), filepath.Base(path), append(b, '\n')); err != nil {
		return flakegate.BaseReplay{}, err
	}
	return r, nil
}

// LockReplay takes the flock of replay/<sha256(key)>.lock, so checks in
// every process sharing the folder replay one key's base once. The lock
// file stays (removing it would let two holders lock different files).
// A holder's lock goes with its open file: released, or its process gone.
// The wait ends with ctx (the caller sets its deadline: a holder runs one
// base attempt, as long as its wall budget).
func (s *Store) LockReplay(ctx context.Context, key string) (func(), error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	path := strings.TrimSuffix(s.replayPath(key), ".json") + ".lock"
	f, err := flock.Lock(ctx, path, flock.Options{What: "the replay lock", Op: "lock replay cache"})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	return sync.OnceFunc(func() { f.Close() }), nil
}
