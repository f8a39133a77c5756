// Package store opens the store a command names: the embedded file store
// under the git common directory by default, another folder, or a shared
// PostgreSQL database.
package store

import (
	"context"
	"path/filepath"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/filestore"
	"github.com/flakegate/flakegate/postgres"
)

// DefaultDir is the folder of the embedded store inside the git common
// directory, shared by every worktree of the repository.
const DefaultDir = "flakegate"

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
		s, err := filestore.Open(filepath.Join(gitCommonDir, DefaultDir))
		if err != nil {
			return nil, err
		}
		return s, nil
	}
}
