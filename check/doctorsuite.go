package check

import (
	"context"
	"path/filepath"

	"github.com/flakegate/flakegate/internal/flock"
	"github.com/flakegate/flakegate/transcript"
)

// doctorSuites adds one line per suite: how many tests its framework
// lists in the base tree, in the check's sandbox, and so how many triples
// a check gates. It uses the base tree the prepares ran in, else opens
// one under the worktree lock.
func (c *checker) doctorSuites(ctx context.Context, rep *DoctorReport) {
	if len(c.cfg.Suites) == 0 {
		return
	}
	if c.iso == nil {
		rep.add(DoctorWarn, "suites", "not listed: the sandbox is not set up here")
		return
	}
	if c.trees == nil {
		root, err := makeWorktreeRoot(c.common)
		if err != nil {
			rep.add(DoctorFail, "suites", "%s", errLine(err))
			return
		}
		lock, err := flock.Lock(ctx, filepath.Join(root, ".lock"), flock.Options{What: "the worktree lock", Op: "doctor", Timeout: doctorLockWait})
		if err != nil {
			rep.add(DoctorWarn, "suites", "not listed (a check of this repository may hold its worktrees): %s", errLine(err))
			return
		}
		overlay := c.iso.sandbox.Overlay || c.iso.sandbox.Level.Copy
		t := &tree{dir: filepath.Join(root, "base-0"), side: transcript.SideBase, sha: c.baseSHA, overlay: overlay}
		c.trees = &worktrees{workers: []*workerTrees{{base: t}}, lock: lock, git: c.git, overlay: overlay}
		defer func() { c.trees.unlock(); c.trees = nil }()
		if err := c.trees.prepare(ctx, t); err != nil {
			rep.add(DoctorFail, "suites", "the base worktree: %s", errLine(err))
			return
		}
	}
	base := c.trees.workers[0].base
	for i := range c.cfg.Suites {
		s := &c.cfg.Suites[i]
		list, err := c.listSuite(ctx, s, base)
		if err != nil {
			rep.add(DoctorFail, "suites", "suites[%d] (%s %s): %s", i, s.Framework, s.Path, errLine(err))
			continue
		}
		n := 0
		for _, t := range list.tests {
			if !s.Excluded(t.name) {
				n++
			}
		}
		seeds := len(s.Seeds) + s.RandomSeeds
		rep.add(DoctorOK, "suites", "suites[%d] (%s %s): the base lists %s (%d excluded): %d triples with %s", i, s.Framework, s.Path,
			count(n, "test", "tests"), len(list.tests)-n, n*seeds, count(seeds, "order seed", "order seeds"))
	}
}
