package e2e_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flakegate/flakegate/storetest"
)

// The attacks of issue 9: a candidate whose code under test (src/lib.sh,
// which the property sources; not a watched path) misbehaves at run
// time to get a regression through or to corrupt the gate. Every attack
// runs with secrets in flakegate's environment, and every check must end
// with no process of the sandbox alive and no secret in any output.

// Secrets in flakegate's environment that must never appear anywhere.
var attackSecrets = []string{"s3cret-xyz", "ghp-s3cret-tok"}

// attackConfig is the scripted repository's config with the default
// sandbox: nothing shared.
const attackConfig = `version: 1
retry_cap: 2
workers: 1
freeze:
  expires_after_runs: 3
properties:
  - path: props/prop.sh
    fixture: fixtures/data.txt
    seeds: [11, 12]
    run: [sh, "{path}", "{seed}"]
    wall_budget: 20s
`

// needBwrap fails under CI=true and skips elsewhere when bwrap is missing.
func needBwrap(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end")
	}
	if _, err := exec.LookPath("bwrap"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("bwrap is required under CI=true: apt-get install bubblewrap")
		}
		t.Skip("bwrap not installed")
	}
}

// attackRepo is the scripted repository with a ledger folder outside it
// (named by FLAKEGATE_LEDGER, like a CI runner's cache) and an output
// folder per check.
type attackRepo struct {
	*repo
	ledger string
	outs   []string
}

func newAttackRepo(t *testing.T) *attackRepo {
	needBwrap(t)
	files := baseFiles(libOK)
	files["flakegate.yaml"] = attackConfig
	return &attackRepo{repo: newRepo(t, files), ledger: filepath.Join(t.TempDir(), "ledger")}
}

// run checks candidate tag with secrets in the environment, then asserts
// that no process carrying marker (in its command line) is alive and that
// no secret is in the output, the output folder or the ledger.
func (a *attackRepo) run(t *testing.T, tag, marker string, args ...string) *checkRun {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	a.outs = append(a.outs, out)
	env := []string{"FLAKEGATE_LEDGER=" + a.ledger, "PGPASSWORD=" + attackSecrets[0], "GITHUB_TOKEN=" + attackSecrets[1]}
	cr := a.checkEnv(env, append([]string{"--base", "base", "--candidate", tag, "--out", out}, args...)...)
	noSurvivor(t, marker)
	for _, s := range attackSecrets {
		if strings.Contains(cr.stdout+cr.stderr, s) {
			t.Errorf("secret %q in flakegate's output\n%s", s, cr)
		}
		for _, dir := range append([]string{a.ledger}, a.outs...) {
			for name, data := range storetest.SnapshotDir(t, dir) {
				if strings.Contains(data, s) {
					t.Errorf("secret %q in %s%s", s, dir, name)
				}
			}
		}
	}
	return cr
}

// noSurvivor fails if a process whose command line holds marker is still
// alive shortly after the check ended (a dying namespace takes a moment).
func noSurvivor(t *testing.T, marker string) {
	t.Helper()
	if marker == "" {
		return
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		pids := processesWith(marker)
		if len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, pid := range pids {
				syscall.Kill(pid, syscall.SIGKILL)
			}
			t.Fatalf("processes %v of the attempt outlived the check", pids)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func processesWith(marker string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(b), marker) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// labelsAre fails unless the check exited with code and every triple got label.
func labelsAre(t *testing.T, cr *checkRun, code int, label string) {
	t.Helper()
	if cr.code != code {
		t.Fatalf("exit %d, want %d\n%s", cr.code, code, cr)
	}
	for _, l := range cr.labels() {
		if l != label {
			t.Fatalf("labels %v, want %s for every triple\n%s", cr.labels(), label, cr)
		}
	}
	if !strings.HasPrefix(cr.summary.Isolation, "bwrap+") {
		t.Errorf("summary isolation %q, want bwrap", cr.summary.Isolation)
	}
}

// storeFiles snapshots the ledger's freezes, audit log and replay cache
// (the record store only grows).
func (a *attackRepo) storeFiles(t *testing.T) map[string]string {
	t.Helper()
	all := storetest.SnapshotDir(t, a.ledger)
	for name := range all {
		if strings.HasPrefix(name, "/records/") || strings.HasSuffix(name, ".lock") || name == "/lock" ||
			name == "/corpus.json" { // the check records failing seeds (e2e/corpus_test.go)
			delete(all, name)
		}
	}
	return all
}

func sameFiles(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	if len(before) != len(after) {
		t.Errorf("%s: %d files before, %d after", what, len(before), len(after))
	}
	for name, b := range before {
		if after[name] != b {
			t.Errorf("%s: %s changed", what, name)
		}
	}
}

// TestAttack1ForgedFreeze: the code under test runs flakegate through
// /proc/$PPID/exe and writes the ledger files directly, to freeze its own
// regression. It reaches neither; the regression is PROPERTY, twice.
func TestAttack1ForgedFreeze(t *testing.T) {
	a := newAttackRepo(t)
	a.candidate("docs", map[string]string{"README.md": "docs\n"})
	labelsAre(t, a.run(t, "docs", ""), 0, "PASS")
	before := a.storeFiles(t)
	a.candidate("evil", map[string]string{"src/lib.sh": `ok() {
	exe=/proc/$PPID/exe
	"$exe" freeze list --ledger "` + a.ledger + `" && echo REACHED-FLAKEGATE
	for f in "` + a.ledger + `/ledger.json" ../../ledger.json ../../../flakegate/ledger.json; do
		echo '{"version":1,"audit_head":"","freezes":[{"label":"SCHEDULER"}]}' > "$f" 2>/dev/null && echo "WROTE $f"
	done
	return 1
}
`})
	for range 2 {
		cr := a.run(t, "evil", "")
		labelsAre(t, cr, 1, "PROPERTY")
		if strings.Contains(cr.record(t, 0).Attempts[0].OutputTail, "REACHED-FLAKEGATE") {
			t.Error("the attempt ran flakegate through /proc/$PPID/exe")
		}
	}
	sameFiles(t, "ledger", before, a.storeFiles(t))
}

// TestAttack2SharedState: the first attempt leaves a marker in /tmp and
// $HOME and fails; a retry that saw it would pass (SCHEDULER). Every
// attempt has its own /tmp and $HOME: PROPERTY.
func TestAttack2SharedState(t *testing.T) {
	a := newAttackRepo(t)
	marker := "fg-attack2-" + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	a.candidate("evil", map[string]string{"src/lib.sh": `ok() {
	if [ -e /tmp/` + marker + ` ] || [ -e "$HOME/` + marker + `" ] || [ -e /dev/shm/` + marker + ` ]; then return 0; fi
	touch /tmp/` + marker + ` "$HOME/` + marker + `" /dev/shm/` + marker + `
	return 1
}
`})
	labelsAre(t, a.run(t, "evil", ""), 1, "PROPERTY")
	if _, err := os.Stat("/tmp/" + marker); err == nil {
		os.Remove("/tmp/" + marker)
		t.Error("the attempt wrote the host's /tmp")
	}
}

// TestAttack3SiblingTree: the attempt writes fixed code into the other
// candidate trees, where the retry runs. They are not visible to it.
func TestAttack3SiblingTree(t *testing.T) {
	a := newAttackRepo(t)
	a.candidate("evil", map[string]string{"src/lib.sh": `ok() {
	[ -e fixed ] && return 0
	for d in ../candidate-0 ../candidate-0b ../*; do
		mkdir -p "$d" 2>/dev/null; touch "$d/fixed" 2>/dev/null
	done
	return 1
}
`})
	labelsAre(t, a.run(t, "evil", ""), 1, "PROPERTY")
}

// TestAttack4PoisonedBase: the candidate's attempts overwrite the base
// tree's library with a failing one before the base replay runs. The
// base still passes, and the cache keeps the pass.
func TestAttack4PoisonedBase(t *testing.T) {
	a := newAttackRepo(t)
	a.candidate("evil", map[string]string{"src/lib.sh": `ok() {
	for d in ../base-0 ../../worktrees/base-0 "` + a.dir + `/.git/flakegate/worktrees/base-0"; do
		mkdir -p "$d/src" 2>/dev/null; echo 'ok() { return 1; }' > "$d/src/lib.sh" 2>/dev/null
	done
	return 1
}
`})
	cr := a.run(t, "evil", "")
	labelsAre(t, cr, 1, "PROPERTY")
	for i := range cr.summary.Results {
		if rec := cr.record(t, i); rec.BaseSeedResult != "pass" || rec.BaseFromCache {
			t.Errorf("record %d: base %s (from cache %t), want a fresh pass", i, rec.BaseSeedResult, rec.BaseFromCache)
		}
	}
	a.candidate("docs", map[string]string{"README.md": "docs\n"})
	next := a.run(t, "docs", "")
	labelsAre(t, next, 0, "PASS")
	for i := range next.summary.Results {
		if rec := next.record(t, i); rec.BaseSeedResult != "pass" || !rec.BaseFromCache {
			t.Errorf("record %d: base %s (from cache %t), want the cached pass", i, rec.BaseSeedResult, rec.BaseFromCache)
		}
	}
}

// TestAttack5ReplayCache: the attempt rewrites the replay cache from pass
// to fail. It cannot reach it; the cache stays byte for byte.
func TestAttack5ReplayCache(t *testing.T) {
	a := newAttackRepo(t)
	a.candidate("docs", map[string]string{"README.md": "docs\n"})
	labelsAre(t, a.run(t, "docs", ""), 0, "PASS")
	before := a.storeFiles(t)
	if len(before) == 0 {
		t.Fatal("no replay cache to attack")
	}
	a.candidate("evil", map[string]string{"src/lib.sh": `ok() {
	for f in "` + a.ledger + `"/replay/*.json ../../replay/*.json; do
		sed -i s/pass/fail/ "$f" 2>/dev/null && echo "EDITED $f"
	done
	return 0
}
`})
	labelsAre(t, a.run(t, "evil", ""), 0, "PASS")
	sameFiles(t, "replay cache", before, a.storeFiles(t))
}

// TestAttack6Daemon: the attempt starts a detached daemon that keeps
// rewriting the library of every tree it can find to a passing one. It
// dies with the attempt: a later regression is still PROPERTY.
func TestAttack6Daemon(t *testing.T) {
	a := newAttackRepo(t)
	const marker = "fgattack6daemon"
	a.candidate("evil", map[string]string{"src/lib.sh": `ok() {
	(nohup sh -c 'while :; do for d in ` + a.dir + `/.git/flakegate/worktrees/*/src ./src; do echo "ok() { return 0; }" > $d/lib.sh; done; sleep 0.05; done # ` + marker + `' >/dev/null 2>&1 &) # detached (setsid is refused)
	sleep 0.2
	return 0
}
`})
	labelsAre(t, a.run(t, "evil", marker), 0, "PASS")
	a.candidate("red", map[string]string{"src/lib.sh": libRed})
	labelsAre(t, a.run(t, "red", marker), 1, "PROPERTY")
}

// TestAttack7GitHijack: the attempt writes a smudge filter into the
// repository's config and attributes that use it into info/attributes,
// and points its tree's .git file at a git folder of its own. flakegate's
// own git runs none of it.
func TestAttack7GitHijack(t *testing.T) {
	a := newAttackRepo(t)
	pwned := filepath.Join(a.state, "pwned")
	configBefore, err := os.ReadFile(filepath.Join(a.dir, ".git", "config"))
	if err != nil {
		t.Fatal(err)
	}
	a.candidate("evil", map[string]string{"src/lib.sh": `ok() {
	for g in "` + a.dir + `/.git" ../../.. ; do
		printf '[filter "evil"]\n\tsmudge = sh -c \"touch ` + pwned + `; echo ok\"\n\trequired = true\n' >> "$g/config" 2>/dev/null && echo "WROTE $g/config"
		mkdir -p "$g/info" 2>/dev/null; echo '* filter=evil' >> "$g/info/attributes" 2>/dev/null
	done
	echo '* filter=evil' > .gitattributes
	mkdir -p fakegit && echo "gitdir: $PWD/fakegit" > .git
	return 1
}
`})
	labelsAre(t, a.run(t, "evil", ""), 1, "PROPERTY")
	a.candidate("red", map[string]string{"src/lib.sh": libRed})
	labelsAre(t, a.run(t, "red", ""), 1, "PROPERTY")
	if _, err := os.Stat(pwned); err == nil {
		t.Fatal("flakegate's git ran the planted filter")
	}
	after, _ := os.ReadFile(filepath.Join(a.dir, ".git", "config"))
	if string(after) != string(configBefore) {
		t.Errorf(".git/config changed:\n%s", after)
	}
	if _, err := os.Stat(filepath.Join(a.dir, ".git", "info", "attributes")); err == nil {
		t.Error("the attempt wrote .git/info/attributes")
	}
}

// TestAttack8Secrets: the attempt prints its environment, its parent's
// and every process's it can see. No secret is there to print (run
// checks every output and file), and the environment is the allow-list.
func TestAttack8Secrets(t *testing.T) {
	a := newAttackRepo(t)
	a.candidate("evil", map[string]string{"src/lib.sh": `ok() {
	env
	cat /proc/$PPID/environ /proc/1/environ /proc/*/environ 2>/dev/null | tr '\0' '\n'
	return 1
}
`})
	cr := a.run(t, "evil", "")
	labelsAre(t, cr, 1, "PROPERTY")
	tail := cr.record(t, 0).Attempts[0].OutputTail
	for _, name := range []string{"FLAKEGATE_LEDGER", "PGPASSWORD", "GITHUB_TOKEN", "FG_STATE"} {
		if strings.Contains(tail, name+"=") {
			t.Errorf("the attempt saw %s:\n%s", name, tail)
		}
	}
	if !strings.Contains(tail, "PATH=") || !strings.Contains(tail, "HOME=") {
		t.Errorf("the allow-listed PATH and HOME are missing:\n%s", tail)
	}
}

// TestAttack9HeldLock: the attempt starts a daemon that takes the store's
// flock and never lets go. It cannot reach the store, and dies with the
// attempt: the check ends, and so does the next one.
func TestAttack9HeldLock(t *testing.T) {
	a := newAttackRepo(t)
	const marker = "fgattack9lock"
	a.candidate("evil", map[string]string{"src/lib.sh": `ok() {
	for l in "` + a.ledger + `/lock" ../../lock; do
		(nohup sh -c 'exec 9>>"$1"; flock 9; sleep 600 # ` + marker + `' sh "$l" >/dev/null 2>&1 &) # detached (setsid is refused)
	done
	sleep 0.2
	return 0
}
`})
	labelsAre(t, a.run(t, "evil", marker, "--lock-timeout", "30s"), 0, "PASS")
	labelsAre(t, a.run(t, "evil", marker, "--lock-timeout", "30s"), 0, "PASS")
}

// TestAttack10IndexLock: the attempt leaves index.lock in the base tree's
// git folder, so that the base reset would fail. It cannot reach it.
func TestAttack10IndexLock(t *testing.T) {
	a := newAttackRepo(t)
	a.candidate("evil", map[string]string{"src/lib.sh": `ok() {
	for g in "` + a.dir + `/.git/worktrees/base-0" ../../../worktrees/base-0; do
		mkdir -p "$g" 2>/dev/null; touch "$g/index.lock" 2>/dev/null
	done
	return 0
}
`})
	labelsAre(t, a.run(t, "evil", ""), 0, "PASS")
	a.candidate("docs", map[string]string{"README.md": "docs\n"})
	labelsAre(t, a.run(t, "docs", ""), 0, "PASS")
}

// TestCheckLeftoverIndexLock: an index.lock that a crashed git left in a
// base tree's git folder makes the check fail as flakegate's own failure
// (exit 3) naming it, caches nothing, and the check passes once it is gone.
func TestCheckLeftoverIndexLock(t *testing.T) {
	a := newAttackRepo(t)
	a.candidate("docs", map[string]string{"README.md": "docs\n"})
	labelsAre(t, a.run(t, "docs", ""), 0, "PASS") // creates the trees
	a.candidate("docs2", map[string]string{"README.md": "docs 2\n"})
	before := a.storeFiles(t)
	lock := filepath.Join(a.dir, ".git", "worktrees", "base-0", "index.lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// A git that crashed there was killed with its check, which so never
	// sealed the tree: the next check resets it in full.
	if err := os.Remove(filepath.Join(a.dir, ".git", "worktrees", "base-0", "flakegate-sealed")); err != nil {
		t.Fatal(err)
	}
	cr := a.run(t, "docs2", "", "--no-replay-cache")
	if cr.code != 3 || !strings.Contains(cr.stderr, "index.lock") {
		t.Fatalf("exit %d, want 3 naming index.lock\n%s", cr.code, cr)
	}
	sameFiles(t, "replay cache", before, a.storeFiles(t))
	os.Remove(lock)
	labelsAre(t, a.run(t, "docs2", ""), 0, "PASS")
}
