package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flakegate/flakegate/attempt"
)

// TestStandbysAreTheSandboxs: the standbys belong to the Sandbox that New
// made (and its copies): an attempt of one leaves standbys in its pool
// and none in another's, a Sandbox not made by New makes none, and Close
// ends every standby's helper and leaves no layer folder behind.
func TestStandbysAreTheSandboxs(t *testing.T) {
	bwrap := needBwrap(t)
	root, tree, tmp := standbyFolders(t)
	env := []string{"PATH=/usr/bin:/bin", "HOME=/root"}
	one := open(t, Sandbox{Bwrap: bwrap, Tree: tree, Home: "/root", Limits: testLimits})
	needOverlay(t, one, root, env)
	other := New(*one) // the same description, its own standbys
	defer other.Close()
	plain := *one
	plain.pool = nil // as a literal Sandbox would be

	run := func(sb *Sandbox) {
		t.Helper()
		o := attempt.Run(context.Background(), attempt.Command{Argv: []string{"true"}, Dir: tree, Env: env, Sandbox: sb, WallBudget: time.Minute})
		if o.Result != attempt.Pass {
			t.Fatalf("attempt: %s (%s) %s", o.Result, o.Reason, o.Tail)
		}
	}
	ready := func(p *pool) []*sandboxRun {
		p.mu.Lock()
		defer p.mu.Unlock()
		for busy := true; busy; {
			busy = false
			for _, n := range p.making {
				busy = busy || n > 0
			}
			if busy {
				p.cond.Wait()
			}
		}
		var all []*sandboxRun
		for _, list := range p.ready {
			all = append(all, list...)
		}
		return all
	}

	run(&plain)
	if n := len(ready(one.pool)); n != 0 {
		t.Errorf("a Sandbox not made by New left %d standbys in another's pool", n)
	}
	copyOfOne := *one // what the check does for each tree: a copy shares the standbys
	run(&copyOfOne)
	standbys := ready(one.pool)
	if len(standbys) != standbyDepth {
		t.Fatalf("%d standbys after an attempt, want %d", len(standbys), standbyDepth)
	}
	if n := len(ready(other.pool)); n != 0 {
		t.Errorf("the other sandbox holds %d standbys of the first one's attempt", n)
	}
	for _, r := range standbys {
		if r.cmd.ProcessState != nil {
			t.Fatalf("a standby's helper has exited before Close")
		}
	}
	one.Close()
	for _, r := range standbys {
		if r.cmd.ProcessState == nil {
			t.Errorf("a standby's helper (pid %d) outlived Close", r.cmd.Process.Pid)
		}
	}
	if n := len(ready(one.pool)); n != 0 {
		t.Errorf("%d standbys left after Close", n)
	}
	run(one) // after Close an attempt still runs, and makes no standby
	if n := len(ready(one.pool)); n != 0 {
		t.Errorf("Close did not stop the standbys: %d made after it", n)
	}
	left, _ := os.ReadDir(tmp)
	for _, l := range left {
		if strings.HasPrefix(l.Name(), layerPrefix) {
			t.Errorf("layer folder left after Close: %s", l.Name())
		}
	}
}

// TestStandbysServeEverySeed: a standby made while one attempt ran serves
// the next attempt even when that one has another environment (another
// seed) and its tree belongs to someone else than flakegate's user, in
// the helper's user namespace as much as as root. Before, a standby
// carried the environment in its key and, without idmapped mounts, no
// owner, so every one was thrown away and each attempt paid a helper of
// its own on top: two helpers per attempt.
func TestStandbysServeEverySeed(t *testing.T) {
	bwrap := needBwrap(t)
	for _, userns := range []bool{false, true} {
		name := "root"
		if userns {
			name = "userns"
		}
		t.Run(name, func(t *testing.T) {
			root, tree, _ := standbyFolders(t)
			env := []string{"PATH=/usr/bin:/bin", "HOME=/root"}
			sb := open(t, Sandbox{Bwrap: bwrap, Tree: tree, Home: "/root", Limits: testLimits})
			needOverlay(t, sb, root, env)
			if userns {
				// As the check runs without root; the tree another
				// user's, as a checkout made by a CI runner's user is.
				sb.Level = Level{Userns: true}
				if err := os.Chown(tree, 61539, 61539); err != nil {
					t.Fatal(err)
				}
			}
			sb.pool.mu.Lock()
			sb.pool.spawns = 0 // not the probe's
			sb.pool.mu.Unlock()
			const attempts = 6
			for i := range attempts {
				seed := "SEED=" + strconv.Itoa(i)
				o := attempt.Run(context.Background(), attempt.Command{Argv: []string{"sh", "-c", `test "$SEED" = ` + strconv.Itoa(i)}, Dir: tree,
					Env: append(env, seed), Sandbox: sb, WallBudget: time.Minute})
				if o.Result != attempt.Pass {
					t.Fatalf("attempt %d: %s (%s) %s", i, o.Result, o.Reason, o.Tail)
				}
			}
			sb.Close()
			sb.pool.mu.Lock()
			n := sb.pool.spawns
			sb.pool.mu.Unlock()
			if n > attempts+standbyDepth {
				t.Errorf("%d helpers for %d attempts: standbys were thrown away (at most %d)", n, attempts, attempts+standbyDepth)
			}
		})
	}
}

// standbyFolders makes a tree and a folder for the layers (TMPDIR) in a
// test folder every identity can reach.
func standbyFolders(t *testing.T) (root, tree, tmp string) {
	t.Helper()
	root = t.TempDir()
	tree, tmp = filepath.Join(root, "tree"), filepath.Join(root, "tmp")
	for _, d := range []string{tree, tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{filepath.Dir(root), root, tmp} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("TMPDIR", tmp) // the layer folders go here
	return root, tree, tmp
}
