package postgres

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"

	"github.com/flakegate/flakegate"
)

// MinKeySize is the shortest ledger key UseKey accepts, in bytes.
const MinKeySize = 32

// UseKey makes the store authenticate every row that decides a label
// with key, which the runner holds and the database does not: freezes,
// audit lines, records and replay results carry an HMAC-SHA256 under a
// key derived from it, written with the row and checked when the row is
// read. A row whose authenticator is missing or wrong is refused
// (flakegate.ErrUnauthenticated), whoever could write the database. The
// seed secret is derived from the key too, so the database's
// flakegate.seed_secret table is neither read nor written: a client that
// can only reach the database cannot learn which seeds a check draws.
// Call it before the store is used; a key shorter than MinKeySize bytes
// is EINVALID.
func (s *Store) UseKey(key []byte) error {
	if len(key) < MinKeySize {
		return &flakegate.Error{Code: flakegate.EINVALID, Op: "postgres ledger key", Path: s.redacted,
			Message: "the ledger key is shorter than 32 bytes",
			Hint:    "make one with 'openssl rand -hex 32' and keep it in the runner's secret store"}
	}
	s.macKey = derive(key, "flakegate ledger row authenticator v1")
	s.seedSecret = derive(key, "flakegate seed secret v1")[:flakegate.SeedSecretSize]
	return nil
}

// Unvouched says why the store cannot vouch for its rows ("" when it can):
// without a key, anyone who can write the database can write a freeze,
// its record and its audit line.
func (s *Store) Unvouched() string {
	if s.macKey != nil {
		return ""
	}
	return "the PostgreSQL ledger has no key (ledger.key_env, default $FLAKEGATE_LEDGER_KEY): anyone who can write the database could have written this freeze, so no freeze in it lets a triple skip"
}

func derive(key []byte, purpose string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(purpose))
	return m.Sum(nil)
}

// mac is the authenticator of one row of table: HMAC-SHA256 under the
// row key over the table's name and the row's fields, each prefixed by
// its length so that no two rows share an input.
func (s *Store) mac(table string, fields ...string) []byte {
	if s.macKey == nil {
		return nil
	}
	m := hmac.New(sha256.New, s.macKey)
	var n [8]byte
	for _, f := range append([]string{table}, fields...) {
		binary.BigEndian.PutUint64(n[:], uint64(len(f)))
		m.Write(n[:])
		m.Write([]byte(f))
	}
	return m.Sum(nil)
}

// authentic reports whether got is the authenticator of the row; always
// true for a store without a key (it authenticates nothing).
func (s *Store) authentic(got []byte, table string, fields ...string) bool {
	if s.macKey == nil {
		return true
	}
	return hmac.Equal(got, s.mac(table, fields...))
}

// refused is the error for a row whose authenticator does not match.
func (s *Store) refused(op, row string) error {
	return &flakegate.Error{Code: flakegate.EINVALID, Op: op, Path: s.redacted,
		Message: row + " is refused: its authenticator does not match the ledger key (written without the key, or by a client that can only write the database)",
		Hint:    "see docs/postgres.md on the ledger key; revoke or re-grant what it names",
		Err:     flakegate.ErrUnauthenticated}
}
