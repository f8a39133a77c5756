package filestore

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/internal/atomicfile"
)

// Info is what Inspect finds of a store folder.
type Info struct {
	Dir string // absolute
	// Exists is false when the folder is not there yet: the first check
	// or freeze creates it (Creatable says whether it can).
	Exists, Creatable bool
	// Version is ledger.json's version (the current one when the ledger
	// has no file yet); Freezes counts its entries.
	Version, Freezes int
}

// Inspect reads the store in dir without creating or repairing anything:
// whether it exists and can be written, and its ledger's version and size
// (`flakegate doctor`). A ledger.json that Open would refuse is an error
// with the same message and hint.
func Inspect(dir string) (Info, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Info{}, fsError("inspect ledger", dir, err)
	}
	info := Info{Dir: abs, Version: ledgerVersion}
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// The nearest existing parent must let the folder be created.
		p := filepath.Dir(abs)
		for {
			if _, err := os.Stat(p); err == nil || filepath.Dir(p) == p {
				break
			}
			p = filepath.Dir(p)
		}
		info.Creatable = writable(p)
		return info, nil
	case err != nil:
		return info, fsError("inspect ledger", abs, err)
	case !fi.IsDir():
		return info, &flakegate.Error{Code: flakegate.EINVALID, Op: "inspect ledger", Path: abs,
			Message: "not a folder", Hint: "pass --ledger DIR naming a folder (or a postgres:// DSN)"}
	}
	info.Exists, info.Creatable = true, writable(abs)
	if !info.Creatable {
		return info, fsError("inspect ledger", abs, &fs.PathError{Op: "write", Path: abs, Err: fs.ErrPermission})
	}
	doc, err := (&Store{dir: abs}).readLedger()
	if err != nil {
		return info, err
	}
	info.Version, info.Freezes = doc.Version, len(doc.Freezes)
	return info, nil
}

// writable reports whether a file can be created in dir: the temporary
// file of an atomic write that is never committed.
func writable(dir string) bool {
	f, err := atomicfile.New(filepath.Join(dir, "doctor-probe"), 0o600)
	if err != nil {
		return false
	}
	f.Cleanup()
	return true
}
