// Package store opens the store a command names: the embedded file store
// under the git common directory by default, another folder, or a shared
// PostgreSQL database.
package store

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/filestore"
	"github.com/flakegate/flakegate/postgres"
)

// Open opens the store spec names: "" is <gitCommonDir>/flakegate, a
// postgres:// or postgresql:// URL is a PostgreSQL database, anything
// else is a folder for the embedded store. The CLI passes --ledger or, if
// that is empty, $FLAKEGATE_LEDGER.
func Open(ctx context.Context, spec, gitCommonDir string) (flakegate.Store, error) {
	switch {
	case postgres.IsDSN(spec):
		s, err := postgres.Open(ctx, spec)
		if err != nil {
			return nil, err // not a typed nil inside the interface
		}
		return s, nil
	case spec != "":
		s, err := filestore.Open(spec)
		if err != nil {
			return nil, err
		}
		return s, nil
	case gitCommonDir == "":
		return nil, &flakegate.Error{Code: flakegate.EINVALID, Op: "open ledger",
			Message: "no ledger: not in a git repository and no ledger named",
			Hint:    "run inside the repository, or pass --ledger DIR|postgres://... (or set FLAKEGATE_LEDGER)"}
	default:
		s, err := filestore.Open(filepath.Join(gitCommonDir, filestore.DefaultDir))
		if err != nil {
			return nil, err
		}
		return s, nil
	}
}

// UseKey gives s the runner's ledger key when s authenticates its rows
// (PostgreSQL); "" leaves it without one. A file store needs none: it is
// on the runner's own disk.
func UseKey(s flakegate.Store, key string) error {
	k, ok := s.(interface{ UseKey([]byte) error })
	if !ok || key == "" {
		return nil
	}
	return k.UseKey([]byte(key))
}

// Health is what Status found of a store: a line for `flakegate doctor`,
// and whether a check would be refused (Fail) or should be looked at
// (Warn).
type Health struct {
	Text       string
	Warn, Fail bool
}

// Status reads the store spec names (as Open does) without creating,
// migrating or repairing it: a folder's ledger version and freezes, or
// whether a PostgreSQL database answers and its schema version against
// the one this flakegate knows. Messages never hold a DSN's password.
func Status(ctx context.Context, spec, gitCommonDir string) Health {
	switch {
	case postgres.IsDSN(spec):
		where := postgres.Redact(spec)
		v, err := postgres.SchemaStatus(ctx, spec)
		known := postgres.SchemaVersion()
		switch {
		case err != nil:
			return Health{Text: errText(err), Fail: true}
		case v == 0:
			return Health{Text: fmt.Sprintf("PostgreSQL %s answers; no flakegate schema yet (the first check creates it if its role may CREATE, else run 'flakegate db migrate'; this flakegate knows version %d)", where, known), Warn: true}
		case v < known:
			return Health{Text: fmt.Sprintf("PostgreSQL %s answers; schema version %d, older than this flakegate's %d (the first check migrates it if its role may, else run 'flakegate db migrate')", where, v, known), Warn: true}
		case v > known:
			return Health{Text: fmt.Sprintf("PostgreSQL %s answers; schema version %d is newer than this flakegate knows (%d): a check refuses it; upgrade flakegate", where, v, known), Fail: true}
		}
		return Health{Text: fmt.Sprintf("PostgreSQL %s answers; schema version %d (up to date)", where, v)}
	case spec == "" && gitCommonDir == "":
		return Health{Text: "no ledger: not in a git repository and no --ledger (FLAKEGATE_LEDGER) named", Fail: true}
	}
	dir, what := spec, "file store"
	if spec == "" {
		dir, what = filepath.Join(gitCommonDir, filestore.DefaultDir), "embedded file store"
	}
	info, err := filestore.Inspect(dir)
	switch {
	case err != nil:
		return Health{Text: what + ": " + errText(err), Fail: true}
	case !info.Exists && !info.Creatable:
		return Health{Text: fmt.Sprintf("%s %s does not exist and cannot be created here", what, info.Dir), Fail: true}
	case !info.Exists:
		return Health{Text: fmt.Sprintf("%s %s (not created yet: the first check creates it)", what, info.Dir)}
	}
	return Health{Text: fmt.Sprintf("%s %s, writable; ledger version %d, %d freeze(s)", what, info.Dir, info.Version, info.Freezes)}
}

// errText is an error and its hint on one line.
func errText(err error) string {
	if h := flakegate.ErrorHint(err); h != "" {
		return err.Error() + " (try: " + h + ")"
	}
	return err.Error()
}
