// Package atomicfile replaces files so that a reader, a crash or a power
// cut sees either the old bytes or the new ones, never a mix: the bytes go
// to a temporary file in the same folder, which is fsynced, renamed over
// the final name, and then the folder is fsynced so the rename itself is
// durable. Every file flakegate writes for keeps goes through here.
package atomicfile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// File is a temporary file that takes the place of its final name on
// Commit. Write to it like an *os.File; call Cleanup in a defer, which
// removes the temporary file unless Commit succeeded.
type File struct {
	*os.File
	path string
	perm os.FileMode
	done bool

	// Step, when set, is called after the data is synced ("written") and
	// after the rename ("renamed"), before the folder is synced. Crash
	// tests kill the process there.
	Step func(step string)
}

// New creates the temporary file that will replace path with mode perm.
// The temporary name starts with "." + the final name and ends in ".tmp",
// so a listing can tell it apart.
func New(path string, perm os.FileMode) (*File, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return nil, err
	}
	return &File{File: f, path: path, perm: perm}, nil
}

// Commit fsyncs the data, sets the mode, renames the file over its final
// name and fsyncs the folder. On an error before the rename the final
// name still holds its old content; Cleanup removes the temporary file.
func (f *File) Commit() error {
	err := f.File.Chmod(f.perm)
	if err == nil {
		err = f.File.Sync()
	}
	if cerr := f.File.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	f.step("written")
	if err := os.Rename(f.File.Name(), f.path); err != nil {
		return err
	}
	f.done = true
	f.step("renamed")
	return SyncDir(filepath.Dir(f.path))
}

// Cleanup closes and removes the temporary file unless Commit renamed it.
// It is safe to call more than once and after Commit.
func (f *File) Cleanup() {
	if f.done {
		return
	}
	f.File.Close()
	os.Remove(f.File.Name())
	f.done = true
}

func (f *File) step(s string) {
	if f.Step != nil {
		f.Step(s)
	}
}

// WriteFile replaces path with data, durably and atomically.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	return Write(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// Write replaces path with what write writes, durably and atomically. When
// write fails, path keeps its old content and write's error is returned.
func Write(path string, perm os.FileMode, write func(io.Writer) error) error {
	f, err := New(path, perm)
	if err != nil {
		return err
	}
	defer f.Cleanup()
	if err := write(f); err != nil {
		return err
	}
	return f.Commit()
}

// CreateOnce creates path holding data, durably, unless path exists
// (then it changes nothing and returns nil): a temporary file written
// and fsynced, linked to path (link(2) fails when the name exists, so
// of racing writers the first to land stays whole), removed, and the
// folder fsynced. No lock is needed for a file that is written once and
// never changed. step, when set, is called after the sync ("synced") and
// after the link ("linked").
func CreateOnce(path string, data []byte, perm os.FileMode, step func(string)) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if step != nil {
		step("synced")
	}
	if err := os.Link(tmp, path); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	if step != nil {
		step("linked")
	}
	return SyncDir(filepath.Dir(path))
}

// Publish replaces path with data atomically for readers, not durably:
// a temporary file renamed over path, nothing fsynced. It is for output
// that a crash may lose but must never show half written (a check's
// per-triple files in its output folder, hundreds at once for a suite,
// where two fsyncs each cost more than the test).
func Publish(path string, data []byte, perm os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// SyncDir fsyncs a folder, making the names created, renamed or removed
// in it durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
