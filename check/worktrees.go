package check

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	sitepkg "github.com/flakegate/flakegate/site"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/attempt/sandbox"
	"github.com/flakegate/flakegate/git"
	"github.com/flakegate/flakegate/internal/flock"
	"github.com/flakegate/flakegate/transcript"
)

// worktrees are the clean checkouts a check runs in, under <git common
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
type worktrees struct {
	workers []*workerTrees
	lock    *os.File
	git     *git.Client
	overlay bool // attempts run on overlays; see chooseTrees
}

// workerTrees are the trees of one worker; only that worker touches them.
type workerTrees struct {
	base *tree
	cand []*tree // one: a retry runs in the tree its first attempt ran in
	next int     // the candidate tree of the next attempt
}

// tree is one worktree at a fixed revision. A tree is released after each
// attempt and acquired before the next: in reset mode release starts `git
// reset --hard` and `git clean -ffdx`, acquire waits for them, so every
// attempt starts on a clean checkout; in overlay mode the attempt left
// the tree as it was and release does nothing.
type tree struct {
	dir     string
	sha     string
	side    string     // transcript.SideBase or transcript.SideCandidate
	gitDir  string     // its registered git folder (.git/worktrees/NAME)
	done    chan error // the clean in flight; nil when the tree is clean
	overlay bool       // attempts never write the tree: no clean is needed

	how    git.How // how the check opened it (overlay mode)
	ready  bool    // prepared: at its revision, as git.OpenWorktree left it
	proven bool    // overlay mode: proven pristine by this check
	failed bool    // it failed its proof: never sealed
}

// makeWorktreeRoot creates the folder of the worktrees, <git common
// dir>/flakegate/worktrees, and returns it.
func makeWorktreeRoot(common string) (string, error) {
	root := filepath.Join(common, "flakegate", "worktrees")
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", &flakegate.Error{Code: flakegate.EINTERNAL, Op: "check", Path: root, Message: "cannot create the worktree folder", Err: err}
	}
	return root, nil
}

// openWorktrees takes the worktree lock of root (site.treeRoot) and
// prepares the trees of n workers in root.dir at the two revisions, for
// overlay or reset mode. The lock waits at most lock.Timeout.
func openWorktrees(ctx context.Context, g *git.Client, root treeRoot, n int, baseSHA, candSHA string, overlay bool, lo flock.Options) (*worktrees, error) {
	lo.What, lo.Op = "the worktree lock", "check"
	lock, err := flock.Lock(ctx, root.lock, lo)
	if err != nil {
		return nil, err
	}
	w := &worktrees{lock: lock, git: g, overlay: overlay}
	var all []*tree
	newTree := func(name, side, sha string) *tree {
		t := &tree{dir: filepath.Join(root.dir, name), side: side, sha: sha, overlay: overlay}
		all = append(all, t)
		return t
	}
	for i := 0; i < n; i++ {
		wt := &workerTrees{
			base: newTree(fmt.Sprintf("base-%d", i), transcript.SideBase, baseSHA),
			cand: []*tree{newTree(fmt.Sprintf("candidate-%d", i), transcript.SideCandidate, candSHA)},
		}
		w.workers = append(w.workers, wt)
	}
	if err := w.prepareAll(ctx, all); err != nil {
		w.unlock()
		return nil, err
	}
	return w, nil
}

// prepareAll prepares the trees: missing ones one by one (`git worktree
// add` writes the repository's shared worktree list); of the existing ones,
// the first worker's base and candidate trees in parallel (the preflight
// reads them), the others in the background, as if a clean were in flight:
// their first acquire waits for it.
func (w *worktrees) prepareAll(ctx context.Context, trees []*tree) error {
	var now, later []*tree
	for i, t := range trees {
		if _, err := os.Stat(filepath.Join(t.dir, ".git")); err != nil {
			if err := w.prepare(ctx, t); err != nil {
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
			errs[i] = w.prepare(ctx, t)
		}()
	}
	for _, t := range later {
		t.start(func(_ context.Context, t *tree) error {
			return w.prepare(context.WithoutCancel(ctx), t)
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

// prepare checks t out clean at its revision and learns its git folder.
func (w *worktrees) prepare(ctx context.Context, t *tree) error {
	err := w.checkout(ctx, t)
	t.ready = err == nil
	return err
}

func (w *worktrees) checkout(ctx context.Context, t *tree) error {
	dir := t.dir
	open := func() (err error) {
		if w.overlay {
			t.how, err = w.git.OpenWorktree(ctx, dir, t.sha)
		} else {
			err = w.git.PrepareWorktree(ctx, dir, t.sha)
		}
		if err == nil {
			t.gitDir, err = w.git.WorktreeGitDir(ctx, dir)
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
	if err == nil && (!w.overlay || t.how == git.Reset) {
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

// prove proves t pristine, once per check in overlay mode (no attempt
// writes the tree), before every call in reset mode. A failure is
// flakegate's own (exit 3), and the tree is not sealed.
func (w *worktrees) prove(ctx context.Context, t *tree) error {
	if t.proven {
		return nil
	}
	err := w.git.Pristine(ctx, t.gitDir, t.dir, t.sha)
	if err != nil {
		if ctx.Err() != nil {
			return flakegate.Interrupted(ctx)
		}
		t.failed = true
		return &flakegate.Error{Code: flakegate.EINTERNAL, Op: "check", Path: t.dir,
			Message: fmt.Sprintf("the %s worktree is not a pristine checkout of the %s (opened: %s)", t.side, t.side, t.howString()), Err: err,
			Hint: "run the check again: the worktree is not sealed, so the next check resets and cleans it in full"}
	}
	t.proven = t.overlay
	return nil
}

func (t *tree) howString() string {
	if t.how == 0 {
		return "reset and cleaned"
	}
	return t.how.String()
}

// nextCandidate returns the candidate tree for the next attempt.
func (wt *workerTrees) nextCandidate() *tree {
	t := wt.cand[wt.next]
	wt.next = (wt.next + 1) % len(wt.cand)
	return t
}

// acquire waits until t is clean. It waits even when the check is being
// cancelled: a clean takes milliseconds, and a tree must never have two.
func (t *tree) acquire() error {
	if t.done == nil {
		return nil
	}
	err := <-t.done
	t.done = nil
	return err
}

// release starts cleaning t in the background after an attempt, unless
// the attempt ran on an overlay of t (it wrote nothing to t).
func (t *tree) release(clean func(context.Context, *tree) error) {
	if t.overlay {
		return
	}
	t.start(clean)
}

// start runs clean on t in the background; acquire waits for it. The
// clean is not cancelled with the check: a git process killed halfway
// leaves lock files behind.
func (t *tree) start(clean func(context.Context, *tree) error) {
	done := make(chan error, 1)
	t.done = done
	go func() { done <- clean(context.Background(), t) }()
}

// drain waits for every clean in flight, so no git process runs in the
// trees once the lock is released.
func (w *worktrees) drain() {
	for _, wt := range w.workers {
		for _, t := range append([]*tree{wt.base}, wt.cand...) {
			if t.done != nil {
				<-t.done
				t.done = nil
			}
		}
	}
}

// unlock ends the check's use of the trees: it waits for the git work in
// flight, seals the trees it prepared (overlay mode: no attempt wrote
// them) unless one failed its proof, and releases the lock.
func (w *worktrees) unlock() {
	if w.lock == nil {
		return
	}
	w.drain()
	if w.overlay {
		for _, wt := range w.workers {
			for _, t := range append([]*tree{wt.base}, wt.cand...) {
				if t.ready && !t.failed {
					_ = w.git.Seal(t.gitDir, t.sha) // a missing seal costs the next check a reset, nothing else
				}
			}
		}
	}
	w.lock.Close() // releases the flock
	w.lock = nil
}

// chooseTrees picks how attempts get a pristine tree (overlay or reset
// mode, see worktrees) before the trees are opened: overlay mode when the
// attempts are sandboxed and the sandbox probe (probeSandbox) ran an
// attempt on an overlay of a folder in root, the worktree folder.
func (c *checker) chooseTrees(ctx context.Context, root string) (overlay bool, why string, err error) {
	if c.iso.Mode != sitepkg.IsolationBwrap {
		return false, "the attempts are not sandboxed", nil
	}
	return c.probeSandbox(ctx, root)
}

// sayTrees writes the attempt trees' mode, and in overlay mode how the
// first worker's trees were opened, to the check's progress (stderr).
func (c *checker) sayTrees(why string, root treeRoot) {
	if root.why != "" {
		c.say("worktrees: " + c.redact(root.why))
	}
	if !c.trees.overlay {
		c.say("attempt trees: reset and cleaned after each attempt (" + c.redact(why) + ")")
		return
	}
	var hows []string
	wt := c.trees.workers[0]
	for _, t := range append([]*tree{wt.base}, wt.cand...) {
		if t.how != 0 {
			hows = append(hows, filepath.Base(t.dir)+" "+t.how.String())
		}
	}
	lv := c.iso.Sandbox.Level
	where := ""
	if !lv.Root {
		where = " in the helper's user namespace (flakegate is not root)"
	}
	if !c.iso.Sandbox.Overlay {
		c.say("attempt trees: a fresh copy per attempt" + where + ", removed after it (" + c.redact(why) + "; the worktrees are never written; " + strings.Join(hows, ", ") + ")")
		return
	}
	c.say("attempt trees: a throwaway overlay per attempt" + where + " (the worktrees are never written; " + strings.Join(hows, ", ") + ")")
}

// say writes one line to the check's progress, as a note.
func (c *site) say(line string) { c.progress.Note(NoteTopic, line) }
