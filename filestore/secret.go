package filestore

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/flakegate/flakegate"
)

// SeedSecret returns the store's seed secret, the 32 bytes written as 64
// hex digits and a newline in DIR/seed-secret (mode 0600). The first call
// on a store makes it under the store's lock and writes it atomically, so
// checks that start at once on a new store all read the one secret that
// was written. A file that is there is never rewritten: one that does not
// hold 64 hex digits is EINVALID.
func (s *Store) SeedSecret(ctx context.Context) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	path := filepath.Join(s.dir, SecretFile)
	// A secret once written is only read: no lock needed (the file appears
	// whole, by rename).
	if secret, ok, err := readSecret(path); ok || err != nil {
		return secret, err
	}
	unlock, err := s.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if secret, ok, err := readSecret(path); ok || err != nil {
		return secret, err
	}
	secret := make([]byte, flakegate.SeedSecretSize)
	rand.Read(secret) //nolint:errcheck // crypto/rand.Read never fails
	data := make([]byte, 0, 2*len(secret)+1)
	data = hex.AppendEncode(data, secret)
	data = append(data, '\n')
	if err := writeAtomicMode(s.dir, SecretFile, data, 0o600); err != nil {
		return nil, err
	}
	return secret, nil
}

// readSecret reads the secret file: ok is false, with no error, when
// there is none yet. Errors never quote the file's bytes.
func readSecret(path string) (secret []byte, ok bool, err error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	} else if err != nil {
		return nil, false, fsError("read the seed secret", path, err)
	}
	text := bytes.TrimSuffix(raw, []byte("\n"))
	secret = make([]byte, hex.DecodedLen(len(text)))
	if n, err := hex.Decode(secret, text); err != nil || n != flakegate.SeedSecretSize {
		return nil, false, &flakegate.Error{Code: flakegate.EINVALID, Op: "read the seed secret", Path: path,
			Message: "the file does not hold the store's seed secret (64 hex digits and a newline); flakegate never replaces a stored secret",
			Hint: "restore the file from a backup of the ledger folder; or, to draw new seeds from now on, move it aside " +
				"(the next check makes a new secret: the same candidate then draws other seeds, and the records keep the seeds that ran)"}
	}
	return secret, true, nil
}
