package sandbox

import (
	"encoding/json"
	"maps"
	"slices"
	"sync"
)

// standbyDepth is how many standbys of one sandbox are ready or being
// made after an attempt starts: two, so that on two cores attempts that
// end at once do not wait for one standby after another.
const standbyDepth = 2

// maxStandbys bounds the standbys of one sandbox.
const maxStandbys = 4

// pool is what a sandbox made by New holds across its attempts: the
// standbys made for its next attempts (a few per tree, folder and
// environment, each made while the attempt before runs), and the cgroups
// of ended attempts still being removed. Every copy of that Sandbox
// shares it; Close ends it.
type pool struct {
	mu     sync.Mutex
	cond   *sync.Cond
	ready  map[string][]*sandboxRun
	making map[string]int
	closed bool           // Close ran: no more standbys
	spawns int            // helpers started for this sandbox, standbys or not
	gone   sync.WaitGroup // cgroups being removed

	// unswept are the folders an ended attempt left in the page cache
	// (no memory cgroup; pagecache_linux.go): the next attempt's sweep
	// drops them, or Close does.
	sweepMu sync.Mutex
	unswept map[string]bool
}

func newPool() *pool {
	p := &pool{ready: map[string][]*sandboxRun{}, making: map[string]int{}}
	p.cond = sync.NewCond(&p.mu)
	return p
}

// standbyKey names what a standby was built for: everything of the
// sandbox, its tree, the working folder and the toolchains the
// environment's PATH shares (rootOps); everything but the command and
// the rest of the environment, which only the attempt line carries
// (execLine). So a standby made while one seed ran serves the next
// seed's attempt, not only a retry of the same one.
func (s *Sandbox) standbyKey(dir string, env []string) string {
	b, _ := json.Marshal([]any{s.Bwrap, s.Tree, s.Overlay, s.Prepared, s.Hide, s.RO, s.RW, s.Home, s.Network, s.Limits, s.Level, s.GoCache, s.FillGoCache, s.GoModCache, dir, toolchainPaths(env)})
	return string(b)
}

// take returns the standby made for key with its mounts for a tree of
// owner, waiting for one being made; nil if there is none.
func (p *pool) take(key string, owner [2]int) *sandboxRun {
	p.mu.Lock()
	for len(p.ready[key]) == 0 && p.making[key] > 0 {
		p.cond.Wait()
	}
	var r *sandboxRun
	if list := p.ready[key]; len(list) > 0 {
		r, p.ready[key] = list[0], list[1:]
	}
	p.mu.Unlock()
	if r != nil && r.owner != owner {
		r.kill()
		r.cleanup()
		return nil
	}
	return r
}

// spawned counts a helper started for this sandbox.
func (p *pool) spawned() {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.spawns++
	p.mu.Unlock()
}

// prefetch starts making standbys of this sandbox until standbyDepth
// are ready or on their way.
func (s *Sandbox) prefetch(key, dir string, env []string) {
	p := s.pool
	p.mu.Lock()
	n := standbyDepth - len(p.ready[key]) - p.making[key]
	if n <= 0 || p.closed {
		n = 0
	} else {
		p.making[key] += n
	}
	p.mu.Unlock()
	for range n {
		go s.replenish(key, dir, env)
	}
}

// replenish makes a standby for a next attempt of this sandbox.
func (s *Sandbox) replenish(key, dir string, env []string) {
	p := s.pool
	r, err := s.spawn(dir, nil, env, true)
	p.mu.Lock()
	p.making[key]--
	if err == nil && len(p.ready[key]) < maxStandbys && !p.closed {
		p.ready[key], r = append(p.ready[key], r), nil
	}
	p.cond.Broadcast()
	p.mu.Unlock()
	if err == nil && r != nil {
		r.kill()
		r.cleanup()
	}
}

// removing runs remove (an ended attempt's cgroup) in the background,
// counted for close; without a pool it runs it now.
func (p *pool) removing(remove func()) {
	if p == nil {
		remove()
		return
	}
	p.gone.Add(1)
	go func() {
		defer p.gone.Done()
		remove()
	}()
}

// close ends every standby, once those being made are made, and waits
// until the cgroups of ended attempts are removed.
func (p *pool) close() {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.closed = true
	for busy := true; busy; {
		busy = false
		for _, n := range p.making {
			busy = busy || n > 0
		}
		if busy {
			p.cond.Wait()
		}
	}
	all := p.ready
	p.ready = map[string][]*sandboxRun{}
	p.mu.Unlock()
	for _, list := range all {
		for _, r := range list {
			r.kill()
			r.cleanup()
		}
	}
	p.gone.Wait()
	p.sweepMu.Lock()
	roots := slices.Sorted(maps.Keys(p.unswept))
	p.unswept = nil
	p.sweepMu.Unlock()
	evictTrees(roots) // the host's cache as the check found it
}

// leaveUnswept notes roots as left in the page cache by an ended
// attempt, for the next attempt's sweep or Close to drop; false when the
// pool is closed (or none), and the caller sweeps them now.
func (p *pool) leaveUnswept(roots []string) bool {
	if p == nil {
		return false
	}
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	if closed {
		return false
	}
	p.sweepMu.Lock()
	defer p.sweepMu.Unlock()
	if p.unswept == nil {
		p.unswept = map[string]bool{}
	}
	for _, r := range roots {
		p.unswept[r] = true
	}
	return true
}

// swept notes that roots were just dropped from the page cache.
func (p *pool) swept(roots []string) {
	if p == nil {
		return
	}
	p.sweepMu.Lock()
	defer p.sweepMu.Unlock()
	for _, r := range roots {
		delete(p.unswept, r)
	}
}
