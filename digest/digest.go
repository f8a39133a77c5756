// Package digest computes the sha256 digests that pin a fixture or a
// property file: File for one file (the same hex as sha256sum), Tree for a
// folder, Path for either.
//
// # Tree digest, version 1
//
// A folder's digest is the lowercase hex sha256 of this byte stream:
//
//	"flakegate-tree-v1\n"
//	then, for every entry, sorted by its path's bytes:
//	<type> " " <hex> " " <path> "\x00"
//
// An entry is every regular file and every symlink under the folder, at
// any depth. <path> is the entry's path relative to the folder, with "/"
// between components, bytes exactly as the file system stores them (no
// Unicode normalization), never starting with "./". Sorting is by plain
// byte comparison of these paths ("a.b" sorts before "a/b").
//
//	type f: a regular file without the owner's execute bit; <hex> is the
//	        sha256 of its contents.
//	type x: a regular file with the owner's execute bit (the bit git
//	        records as mode 100755); <hex> is the sha256 of its contents.
//	type l: a symlink, never followed; <hex> is the sha256 of its target
//	        text as readlink returns it.
//
// <hex> is 64 lowercase hex digits. Each entry ends with a NUL byte (as in
// `sha256sum --zero`): a path can hold any byte except NUL and "/" splits
// components, so the stream reads back to exactly one list of entries.
//
// Folders are not entries: an empty folder adds nothing, the same as in
// git, so a folder's digest depends only on what a git checkout can hold.
// Permission bits other than the owner's execute bit, owners, times and
// the folder's own name do not count. A fifo, socket or device under the
// folder is an error (EINVALID). The digest of an empty folder is the
// sha256 of the header line alone.
//
// Any change to this format must change the header line; FORMAT.md holds
// the same description with a worked example.
package digest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/flakegate/flakegate"
)

// TreeHeader is the first line of the stream a tree digest hashes.
const TreeHeader = "flakegate-tree-v1\n"

// bufSize is the read size per call; 256 KiB keeps a buffer in L2 cache
// and the syscall count low.
const bufSize = 256 << 10

var bufPool = sync.Pool{New: func() any {
	b := make([]byte, bufSize)
	return &b
}}

// File returns the hex sha256 of the bytes of the file at path (following
// a symlink), the same value sha256sum prints. The file is streamed, never
// loaded whole. A missing file is ENOTFOUND; a folder or a special file is
// EINVALID.
func File(path string) (string, error) { return file(context.Background(), path) }

func file(ctx context.Context, path string) (string, error) {
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	sum, err := hashFile(ctx, path, *bp, sha256.New())
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(sum[:]), nil
}

// Path returns File(p) for a regular file and Tree(ctx, p) for a folder.
// A symlink named as p itself is followed, as sha256sum does; symlinks
// inside a folder never are. A missing path is ENOTFOUND naming p.
func Path(ctx context.Context, p string) (string, error) {
	fi, err := os.Lstat(p)
	if err != nil {
		return "", pathError(p, err)
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		fi, err = os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return "", &flakegate.Error{Code: flakegate.ENOTFOUND, Op: "digest", Path: p, Message: "symlink to a missing file"}
		}
		if err != nil {
			return "", pathError(p, err)
		}
	}
	switch {
	case fi.Mode().IsRegular():
		return file(ctx, p)
	case fi.IsDir():
		return Tree(ctx, p)
	default:
		return "", specialFile(p, fi.Mode())
	}
}

// entry is one regular file or symlink of a tree.
type entry struct {
	rel  string // slash-separated path relative to the tree's root
	typ  byte   // 'f', 'x' or 'l'
	size int64  // file size, to hand out the biggest files first
	sum  [sha256.Size]byte
}

// Tree returns the version 1 digest of the folder dir (see the package
// documentation). Files are hashed in parallel by a bounded pool of
// workers, each streaming through one pooled buffer, so memory stays
// bounded whatever the folder's size. dir itself may be a symlink to a
// folder. A missing dir is ENOTFOUND; a dir that is not a folder is
// EINVALID.
func Tree(ctx context.Context, dir string) (string, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return "", pathError(dir, err)
	}
	if !fi.IsDir() {
		return "", &flakegate.Error{Code: flakegate.EINVALID, Op: "digest", Path: dir, Message: "not a folder"}
	}
	root := dir
	if lfi, err := os.Lstat(dir); err == nil && lfi.Mode()&fs.ModeSymlink != 0 {
		// WalkDir would not enter a symlinked root.
		if root, err = filepath.EvalSymlinks(dir); err != nil {
			return "", pathError(dir, err)
		}
	}
	entries, err := walk(ctx, root)
	if err != nil {
		return "", err
	}
	if err := hashEntries(ctx, root, entries); err != nil {
		return "", err
	}
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.rel, b.rel) })
	h := sha256.New()
	io.WriteString(h, TreeHeader)
	line := make([]byte, 0, 256)
	for _, e := range entries {
		line = append(line[:0], e.typ, ' ')
		line = hex.AppendEncode(line, e.sum[:])
		line = append(line, ' ')
		line = append(line, e.rel...)
		line = append(line, 0)
		h.Write(line)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// walk lists the tree's entries; symlinks are read here, files later.
func walk(ctx context.Context, root string) ([]entry, error) {
	var entries []entry
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return pathError(p, err)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		switch t := d.Type(); {
		case t&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return pathError(p, err)
			}
			entries = append(entries, entry{rel: rel, typ: 'l', sum: sha256.Sum256([]byte(target))})
		case t.IsRegular():
			fi, err := d.Info()
			if err != nil {
				return pathError(p, err)
			}
			typ := byte('f')
			if fi.Mode()&0o100 != 0 {
				typ = 'x'
			}
			entries = append(entries, entry{rel: rel, typ: typ, size: fi.Size()})
		default:
			return specialFile(p, t)
		}
		return nil
	})
	return entries, err
}

// workers is the size of the hashing pool: one per usable CPU. Files
// under digest were usually just checked out, so they are read from the
// page cache and hashing, not waiting, is the cost.
func workers() int { return runtime.GOMAXPROCS(0) }

// hashEntries fills in the sums of the regular files among entries with a
// bounded pool of workers, biggest files first so that one large file
// does not run alone at the end.
func hashEntries(ctx context.Context, root string, entries []entry) error {
	var files []int
	for i := range entries {
		if entries[i].typ != 'l' {
			files = append(files, i)
		}
	}
	slices.SortStableFunc(files, func(a, b int) int {
		switch sa, sb := entries[a].size, entries[b].size; {
		case sa > sb:
			return -1
		case sa < sb:
			return 1
		}
		return 0
	})
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	work := make(chan int)
	errs := make([]error, len(entries))
	var wg sync.WaitGroup
	for range min(workers(), len(files)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			bp := bufPool.Get().(*[]byte)
			defer bufPool.Put(bp)
			h := sha256.New()
			for i := range work {
				e := &entries[i]
				e.sum, errs[i] = hashFile(ctx, filepath.Join(root, filepath.FromSlash(e.rel)), *bp, h)
				if errs[i] != nil {
					cancel()
				}
			}
		}()
	}
feed:
	for _, i := range files {
		select {
		case work <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	// Report the first failure in path order, not whichever worker lost
	// the race, so that the same tree always gives the same error.
	var firstErr error
	first := ""
	for i, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) && (firstErr == nil || entries[i].rel < first) {
			firstErr, first = err, entries[i].rel
		}
	}
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}

// hashFile streams the regular file at path through h (reset first, a
// sha256) using buf.
func hashFile(ctx context.Context, path string, buf []byte, h hash.Hash) ([sha256.Size]byte, error) {
	var sum [sha256.Size]byte
	if err := ctx.Err(); err != nil {
		return sum, err
	}
	f, err := openFile(path)
	if err != nil {
		return sum, pathError(path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return sum, pathError(path, err)
	}
	if fi.IsDir() {
		return sum, &flakegate.Error{Code: flakegate.EINVALID, Op: "digest", Path: path, Message: "is a folder, not a file"}
	}
	if !fi.Mode().IsRegular() {
		return sum, specialFile(path, fi.Mode())
	}
	h.Reset()
	for chunk := 0; ; chunk++ {
		n, err := f.Read(buf)
		h.Write(buf[:n])
		if err == io.EOF {
			break
		}
		if err != nil {
			return sum, pathError(path, err)
		}
		if chunk%64 == 63 {
			if err := ctx.Err(); err != nil {
				return sum, err
			}
		}
	}
	h.Sum(sum[:0])
	return sum, nil
}

// pathError turns a file system error on p into a user-facing error:
// ENOTFOUND for a missing path, EINVALID for one flakegate may not read.
func pathError(p string, err error) error {
	var fe *flakegate.Error
	if errors.As(err, &fe) {
		return err
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	code := flakegate.EINTERNAL
	switch {
	case errors.Is(err, fs.ErrNotExist):
		code = flakegate.ENOTFOUND
	case errors.Is(err, fs.ErrPermission):
		code = flakegate.EINVALID
	}
	return &flakegate.Error{Code: code, Op: "digest", Path: p, Err: err}
}

func specialFile(p string, m fs.FileMode) error {
	return &flakegate.Error{
		Code:    flakegate.EINVALID,
		Op:      "digest",
		Path:    p,
		Message: fmt.Sprintf("is a special file (%s); only files, folders and symlinks have a digest", m.Type()),
	}
}
