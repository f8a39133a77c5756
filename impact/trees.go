// The two trees, compared file by file on disk: what a test can read is
// what is on disk, so the comparison is of the checkouts themselves (with
// whatever a prepare left in them), not of the commits.

package impact

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/flakegate/flakegate"
)

// Kinds of Change.
const (
	Added    = "added"    // in the candidate's tree only
	Removed  = "removed"  // in the base's tree only
	Modified = "modified" // in both, with other bytes, another type, link or execute bit
)

// Change is one path that differs between the trees.
type Change struct {
	Path string // repository-relative, with '/'
	Kind string // Added, Removed or Modified
}

// Trees are the base's tree and the graded candidate's, compared.
type Trees struct {
	Base, Candidate string // the folders compared
	base, cand      map[string]entry
	changes         []Change // by path
	changed         map[string]string
	text            sync.Map // side+path -> the file's text, read once (pytest.go)
}

// entry is one file of a tree: a regular file, a symlink or a special
// file. Folders are not entries.
type entry struct {
	kind byte // 'f' regular, 'l' symlink, 's' special
	size int64
	exec bool
	link string
}

// Compare walks both trees and lists every path that differs: a file in
// one tree only, or in both with other bytes, another type, another
// symlink target or another execute bit (a test may run it). `.git` (a
// worktree's file or a folder) is left out. A symlink is compared by its
// target's text; one whose target lies inside the tree also differs
// wherever its target does (so that a test reading through it sees the
// change), and one whose target lies outside the tree differs unless both
// resolve to the same place.
func Compare(ctx context.Context, base, candidate string) (*Trees, error) {
	t := &Trees{Base: base, Candidate: candidate, changed: map[string]string{}}
	var err error
	if t.base, err = walkTree(ctx, base); err != nil {
		return nil, err
	}
	if t.cand, err = walkTree(ctx, candidate); err != nil {
		return nil, err
	}
	var same []string // paths of regular files to compare byte by byte
	for p, b := range t.base {
		c, ok := t.cand[p]
		switch {
		case !ok:
			t.changed[p] = Removed
		case b.kind != c.kind || b.exec != c.exec || b.size != c.size || b.link != c.link:
			t.changed[p] = Modified
		case b.kind == 'f':
			same = append(same, p)
		case b.kind == 'l' && !t.sameLink(p, b.link):
			t.changed[p] = Modified
		}
	}
	for p := range t.cand {
		if _, ok := t.base[p]; !ok {
			t.changed[p] = Added
		}
	}
	differ, err := compareFiles(ctx, base, candidate, same)
	if err != nil {
		return nil, err
	}
	for _, p := range differ {
		t.changed[p] = Modified
	}
	t.aliasLinks()
	for p, k := range t.changed {
		t.changes = append(t.changes, Change{Path: p, Kind: k})
	}
	sort.Slice(t.changes, func(i, j int) bool { return t.changes[i].Path < t.changes[j].Path })
	return t, nil
}

// walkTree lists the entries of the tree at root.
func walkTree(ctx context.Context, root string) (map[string]entry, error) {
	out := map[string]entry{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if d.Name() == ".git" && p != root {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		e := entry{kind: 's'}
		switch {
		case fi.Mode().IsRegular():
			e = entry{kind: 'f', size: fi.Size(), exec: fi.Mode()&0o100 != 0}
		case fi.Mode()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			e = entry{kind: 'l', link: link}
		}
		out[rel] = e
		return nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &flakegate.Error{Code: flakegate.EINTERNAL, Op: "impact", Path: root, Message: "cannot read the tree", Err: err}
	}
	return out, nil
}

// linkTarget is where the symlink at rel points inside the tree
// (cleaned, repository-relative), and false when its target lies
// outside it.
func linkTarget(rel, link string) (string, bool) {
	if path.IsAbs(link) {
		return "", false
	}
	target := path.Join(path.Dir(rel), link)
	if target == ".." || strings.HasPrefix(target, "../") {
		return "", false
	}
	return target, true
}

// sameLink reports whether the symlink rel, whose text is link in both
// trees, names the same thing from both: a target inside the tree is
// compared as a path of its own (aliasLinks), one outside must resolve to
// the same place from both trees.
func (t *Trees) sameLink(rel, link string) bool {
	if _, in := linkTarget(rel, link); in {
		return true
	}
	resolve := func(root string) string {
		r, err := filepath.EvalSymlinks(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			return "dangling"
		}
		return r
	}
	return resolve(t.Base) == resolve(t.Candidate)
}

// aliasLinks makes a change under a symlink's in-tree target a change
// under the symlink too (a test that reads p/data, a link to
// ../common/data, reads what changed there), following links to links a
// few times; a chain longer than that makes the link itself changed.
func (t *Trees) aliasLinks() {
	type link struct{ at, target string }
	var links []link
	for _, side := range []map[string]entry{t.base, t.cand} {
		for p, e := range side {
			if target, in := linkTarget(p, e.link); e.kind == 'l' && in {
				links = append(links, link{p, target})
			}
		}
	}
	for round := 0; round < 8; round++ {
		added := false
		for _, l := range links {
			if within(l.at, l.target) { // a link to a folder that holds it
				if t.anyChangeUnder(l.target) {
					t.changed[l.at] = Modified
				}
				continue
			}
			for p := range t.changed {
				rest, ok := strings.CutPrefix(p, l.target)
				if !ok || rest != "" && !strings.HasPrefix(rest, "/") {
					continue
				}
				if _, seen := t.changed[l.at+rest]; !seen {
					t.changed[l.at+rest] = Modified
					added = true
				}
			}
		}
		if !added {
			return
		}
	}
	for _, l := range links {
		t.changed[l.at] = Modified
	}
}

// anyChangeUnder reports whether a path under dir changed.
func (t *Trees) anyChangeUnder(dir string) bool {
	for p := range t.changed {
		if within(p, dir) {
			return true
		}
	}
	return false
}

// compareFiles compares the regular files paths (of equal size in both
// trees) byte by byte, on a few workers, and returns those that differ.
func compareFiles(ctx context.Context, base, cand string, paths []string) ([]string, error) {
	work := make(chan string)
	var mu sync.Mutex
	var differ []string
	var firstErr error
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range work {
				same, err := sameBytes(filepath.Join(base, filepath.FromSlash(p)), filepath.Join(cand, filepath.FromSlash(p)))
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				if !same {
					differ = append(differ, p)
				}
				mu.Unlock()
			}
		}()
	}
	for _, p := range paths {
		if ctx.Err() != nil {
			break
		}
		work <- p
	}
	close(work)
	wg.Wait()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if firstErr != nil {
		return nil, &flakegate.Error{Code: flakegate.EINTERNAL, Op: "impact", Message: "cannot compare the trees", Err: firstErr}
	}
	return differ, nil
}

// sameBytes reports whether the files a and b hold the same bytes.
func sameBytes(a, b string) (bool, error) {
	fa, err := os.Open(a)
	if err != nil {
		return false, err
	}
	defer fa.Close()
	fb, err := os.Open(b)
	if err != nil {
		return false, err
	}
	defer fb.Close()
	ba, bb := make([]byte, 64<<10), make([]byte, 64<<10)
	for {
		na, ea := io.ReadFull(fa, ba)
		nb, eb := io.ReadFull(fb, bb)
		if na != nb || !bytes.Equal(ba[:na], bb[:nb]) {
			return false, nil
		}
		endA := errors.Is(ea, io.EOF) || errors.Is(ea, io.ErrUnexpectedEOF)
		endB := errors.Is(eb, io.EOF) || errors.Is(eb, io.ErrUnexpectedEOF)
		if ea != nil && !endA {
			return false, ea
		}
		if eb != nil && !endB {
			return false, eb
		}
		if endA || endB {
			return endA && endB, nil
		}
	}
}

// Changes lists the paths that differ, by path.
func (t *Trees) Changes() []Change { return append([]Change(nil), t.changes...) }

// Kind is how path p differs ("" when it does not).
func (t *Trees) Kind(p string) string { return t.changed[p] }

// has reports whether the tree of one side holds the file p.
func (t *Trees) has(candidate bool, p string) bool {
	if candidate {
		_, ok := t.cand[p]
		return ok
	}
	_, ok := t.base[p]
	return ok
}

// files lists the files of one side.
func (t *Trees) files(candidate bool) map[string]entry {
	if candidate {
		return t.cand
	}
	return t.base
}

// first returns the first changed path (in path order) that match
// accepts, and false when none does.
func (t *Trees) first(match func(p string) bool) (string, bool) {
	for _, c := range t.changes {
		if match(c.Path) {
			return c.Path, true
		}
	}
	return "", false
}

// within reports whether p is dir or lies under it ("." holds everything).
func within(p, dir string) bool {
	return dir == "." || dir == "" || p == dir || strings.HasPrefix(p, dir+"/")
}

// readText returns the text of file p of one side ("" when it cannot be
// read), read once.
func (t *Trees) readText(candidate bool, p string) string {
	root := t.Base
	key := "b" + p
	if candidate {
		root, key = t.Candidate, "c"+p
	}
	if s, ok := t.text.Load(key); ok {
		return s.(string)
	}
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
	s := ""
	if err == nil {
		s = string(b)
	}
	t.text.Store(key, s)
	return s
}
