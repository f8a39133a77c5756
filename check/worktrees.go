package check

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/git"
	"github.com/flakegate/flakegate/internal/flock"
	"github.com/flakegate/flakegate/runner"
)

// worktrees are the clean checkouts a check runs in, under <git common
// dir>/flakegate/worktrees (the repository's file system), reused between
// checks. Each worker owns one base worktree and two candidate worktrees.
// A lock file keeps two checks of one repository from resetting each
// other's trees.
//
// Every tree is reset, cleaned and proven pristine once, when the check
// opens it. Then either (overlay mode, the default where the kernel
// allows it) each sandboxed attempt runs on a throwaway overlay of the
// tree (runner.Sandbox.Overlay), which writes nothing to the tree, so the
// tree stays pristine with no work between attempts; or (reset mode: no
// overlay, or no sandbox) the tree is reset and cleaned after each
// attempt, the two candidate trees taking turns so that one is cleaned in
// the background while the other runs an attempt.
type worktrees struct {
	workers []*workerTrees
	lock    *os.File
	overlay bool // attempts run on overlays; see chooseTrees
}

// workerTrees are the trees of one worker; only that worker touches them.
type workerTrees struct {
	base *tree
	cand [2]*tree
	next int // the candidate tree of the next attempt
}

// tree is one worktree at a fixed revision. A tree is released after each
// attempt and acquired before the next: in reset mode release starts `git
// reset --hard` and `git clean -ffdx`, acquire waits for them, so every
// attempt starts on a clean checkout; in overlay mode the attempt left
// the tree as it was and release does nothing.
type tree struct {
	dir     string
	sha     string
	gitDir  string     // its registered git folder (.git/worktrees/NAME)
	done    chan error // the clean in flight; nil when the tree is clean
	overlay bool       // attempts never write the tree: no clean is needed
}

func worktreeRoot(common string) string { return filepath.Join(common, "flakegate", "worktrees") }

// openWorktrees locks the worktree folder and prepares the trees of n
// workers at the two revisions. The lock waits at most lock.Timeout.
func openWorktrees(ctx context.Context, g *git.Client, common string, n int, baseSHA, candSHA string, lo flock.Options) (*worktrees, error) {
	root := worktreeRoot(common)
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, &flakegate.Error{Code: flakegate.EINTERNAL, Op: "check", Path: root, Message: "cannot create the worktree folder", Err: err}
	}
	lo.What, lo.Op = "the worktree lock", "check"
	lock, err := flock.Lock(ctx, filepath.Join(root, ".lock"), lo)
	if err != nil {
		return nil, err
	}
	w := &worktrees{lock: lock}
	var all []*tree
	newTree := func(name, sha string) *tree {
		t := &tree{dir: filepath.Join(root, name), sha: sha}
		all = append(all, t)
		return t
	}
	for i := 0; i < n; i++ {
		w.workers = append(w.workers, &workerTrees{
			base: newTree(fmt.Sprintf("base-%d", i), baseSHA),
			cand: [2]*tree{newTree(fmt.Sprintf("candidate-%d", i), candSHA), newTree(fmt.Sprintf("candidate-%db", i), candSHA)},
		})
	}
	if err := prepareAll(ctx, g, all); err != nil {
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
func prepareAll(ctx context.Context, g *git.Client, trees []*tree) error {
	var now, later []*tree
	for i, t := range trees {
		if _, err := os.Stat(filepath.Join(t.dir, ".git")); err != nil {
			if err := prepare(ctx, g, t); err != nil {
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
			errs[i] = prepare(ctx, g, t)
		}()
	}
	for _, t := range later {
		t.start(func(_ context.Context, t *tree) error {
			return prepare(context.WithoutCancel(ctx), g, t)
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

// nextCandidate returns the candidate tree for the next attempt.
func (wt *workerTrees) nextCandidate() *tree {
	t := wt.cand[wt.next]
	wt.next = 1 - wt.next
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
		for _, t := range []*tree{wt.base, wt.cand[0], wt.cand[1]} {
			if t.done != nil {
				<-t.done
				t.done = nil
			}
		}
	}
}

// prepare checks t out clean at its revision and learns its git folder.
func prepare(ctx context.Context, g *git.Client, t *tree) error {
	dir := t.dir
	err := g.PrepareWorktree(ctx, dir, t.sha)
	if err == nil {
		t.gitDir, err = g.WorktreeGitDir(ctx, dir)
	}
	if err != nil {
		if ctx.Err() != nil {
			return interrupted(ctx)
		}
		if flakegate.ErrorCode(err) == flakegate.EINVALID {
			return err
		}
		return &flakegate.Error{Code: flakegate.EINTERNAL, Op: "check", Path: dir, Message: "cannot prepare the worktree", Err: err,
			Hint: "remove the folder and run 'git worktree prune'; flakegate recreates it"}
	}
	return nil
}

func (w *worktrees) unlock() {
	if w.lock != nil {
		w.drain()
		w.lock.Close() // releases the flock
		w.lock = nil
	}
}

func interrupted(ctx context.Context) error {
	return &flakegate.Error{Code: flakegate.EINTERNAL, Op: "check", Message: "interrupted", Err: context.Cause(ctx)}
}

// chooseTrees picks how attempts get a pristine tree, and says which on
// the progress output (stderr): overlay mode when the attempts are
// sandboxed and an overlay of a tree can be mounted, else reset mode.
//
// In overlay mode the trees are never reset during the check. That keeps
// every tree exactly as proven at open: the attempt's sandbox sees the
// tree's path only through the overlay, which sends every write to its
// own upper layer (the tree beneath is covered by the mount and the git
// folder holding it is hidden), and nothing else writes the trees while
// the check holds the worktree lock. The base attempt's own Pristine
// check (baseReplay) still runs before it: a git status with the index
// unchanged, so its cost does not grow with the attempts.
func (c *checker) chooseTrees() {
	why := "the attempts are not sandboxed"
	if c.iso.mode == IsolationBwrap {
		err := runner.ProbeOverlay(c.trees.workers[0].cand[0].dir)
		if err == nil {
			c.trees.overlay = true
			c.iso.sandbox.Overlay = true
			for _, wt := range c.trees.workers {
				for _, t := range []*tree{wt.base, wt.cand[0], wt.cand[1]} {
					t.overlay = true
				}
			}
			c.say("attempt trees: a throwaway overlay per attempt (the worktrees are never written)")
			return
		}
		why = "no overlay: " + err.Error()
	}
	c.say("attempt trees: reset and cleaned after each attempt (" + c.redact(why) + ")")
}

// say writes one line to the check's progress, as a note.
func (c *checker) say(line string) { c.progress.Note(NoteTopic, line) }
