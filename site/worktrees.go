package site

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/attempt/sandbox"
	"github.com/flakegate/flakegate/git"
	"github.com/flakegate/flakegate/internal/flock"
	"github.com/flakegate/flakegate/transcript"
)

// Worktrees are the clean checkouts a check runs in, under <git common
// dir>/flakegate/worktrees (the repository's file system), reused between
// checks. A lock file keeps two checks of one repository from touching
// each other's trees. Each worker owns one base tree and one or two
// candidate trees, and the check runs in one of two modes (chooseTrees):
//
// Overlay mode, the default where the kernel allows it: each sandboxed
// attempt runs on a throwaway overlay of its tree
// (sandbox.Sandbox.Overlay), which writes nothing to the tree, so a
// worker needs one candidate tree and no tree is reset between attempts.
// A check that ends seals its trees (git.Seal: flakegate let them go
// pristine at their revision), and the next check opens a sealed tree
// with git.OpenWorktree: kept as it is at the same revision, or moved to
// the new one path by path, so opening costs what the two revisions'
// difference holds, not what the repository holds. A tree that is not
// sealed (a check was killed, or ran in reset mode) is reset and cleaned
// in full. The base tree is proven pristine (git.Pristine) before the
// check's first base attempt on it; a tree that fails its proof is not
// sealed again.
//
// Reset mode (no overlay, or no sandbox): the attempts write their tree,
// so every tree is reset and cleaned when the check opens it and after
// each attempt; the base tree is proven before every base attempt.
// Nothing is sealed. A worker has one candidate tree in both modes, so a
// retry runs in the very tree its first attempt ran in: with two taking
// turns, the tree's name (in /proc/self/mountinfo) told a retry from a
// first attempt.
type Worktrees struct {
	Workers []*WorkerTrees
	Overlay bool // attempts run on overlays; see check's chooseTrees
	lock    *os.File
	git     *git.Client
}

// WorkerTrees are the trees of one worker; only that worker touches them.
type WorkerTrees struct {
	Base *Tree
	Cand []*Tree // one: a retry runs in the tree its first attempt ran in
	next int     // the candidate tree of the next attempt
}

// Tree is one worktree at a fixed revision. A tree is released after each
// attempt and acquired before the next: in reset mode release starts `git
// reset --hard` and `git clean -ffdx`, acquire waits for them, so every
// attempt starts on a clean checkout; in overlay mode the attempt left
// the tree as it was and release does nothing.
type Tree struct {
	Dir     string
	SHA     string
	Side    string     // transcript.SideBase or transcript.SideCandidate
	GitDir  string     // its registered git folder (.git/worktrees/NAME)
	done    chan error // the clean in flight; nil when the tree is clean
	Overlay bool       // attempts never write the tree: no clean is needed

	How    git.How // how the check opened it (overlay mode)
	ready  bool    // prepared: at its revision, as git.OpenWorktree left it
	proven bool    // overlay mode: proven pristine by this check
	failed bool    // it failed its proof: never sealed
}

// MakeWorktreeRoot creates the folder of the worktrees, <git common
// dir>/flakegate/worktrees, and returns it.
func MakeWorktreeRoot(common string) (string, error) {
	root := filepath.Join(common, "flakegate", "worktrees")
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", &flakegate.Error{Code: flakegate.EINTERNAL, Op: "check", Path: root, Message: "cannot create the worktree folder", Err: err}
	}
	return root, nil
}

// OpenWorktrees takes the worktree lock of root (site.TreeRoot) and
// prepares the trees of n workers in root.Dir at the two revisions, for
// overlay or reset mode. The lock waits at most lock.Timeout.
func OpenWorktrees(ctx context.Context, g *git.Client, root TreeRoot, n int, baseSHA, candSHA string, overlay bool, lo flock.Options) (*Worktrees, error) {
	lo.What, lo.Op = "the worktree lock", "check"
	lock, err := flock.Lock(ctx, root.Lock, lo)
	if err != nil {
		return nil, err
	}
	w := &Worktrees{lock: lock, git: g, Overlay: overlay}
	var all []*Tree
	newTree := func(name, side, sha string) *Tree {
		t := &Tree{Dir: filepath.Join(root.Dir, name), Side: side, SHA: sha, Overlay: overlay}
		all = append(all, t)
		return t
	}
	for i := 0; i < n; i++ {
		wt := &WorkerTrees{
			Base: newTree(fmt.Sprintf("base-%d", i), transcript.SideBase, baseSHA),
			Cand: []*Tree{newTree(fmt.Sprintf("candidate-%d", i), transcript.SideCandidate, candSHA)},
		}
		w.Workers = append(w.Workers, wt)
	}
	if err := w.prepareAll(ctx, all); err != nil {
		w.Unlock()
		return nil, err
	}
	return w, nil
}

// BaseOnly is the worktrees of a run outside a check (doctor, `init
// --measure`): the first worker's base tree in root at sha, under lock,
// which the caller took; the caller prepares the tree (Prepare).
func BaseOnly(g *git.Client, root TreeRoot, sha string, overlay bool, lock *os.File) *Worktrees {
	t := &Tree{Dir: filepath.Join(root.Dir, "base-0"), Side: transcript.SideBase, SHA: sha, Overlay: overlay}
	return &Worktrees{Workers: []*WorkerTrees{{Base: t}}, lock: lock, git: g, Overlay: overlay}
}

// prepareAll prepares the trees: missing ones one by one (`git worktree
// add` writes the repository's shared worktree list); of the existing ones,
// the first worker's base and candidate trees in parallel (the preflight
// reads them), the others in the background, as if a clean were in flight:
// their first acquire waits for it.
func (w *Worktrees) prepareAll(ctx context.Context, trees []*Tree) error {
	var now, later []*Tree
	for i, t := range trees {
		if _, err := os.Stat(filepath.Join(t.Dir, ".git")); err != nil {
			if err := w.Prepare(ctx, t); err != nil {
				return err
			}
			continue
		}
		if i < 2 {
			now = append(now, t)
		} else {
			later = append(later, t)
		}
	}
	errs := make([]error, len(now))
	var wg sync.WaitGroup
	for i, t := range now {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = w.Prepare(ctx, t)
		}()
	}
	for _, t := range later {
		t.start(func(_ context.Context, t *Tree) error {
			return w.Prepare(context.WithoutCancel(ctx), t)
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Prepare checks t out clean at its revision and learns its git folder.
func (w *Worktrees) Prepare(ctx context.Context, t *Tree) error {
	err := w.checkout(ctx, t)
	t.ready = err == nil
	return err
}

func (w *Worktrees) checkout(ctx context.Context, t *Tree) error {
	dir := t.Dir
	open := func() (err error) {
		if w.Overlay {
			t.How, err = w.git.OpenWorktree(ctx, dir, t.SHA)
		} else {
			err = w.git.PrepareWorktree(ctx, dir, t.SHA)
		}
		if err == nil {
			t.GitDir, err = w.git.WorktreeGitDir(ctx, dir)
		}
		return err
	}
	err := open()
	if err != nil && ctx.Err() == nil && flakegate.ErrorCode(err) != flakegate.EINVALID {
		// A tree an attempt wrote (an older flakegate's reset mode, or
		// sandbox mode none) may hold a folder it left unreadable
		// (mode 000), which git can neither reset nor clean: unlock
		// every folder and open it once more.
		if sandbox.Unlock(dir) == nil {
			err = open()
		}
	}
	if err == nil && (!w.Overlay || t.How == git.Reset) {
		// Reset in full: an attempt may have written it (an older
		// flakegate's reset mode, or sandbox mode none).
		err = normalizeTree(dir)
	}
	if err != nil {
		if ctx.Err() != nil {
			return flakegate.Interrupted(ctx)
		}
		if flakegate.ErrorCode(err) == flakegate.EINVALID {
			return err
		}
		return &flakegate.Error{Code: flakegate.EINTERNAL, Op: "check", Path: dir, Message: "cannot prepare the worktree", Err: err,
			Hint: "remove the folder and run 'git worktree prune'; flakegate recreates it"}
	}
	return nil
}

// Prove proves t pristine, once per check in overlay mode (no attempt
// writes the tree), before every call in reset mode. A failure is
// flakegate's own (exit 3), and the tree is not sealed.
func (w *Worktrees) Prove(ctx context.Context, t *Tree) error {
	if t.proven {
		return nil
	}
	err := w.git.Pristine(ctx, t.GitDir, t.Dir, t.SHA)
	if err != nil {
		if ctx.Err() != nil {
			return flakegate.Interrupted(ctx)
		}
		t.failed = true
		return &flakegate.Error{Code: flakegate.EINTERNAL, Op: "check", Path: t.Dir,
			Message: fmt.Sprintf("the %s worktree is not a pristine checkout of the %s (opened: %s)", t.Side, t.Side, t.howString()), Err: err,
			Hint: "run the check again: the worktree is not sealed, so the next check resets and cleans it in full"}
	}
	t.proven = t.Overlay
	return nil
}

func (t *Tree) howString() string {
	if t.How == 0 {
		return "reset and cleaned"
	}
	return t.How.String()
}

// NextCandidate returns the candidate tree for the next attempt.
func (wt *WorkerTrees) NextCandidate() *Tree {
	t := wt.Cand[wt.next]
	wt.next = (wt.next + 1) % len(wt.Cand)
	return t
}

// Acquire waits until t is clean. It waits even when the check is being
// cancelled: a clean takes milliseconds, and a tree must never have two.
func (t *Tree) Acquire() error {
	if t.done == nil {
		return nil
	}
	err := <-t.done
	t.done = nil
	return err
}

// Release starts cleaning t in the background after an attempt, unless
// the attempt ran on an overlay of t (it wrote nothing to t).
func (t *Tree) Release(clean func(context.Context, *Tree) error) {
	if t.Overlay {
		return
	}
	t.start(clean)
}

// start runs clean on t in the background; acquire waits for it. The
// clean is not cancelled with the check: a git process killed halfway
// leaves lock files behind.
func (t *Tree) start(clean func(context.Context, *Tree) error) {
	done := make(chan error, 1)
	t.done = done
	go func() { done <- clean(context.Background(), t) }()
}

// drain waits for every clean in flight, so no git process runs in the
// trees once the lock is released.
func (w *Worktrees) drain() {
	for _, wt := range w.Workers {
		for _, t := range append([]*Tree{wt.Base}, wt.Cand...) {
			if t.done != nil {
				<-t.done
				t.done = nil
			}
		}
	}
}

// Unlock ends the check's use of the trees: it waits for the git work in
// flight, seals the trees it prepared (overlay mode: no attempt wrote
// them) unless one failed its proof, and releases the lock.
func (w *Worktrees) Unlock() {
	if w.lock == nil {
		return
	}
	w.drain()
	if w.Overlay {
		for _, wt := range w.Workers {
			for _, t := range append([]*Tree{wt.Base}, wt.Cand...) {
				if t.ready && !t.failed {
					_ = w.git.Seal(t.GitDir, t.SHA) // a missing seal costs the next check a reset, nothing else
				}
			}
		}
	}
	w.lock.Close() // releases the flock
	w.lock = nil
}
