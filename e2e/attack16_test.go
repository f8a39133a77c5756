package e2e_test

import (
	"bufio"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flakegate/flakegate"
)

// The attacks of issue 16: the code under test (src/lib.sh, sourced by
// the property) attacks the sandbox itself: privileges, the kernel
// keyring, host files outside the sandbox's list, what tells a retry from
// a first attempt, and the machine's memory, processes and disk. Each
// attack runs in every mode it applies to: as root with an overlay per
// attempt (the default here), as root with FLAKEGATE_NO_OVERLAY=1 (a
// fresh copy of the tree per attempt) and as a user without privileges
// (uid 61534 through setpriv when the tests run as root; overlays in the
// sandbox helper's user namespace). After every check the
// store, the replay cache, the worktrees and flakegate's binary are as
// they were, no process of the attempt is alive, and no secret (the
// environment's, or the host files' the attack reads) is in any output,
// raw, reversed or base64-encoded.
//
// Reference: real frameworks still run inside the sandbox in
// TestCheckGoRapid and TestCheckPytestHypothesis (frameworks_test.go);
// TestAttack16FrameworksNonRoot runs the pytest one without privileges.

// mode16 is how flakegate runs: as which user, with which environment.
type mode16 struct {
	name string
	env  []string
	uid  int // not 0: flakegate runs as this uid (through setpriv when the test is root)
}

// nonRootUID is the user the non-root mode runs flakegate as: not nobody,
// whom the root modes' attempts (and their standbys) run as, because
// without cgroups the pids limit is RLIMIT_NPROC, which counts every
// process of the user on the machine, and tests run at once.
const nonRootUID = 61534

var (
	rootOverlay = mode16{name: "root-overlay"}
	rootReset   = mode16{name: "root-copy", env: []string{"FLAKEGATE_NO_OVERLAY=1"}} // a fresh copy per attempt
	nonRoot     = mode16{name: "nonroot", uid: nonRootUID}
	allModes16  = []mode16{rootOverlay, rootReset, nonRoot}
)

// forModes runs f as one subtest per mode.
func forModes(t *testing.T, modes []mode16, f func(t *testing.T, m mode16)) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			needMode(t, m)
			f(t, m)
		})
	}
}

// needMode skips (fails under CI=true) when the machine cannot run mode m:
// root modes need root; the non-root mode needs setpriv and user
// namespaces for an unprivileged user.
func needMode(t *testing.T, m mode16) {
	t.Helper()
	needBwrap(t)
	missing := func(format string, args ...any) {
		t.Helper()
		if os.Getenv("CI") == "true" {
			t.Fatalf(format, args...)
		}
		t.Skipf(format, args...)
	}
	if os.Geteuid() != 0 {
		if m.uid == 0 {
			t.Skip("mode " + m.name + " needs the tests to run as root")
		}
		if out, err := exec.Command("bwrap", "--unshare-user", "--ro-bind", "/", "/", "true").CombinedOutput(); err != nil {
			missing("bwrap cannot make a user namespace without privileges (a kernel feature the non-root mode needs): %v\n%s", err, out)
		}
		return
	}
	if m.uid == 0 {
		return
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		missing("setpriv (util-linux) is needed to run flakegate as uid %d", m.uid)
	}
	out, err := exec.Command("setpriv", "--reuid="+strconv.Itoa(m.uid), "--regid="+strconv.Itoa(m.uid), "--clear-groups",
		"bwrap", "--unshare-user", "--ro-bind", "/", "/", "true").CombinedOutput()
	if err != nil {
		missing("bwrap cannot make a user namespace as uid %d (a kernel feature the non-root mode needs): %v\n%s", m.uid, err, out)
	}
}

// asOther reports whether flakegate runs as another user than the test.
func (m mode16) asOther() bool { return m.uid != 0 && os.Geteuid() == 0 }

// a16 is the scripted repository of one attack in one mode.
type a16 struct {
	*attackRepo
	m       mode16
	bin     string   // the binary this mode runs
	work    string   // output folders, reports, TMPDIR and HOME of flakegate
	tmp     string   // flakegate's TMPDIR: its overlay layers land here
	home    string   // flakegate's HOME (non-root mode)
	reports []string // the JUnit and Markdown reports' folders
	secrets []string // more values no output may hold
	n       int
	watch   *hostWatch // what the host saw during the last check
	last    *state16   // the state after the last check
}

// config16 is the attack config: one seed unless seeds says more, retry
// cap 2 (3 candidate attempts), sandbox lines (indented two spaces) after
// "sandbox:".
func config16(seeds, sandbox string) string {
	if seeds == "" {
		seeds = "[11]"
	}
	sb := ""
	if sandbox != "" {
		sb = "sandbox:\n" + sandbox
	}
	return `version: 1
retry_cap: 2
workers: 1
freeze:
  expires_after_runs: 3
` + sb + `properties:
  - path: props/prop.sh
    fixture: fixtures/data.txt
    seeds: ` + seeds + `
    run: [sh, "{path}", "{seed}"]
    wall_budget: 20s
`
}

func newA16(t *testing.T, m mode16, cfg, baseLib string) *a16 {
	t.Helper()
	files := baseFiles(baseLib)
	files["flakegate.yaml"] = cfg
	return newA16Files(t, m, files)
}

// newA16Files is newA16 with the base commit's files.
func newA16Files(t *testing.T, m mode16, files map[string]string) *a16 {
	t.Helper()
	a := &a16{attackRepo: &attackRepo{repo: newRepo(t, files), ledger: filepath.Join(t.TempDir(), "ledger")},
		m: m, bin: flakegateBin, work: t.TempDir()}
	a.tmp, a.home = filepath.Join(a.work, "tmp"), filepath.Join(a.work, "home")
	for _, d := range []string{a.tmp, a.home} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if m.asOther() {
		// t.TempDir() and the built binary's folder are 0700 root: the
		// other user runs a world-readable copy.
		dir := t.TempDir()
		a.bin = filepath.Join(dir, "flakegate")
		copyFile(t, flakegateBin, a.bin, 0o755)
		reachable(t, dir)
	}
	return a
}

func copyFile(t *testing.T, from, to string, perm os.FileMode) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(to, perm); err != nil {
		t.Fatal(err)
	}
}

// reachable makes dir and its ancestors searchable by every user.
func reachable(t *testing.T, dir string) {
	t.Helper()
	for p := dir; p != "/" && p != "."; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm()&0o001 == 0 {
			if err := os.Chmod(p, fi.Mode().Perm()|0o011); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// chownAll gives every file under dirs to uid (gid uid).
func chownAll(t *testing.T, uid int, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		err := filepath.WalkDir(d, func(p string, _ fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return err
			}
			return os.Lchown(p, uid, uid)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// grant hands the repository, the ledger's folder, the work folder and
// the state folder to the mode's user (the harness commits as root, so
// this runs before every check); revoke gives the repository back to
// root, whose git refuses a repository another user owns.
func (a *a16) grant(t *testing.T) {
	t.Helper()
	if !a.m.asOther() {
		return
	}
	dirs := []string{a.dir, filepath.Dir(a.ledger), a.work, a.state}
	chownAll(t, a.m.uid, dirs...)
	for _, d := range dirs {
		reachable(t, d)
	}
	// The trees on the tmpfs (the user's own folder, mode 0700: left so)
	// hold what a test planted there as root.
	if d := treesDir(t, a.dir); strings.HasPrefix(d, "/dev/shm/") {
		chownAll(t, a.m.uid, d)
	}
}

func (a *a16) revoke(t *testing.T) {
	t.Helper()
	if a.m.asOther() {
		chownAll(t, 0, a.dir)
	}
}

// exec runs `flakegate check --json` plus args in the repository, as the
// mode's user, with env added to the test's environment.
func (a *a16) exec(t *testing.T, env []string, args ...string) *checkRun {
	t.Helper()
	argv := append([]string{"check", "--json"}, args...)
	var cmd *exec.Cmd
	if a.m.asOther() {
		id := strconv.Itoa(a.m.uid)
		cmd = exec.Command("setpriv", append([]string{"--reuid=" + id, "--regid=" + id, "--clear-groups", a.bin}, argv...)...)
	} else {
		cmd = exec.Command(a.bin, argv...)
	}
	cmd.Dir = a.dir
	cmd.Env = append(append(cleanEnv(), "FG_STATE="+a.state, "TMPDIR="+a.tmp), env...)
	if a.m.asOther() {
		cmd.Env = append(cmd.Env, "HOME="+a.home, "XDG_CACHE_HOME="+userCache(t, a.m.uid))
	}
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	cr := &checkRun{stdout: stdout.String(), stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		cr.code = ee.ExitCode()
	default:
		t.Fatalf("running flakegate: %v", err)
	}
	if cr.code <= 1 {
		cr.summary = new(flakegate.Summary)
		if err := json.Unmarshal([]byte(cr.stdout), cr.summary); err != nil {
			t.Fatalf("[%s] exit %d, stdout is not a summary: %v\n%s", a.m.name, cr.code, err, cr)
		}
	}
	return cr
}

// run checks candidate tag with secrets in flakegate's environment, a
// JUnit and a Markdown report, and the host watched for processes whose
// command line holds marker; then asserts what must hold after every
// attack (item 7 of the contract): flakegate's binary unchanged, no
// process with marker alive, no secret in any output in any form, no
// overlay layer folder left, the store, the replay cache and the trees
// intact.
func (a *a16) run(t *testing.T, tag, marker string, args ...string) *checkRun {
	t.Helper()
	a.n++
	out := filepath.Join(a.work, fmt.Sprintf("out-%d", a.n))
	reports := filepath.Join(a.work, fmt.Sprintf("reports-%d", a.n))
	if err := os.Mkdir(reports, 0o755); err != nil {
		t.Fatal(err)
	}
	a.outs = append(a.outs, out)
	a.reports = append(a.reports, reports)
	before := a.snapshot(t)
	binBefore := fileSHA256(t, a.bin)
	env := append([]string{"FLAKEGATE_LEDGER=" + a.ledger, "PGPASSWORD=" + attackSecrets[0], "GITHUB_TOKEN=" + attackSecrets[1]}, a.m.env...)
	a.grant(t)
	w := startWatch(marker, a.tmp, a.dir)
	cr := a.exec(t, env, append([]string{"--base", "base", "--candidate", tag, "--out", out,
		"--junit", filepath.Join(reports, "junit.xml"), "--markdown", filepath.Join(reports, "report.md")}, args...)...)
	a.watch = w.stop()
	a.revoke(t)
	noSurvivor(t, marker)
	if fileSHA256(t, a.bin) != binBefore {
		t.Errorf("[%s] flakegate's binary %s changed during the check", a.m.name, a.bin)
	}
	a.noLeak(t, cr)
	if left, _ := filepath.Glob(filepath.Join(a.tmp, "flakegate-overlay-*")); len(left) != 0 {
		t.Errorf("[%s] overlay layer folders left in flakegate's TMPDIR after the check: %v", a.m.name, left)
	}
	if cr.code <= 1 {
		switch a.m.name {
		case rootOverlay.name:
			if !strings.Contains(cr.stderr, overlayLine) {
				t.Errorf("[%s] the check did not run on overlays (stderr lacks %q): the mode is not what the test says\n%s", a.m.name, overlayLine, cr)
			}
		case rootReset.name, nonRootCopy.name:
			if !strings.Contains(cr.stderr, copyLine) {
				t.Errorf("[%s] the check did not run on fresh copies (stderr lacks %q): the mode is not what the test says\n%s", a.m.name, copyLine, cr)
			}
		case nonRoot.name:
			if !strings.Contains(cr.stderr, overlayLine+" in the helper's user namespace") {
				t.Errorf("[%s] the check did not run on overlays in the helper's user namespace (stderr lacks %q): the mode is not what the test says\n%s", a.m.name, overlayLine, cr)
			}
		}
	}
	a.intact(t, before)
	return cr
}

func fileSHA256(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// readTree reads every file under dir ("" for none when dir is missing),
// keyed by its path.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() || !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		files[p] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// leakForms are the forms of a secret an attack may print to get it past
// a redaction: as it is, reversed, and base64-encoded at any alignment
// (the characters only the secret's bytes decide).
func leakForms(s string) map[string]string {
	forms := map[string]string{"raw": s, "reversed": reverse(s)}
	for off := 0; off < 3; off++ {
		enc := base64.StdEncoding.EncodeToString(append(make([]byte, off), s...))
		start := 0
		if off > 0 {
			start = 4
		}
		end := 4 * ((off + len(s)) / 3)
		if end-start >= 8 {
			forms["base64 at offset "+strconv.Itoa(off)] = enc[start:end]
		}
	}
	return forms
}

func reverse(s string) string {
	b := []byte(s)
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	return string(b)
}

// noLeak fails if a secret is in flakegate's output, the ledger, an
// output folder or a report, in any of its leak forms.
func (a *a16) noLeak(t *testing.T, cr *checkRun) {
	t.Helper()
	places := map[string]string{"flakegate's stdout": cr.stdout, "flakegate's stderr": cr.stderr}
	dirs := append(append([]string{a.ledger}, a.outs...), a.reports...)
	for _, d := range dirs {
		for p, data := range readTree(t, d) {
			places[p] = data
		}
	}
	secrets := append(append([]string(nil), attackSecrets...), a.secrets...)
	for _, s := range secrets {
		leaks := map[string][]string{} // where → forms
		for form, v := range leakForms(s) {
			for where, data := range places {
				if strings.Contains(data, v) {
					leaks[where] = append(leaks[where], form)
				}
			}
		}
		for _, where := range keys(leaks) {
			sort.Strings(leaks[where])
			t.Errorf("[%s] SECRET LEAKED: %q (%s) in %s", a.m.name, s, strings.Join(leaks[where], ", "), where)
		}
	}
}

// state16 is what an attack must leave as it was: the store without its
// records (which only grow), and each worktree's revision and seal.
type state16 struct {
	store map[string]string
	trees map[string]treeState
}

type treeState struct {
	head, seal string // seal "" when the tree is not sealed
}

func (a *a16) snapshot(t *testing.T) *state16 {
	t.Helper()
	s := &state16{store: map[string]string{}, trees: map[string]treeState{}}
	for p, data := range readTree(t, a.ledger) {
		name := strings.TrimPrefix(p, a.ledger)
		if strings.HasPrefix(name, "/records/") || strings.HasSuffix(name, ".lock") || name == "/lock" ||
			name == "/corpus.json" { // the check records failing seeds (e2e/corpus_test.go)
			continue
		}
		s.store[name] = data
	}
	root := treesDir(t, a.dir)
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(root, e.Name())
		out, err := exec.Command("git", "-c", "safe.directory=*", "-C", dir, "status", "--porcelain", "--ignored", "--untracked-files=all").CombinedOutput()
		if err != nil || len(out) != 0 {
			t.Errorf("[%s] worktree %s is not a clean checkout after the check: %v\n%s", a.m.name, e.Name(), err, out)
		}
		head, _ := exec.Command("git", "-c", "safe.directory=*", "-C", dir, "rev-parse", "HEAD").Output()
		seal, _ := os.ReadFile(filepath.Join(a.dir, ".git", "worktrees", e.Name(), "flakegate-sealed"))
		s.trees[e.Name()] = treeState{head: strings.TrimSpace(string(head)), seal: strings.TrimSpace(string(seal))}
	}
	return s
}

// intact fails unless the store holds every file it held before the
// check, byte for byte (new files only in the replay cache), the trees
// are clean, a sealed tree is sealed at its own revision, a base tree is
// at the base commit, and the trees are sealed as after the previous
// check.
func (a *a16) intact(t *testing.T, before *state16) {
	t.Helper()
	after := a.snapshot(t)
	for name, data := range before.store {
		got, ok := after.store[name]
		switch {
		case !ok:
			t.Errorf("[%s] store file %s vanished during the check", a.m.name, name)
		case got != data && name != "/corpus.json": // the failure corpus grows by what failed
			t.Errorf("[%s] store file %s changed during the check", a.m.name, name)
		}
	}
	for name := range after.store {
		if _, ok := before.store[name]; !ok && !strings.HasPrefix(name, "/replay/") && name != "/seed-secret" && name != "/corpus.json" {
			t.Errorf("[%s] the check added %s to the store (only records, replay cache entries, the failure corpus and the seed secret at first use may be added)", a.m.name, name)
		}
	}
	baseSHA := a.git("rev-parse", "base^{commit}")
	for name, ts := range after.trees {
		if ts.seal != "" && ts.seal != ts.head {
			t.Errorf("[%s] worktree %s is sealed at %s but checked out at %s", a.m.name, name, ts.seal, ts.head)
		}
		if strings.HasPrefix(name, "base-") && ts.head != baseSHA {
			t.Errorf("[%s] base worktree %s is at %s, not the base commit %s", a.m.name, name, ts.head, baseSHA)
		}
		if a.last != nil {
			if prev, ok := a.last.trees[name]; ok && (prev.seal != "") != (ts.seal != "") {
				t.Errorf("[%s] worktree %s: sealed %t after the previous check, %t after this one", a.m.name, name, prev.seal != "", ts.seal != "")
			}
		}
	}
	a.last = after
}

// hostWatch samples the host while a check runs: the processes whose
// command line holds the marker (how many at once, their host uids, their
// largest resident size) and the free space of some folders' file
// systems.
type hostWatch struct {
	marker    string
	paths     []string
	done      chan struct{}
	finished  chan struct{}
	MaxProcs  int
	UIDs      map[int]int // host uid → processes seen
	MaxRSSKiB int64
	FreeStart map[string]uint64
	FreeMin   map[string]uint64
}

func startWatch(marker string, paths ...string) *hostWatch {
	w := &hostWatch{marker: marker, paths: paths, done: make(chan struct{}), finished: make(chan struct{}),
		UIDs: map[int]int{}, FreeStart: map[string]uint64{}, FreeMin: map[string]uint64{}}
	for _, p := range paths {
		if f, ok := freeBytes(p); ok {
			w.FreeStart[p], w.FreeMin[p] = f, f
		}
	}
	go func() {
		defer close(w.finished)
		for {
			w.sample()
			select {
			case <-w.done:
				return
			case <-time.After(25 * time.Millisecond):
			}
		}
	}()
	return w
}

func (w *hostWatch) sample() {
	for _, p := range w.paths {
		if f, ok := freeBytes(p); ok && f < w.FreeMin[p] {
			w.FreeMin[p] = f
		}
	}
	if w.marker == "" {
		return
	}
	pids := processesWith(w.marker)
	if len(pids) > w.MaxProcs {
		w.MaxProcs = len(pids)
	}
	for _, pid := range pids {
		f, err := os.Open(filepath.Join("/proc", strconv.Itoa(pid), "status"))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 2 {
				continue
			}
			switch fields[0] {
			case "Uid:":
				if uid, err := strconv.Atoi(fields[1]); err == nil {
					w.UIDs[uid]++
				}
			case "VmRSS:":
				if kib, err := strconv.ParseInt(fields[1], 10, 64); err == nil && kib > w.MaxRSSKiB {
					w.MaxRSSKiB = kib
				}
			}
		}
		f.Close()
	}
}

func (w *hostWatch) stop() *hostWatch {
	close(w.done)
	<-w.finished
	w.sample()
	return w
}

// dropMiB is how much the free space of path's file system fell at worst.
func (w *hostWatch) dropMiB(path string) int64 {
	return (int64(w.FreeStart[path]) - int64(w.FreeMin[path])) >> 20
}

func freeBytes(path string) (uint64, bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return 0, false
	}
	return st.Bavail * uint64(st.Bsize), true
}

// nonce is a random name part: a key, a marker or a file of one test.
func nonce(t *testing.T) string {
	t.Helper()
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b[:])
}

// exfil16 is shell the attacks run first: it hunts the environment's
// secrets in every process it can see and prints them raw, reversed and
// base64-encoded (the facts the tests read come after, at the end of the
// output tail).
const exfil16 = `exfil() {
	cat /proc/[0-9]*/environ 2>/dev/null | tr '\0' '\n' | grep -E '^(PGPASSWORD|GITHUB_TOKEN|FLAKEGATE_[A-Z_]*)=' | sort -u > "/tmp/.fg16-env" 2>/dev/null
	env | grep -E '^(PGPASSWORD|GITHUB_TOKEN|FLAKEGATE_[A-Z_]*)=' >> "/tmp/.fg16-env" 2>/dev/null
	if [ -s "/tmp/.fg16-env" ]; then
		echo "EXFIL-ENV"; cat "/tmp/.fg16-env"; rev "/tmp/.fg16-env"; base64 -w0 "/tmp/.fg16-env"; echo
	fi
	rm -f "/tmp/.fg16-env"
}
`

// tailOf returns the output tail of the record's attempt side/index.
func tailOf(t *testing.T, rec *flakegate.RunRecord, side string, index int) string {
	t.Helper()
	for _, at := range rec.Attempts {
		if at.Side == side && at.Index == index {
			return at.OutputTail
		}
	}
	t.Fatalf("the record has no %s attempt %d: %+v", side, index, rec.Attempts)
	return ""
}

// linesWith returns the lines of s that start with prefix, without it.
func linesWith(s, prefix string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if rest, ok := strings.CutPrefix(l, prefix); ok {
			out = append(out, rest)
		}
	}
	return out
}

// ---------------------------------------------------------------------
// 1. No privilege, in every mode.

// privProbe is the python the privilege attack runs: every privileged
// operation in a child of its own (an unshare or a mount must not change
// the probe itself), reporting BROKE name when it succeeded and HELD name
// when it failed.
const privProbe = `import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
def arg(x):
    if isinstance(x, int):
        return ctypes.c_long(x)
    return x
def sc(*a):
    r = libc.syscall(*[arg(x) for x in a])
    return r, ctypes.get_errno()
broke = []
def attempt(name, fn):
    pid = os.fork()
    if pid == 0:
        try:
            r, e = fn()
        except Exception as ex:
            os.write(1, ("HELD %s (%s)\n" % (name, ex)).encode()); os._exit(1)
        if r >= 0:
            os.write(1, ("BROKE %s -> %d\n" % (name, r)).encode()); os._exit(0)
        os.write(1, ("HELD %s (%s)\n" % (name, os.strerror(e))).encode()); os._exit(1)
    _, st = os.waitpid(pid, 0)
    if os.WIFEXITED(st) and os.WEXITSTATUS(st) == 0:
        broke.append(name)
MS_BIND, MS_REMOUNT = 4096, 32
home = os.environ.get("HOME", "/tmp").encode()
attempt("mount(2) remount,bind,rw /", lambda: sc(165, b"none", b"/", None, MS_REMOUNT | MS_BIND, None))
attempt("mount(2) tmpfs on $HOME", lambda: sc(165, b"fg16", home, b"tmpfs", 0, None))
attempt("mount(2) bind / on /tmp", lambda: sc(165, b"/", b"/tmp", None, MS_BIND, None))
attempt("unshare(2) CLONE_NEWUSER", lambda: sc(272, 0x10000000))
attempt("unshare(2) CLONE_NEWNS", lambda: sc(272, 0x00020000))
attempt("add_key(2)", lambda: sc(248, b"user", b"fg16-probe", b"x", 1, -4))
attempt("keyctl(2) JOIN_SESSION_KEYRING", lambda: sc(250, 1, None))
def cg_mkdir():
    for c in sorted(os.listdir("/sys/fs/cgroup")):
        p = "/sys/fs/cgroup/%s/fg16-%d" % (c, os.getpid())
        try:
            os.mkdir(p)
        except OSError:
            continue
        os.rmdir(p)
        return 0, 0
    return -1, 1
def cg_procs():
    for c in sorted(os.listdir("/sys/fs/cgroup")):
        for f in ("cgroup.procs", "tasks"):
            try:
                with open("/sys/fs/cgroup/%s/%s" % (c, f), "w") as fh:
                    fh.write(str(os.getpid()))
                return 0, 0
            except OSError:
                pass
    return -1, 1
attempt("mkdir in /sys/fs/cgroup", cg_mkdir)
attempt("write a cgroup's cgroup.procs", cg_procs)
attempt("umount2(2) /proc", lambda: sc(166, b"/proc", 2))
print("BROKE-COUNT", len(broke))
sys.exit(1 if broke else 0)
`

// TestAttack16NoPrivilege: every attempt runs without capabilities, with
// no_new_privs and a seccomp filter, not as root on the host; mounts,
// unmounts, new user or mount namespaces, the keyring and the cgroup
// file system all fail. The probe fails its property when one of them
// succeeded, so the label PASS (exit 0) says every one held.
func TestAttack16NoPrivilege(t *testing.T) {
	forModes(t, allModes16, func(t *testing.T, m mode16) {
		marker := "fg16uid" + nonce(t)
		probeKey := "fg16-probe-" + nonce(t)
		t.Cleanup(func() { unlinkKeys(t, probeKey) })
		a := newA16(t, m, config16("", ""), libOK)
		a.candidate("evil", map[string]string{"src/lib.sh": exfil16 + `ok() {
	exfil
	sh -c 'sleep 1.5; true # ` + marker + `' &
	broke=0
	py=/usr/bin/python3; [ -x "$py" ] || py=python3
	cat > "/tmp/fg16probe.py" <<'PY'
` + strings.ReplaceAll(privProbe, "fg16-probe", probeKey) + `PY
	"$py" "/tmp/fg16probe.py" || broke=1
	for c in "mount -o remount,bind,rw /" "unshare -U true" "unshare -m true" "mount -t tmpfs fg16 /mnt" "umount -l /tmp"; do
		if $c >/dev/null 2>&1; then echo "BROKE $c"; broke=1; else echo "HELD $c"; fi
	done
	wait
	echo "FACT-STATUS-BEGIN"
	grep -E '^(Uid|Gid|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs|Seccomp):' /proc/self/status
	echo "FACT-STATUS-END"
	return $broke
}
`})
		cr := a.run(t, "evil", marker)
		if cr.code > 1 {
			t.Fatalf("[%s] the check did not run\n%s", m.name, cr)
		}
		tail := tailOf(t, cr.record(t, 0), "candidate", 0)
		for _, l := range linesWith(tail, "BROKE ") {
			if !strings.HasPrefix(l, "-COUNT") {
				t.Errorf("[%s] PRIVILEGE: inside the attempt %s SUCCEEDED", m.name, l)
			}
		}
		if !strings.Contains(tail, "BROKE-COUNT") {
			t.Errorf("[%s] the python probe did not run to its end (python3 missing in the sandbox?):\n%s", m.name, tail)
		}
		status := map[string]string{}
		for _, l := range strings.Split(tail, "\n") {
			k, v, ok := strings.Cut(l, ":")
			if ok && (strings.HasPrefix(k, "Cap") || k == "NoNewPrivs" || k == "Seccomp" || k == "Uid" || k == "Gid") {
				status[k] = strings.TrimSpace(v)
			}
		}
		for k, want := range map[string]string{"CapEff": "0000000000000000", "CapPrm": "0000000000000000", "CapBnd": "0000000000000000",
			"NoNewPrivs": "1", "Seccomp": "2"} {
			if status[k] != want {
				t.Errorf("[%s] PRIVILEGE: /proc/self/status inside the attempt says %s: %q, want %q", m.name, k, status[k], want)
			}
		}
		t.Logf("[%s] inside the attempt: Uid %q Gid %q", m.name, status["Uid"], status["Gid"])
		if len(a.watch.UIDs) == 0 {
			t.Errorf("[%s] the harness saw no process of the attempt (marker %s) to read its host uid", m.name, marker)
		}
		if n := a.watch.UIDs[0]; n > 0 {
			t.Errorf("[%s] PRIVILEGE: the attempt's processes run as uid 0 on the host (%d samples); host uids seen %v", m.name, n, a.watch.UIDs)
		}
		labelsAre(t, cr, 0, "PASS")
	})
}

// ---------------------------------------------------------------------
// 2. The keyring.

// TestAttack16Keyring: a deterministic regression uses the kernel's user
// keyring to tell a retry from the first attempt: the first adds a key
// and fails, a retry finds the key and passes. The keyring is out of
// reach (seccomp), every attempt fails, and the label is PROPERTY, not
// SCHEDULER.
func TestAttack16Keyring(t *testing.T) {
	forModes(t, allModes16, func(t *testing.T, m mode16) {
		desc := "fg16-key-" + nonce(t)
		t.Cleanup(func() { unlinkKeys(t, desc+"-11", desc+"-12") })
		a := newA16(t, m, config16("", ""), libOK)
		a.candidate("evil", map[string]string{"src/lib.sh": exfil16 + `ok() {
	exfil
	py=/usr/bin/python3; [ -x "$py" ] || py=python3
	"$py" - "$1" <<'PY'
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
desc = ("` + desc + `-" + sys.argv[1]).encode()
L = ctypes.c_long
r = libc.syscall(L(249), b"user", desc, None, L(-4))
if r > 0:
    print("KEY-SEEN", r, "- a retry: pass")
    sys.exit(0)
r = libc.syscall(L(248), b"user", desc, b"x", L(1), L(-4))
print("KEY-ADDED" if r > 0 else "KEY-REFUSED", r, ctypes.get_errno())
sys.exit(1)
PY
}
`})
		cr := a.run(t, "evil", "")
		if cr.code > 1 {
			t.Fatalf("[%s] the check did not run\n%s", m.name, cr)
		}
		rec := cr.record(t, 0)
		for _, at := range rec.Attempts {
			if at.Side != "candidate" {
				continue
			}
			if strings.Contains(at.OutputTail, "KEY-SEEN") {
				t.Errorf("[%s] KEYRING: candidate attempt %d found the key an earlier attempt added: the keyring tells a retry from attempt 1", m.name, at.Index)
			}
			if strings.Contains(at.OutputTail, "KEY-ADDED") {
				t.Errorf("[%s] KEYRING: candidate attempt %d added a key to the kernel keyring (add_key succeeded)", m.name, at.Index)
			}
		}
		if cr.code == 0 && strings.Join(cr.labels(), ",") == "SCHEDULER" {
			t.Errorf("[%s] KEYRING: the deterministic regression became SCHEDULER and exit 0 through the keyring", m.name)
		}
		labelsAre(t, cr, 1, "PROPERTY")
	})
}

// unlinkKeys removes from the host's user keyring the keys an attack
// added (they outlive the sandbox when add_key works).
func unlinkKeys(t *testing.T, descs ...string) {
	script := `import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
L = ctypes.c_long
for d in sys.argv[1:]:
    r = libc.syscall(L(249), b"user", d.encode(), None, L(-4))
    if r > 0:
        libc.syscall(L(250), L(21), L(r))
`
	if out, err := exec.Command("python3", append([]string{"-c", script}, descs...)...).CombinedOutput(); err != nil {
		t.Logf("removing the attack's keys: %v\n%s", err, out)
	}
}

// ---------------------------------------------------------------------
// 3. A minimal root.

// TestAttack16MinimalRoot: files of the host outside the sandbox's list
// are absent inside: a root-only key in a new folder under /var/tmp, a
// file in another user's home, /etc/shadow. The attack prints each, raw,
// reversed and base64-encoded; no byte of them reaches any output, and
// each is reported absent (not merely unreadable).
func TestAttack16MinimalRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the harness creates root-only files: needs root")
	}
	forModes(t, allModes16, func(t *testing.T, m mode16) {
		n := nonce(t)
		keyDir := "/var/tmp/fg-secret-" + n
		homeDir := "/home/fgtestuser-" + n
		t.Cleanup(func() { os.RemoveAll(keyDir); os.RemoveAll(homeDir) })
		keyFile, homeFile := filepath.Join(keyDir, "runner.key"), filepath.Join(homeDir, "secret.txt")
		keySecret, homeSecret := "fg16-runner-key-"+nonce(t), "fg16-home-secret-"+nonce(t)
		if err := os.Mkdir(keyDir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(keyFile, []byte(keySecret), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(homeDir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(homeFile, []byte(homeSecret), 0o644); err != nil {
			t.Fatal(err)
		}
		a := newA16(t, m, config16("", ""), libOK)
		a.secrets = []string{keySecret, homeSecret}
		if shadow, err := os.ReadFile("/etc/shadow"); err == nil {
			for _, l := range strings.Split(string(shadow), "\n") {
				if len(l) >= 10 {
					a.secrets = append(a.secrets, l)
				}
			}
		}
		a.candidate("evil", map[string]string{"src/lib.sh": exfil16 + `ok() {
	exfil
	for f in "` + keyFile + `" "` + homeFile + `" /etc/shadow; do
		cat "$f" 2>/dev/null; echo; rev "$f" 2>/dev/null; base64 -w0 "$f" 2>/dev/null; echo
		ls -la "$(dirname "$f")" 2>/dev/null | head -5
		if err=$(stat -c %n "$f" 2>&1); then echo "FILE PRESENT $f"
		else case "$err" in *"No such file"*) echo "FILE ABSENT $f";; *) echo "FILE HIDDEN-BUT-PRESENT $f: $err";; esac; fi
	done
	return 0
}
`})
		cr := a.run(t, "evil", "")
		if cr.code > 1 {
			t.Fatalf("[%s] the check did not run\n%s", m.name, cr)
		}
		tail := tailOf(t, cr.record(t, 0), "candidate", 0)
		got := map[string]string{}
		for _, l := range linesWith(tail, "FILE ") {
			state, path, _ := strings.Cut(l, " ")
			path, _, _ = strings.Cut(path, ":")
			got[path] = state
		}
		for _, f := range []string{keyFile, homeFile, "/etc/shadow"} {
			if got[f] != "ABSENT" {
				t.Errorf("[%s] MINIMAL ROOT: host file %s is %s inside the attempt, want absent", m.name, f, got[f])
			}
		}
		labelsAre(t, cr, 0, "PASS")
	})
}

// TestAttack16FrameworksNonRoot: a pytest+hypothesis property still runs
// and passes when flakegate runs without privileges. TestCheckGoRapid and TestCheckPytestHypothesis cover the
// root mode.
func TestAttack16FrameworksNonRoot(t *testing.T) {
	needMode(t, nonRoot)
	if _, err := exec.LookPath("pytest"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("pytest is not installed")
		}
		t.Skip("pytest is not installed")
	}
	files := exampleFiles(t, "pytest-hypothesis")
	a := newA16Files(t, nonRoot, files)
	a.candidate("docs", map[string]string{"README.md": files["README.md"] + "\nA docs-only patch.\n"})
	docs := a.run(t, "docs", "")
	if docs.code != 0 || strings.Join(docs.labels(), ",") != "PASS,PASS,PASS,PASS" {
		t.Fatalf("[nonroot] FRAMEWORK: a docs-only candidate of the pytest+hypothesis example does not pass in the sandbox\n%s", docs)
	}
}

// ---------------------------------------------------------------------
// 4. A retry looks exactly like a first attempt.

// fingerprint16 prints the attempt's view, section by section (FPTXT
// lines), then one FP line per section with the sha256 of its text, last,
// so that they are in the output tail whatever its length.
const fingerprint16 = `sec() {
	name=$1; shift
	txt=$("$@" 2>&1)
	printf '%s\n' "$txt" | sed "s|^|FPTXT $name: |"
	echo "FP $name $(printf '%s' "$txt" | sha256sum | cut -c1-16)" >> "/tmp/.fg16-fp"
}
fp_hostname() { hostname 2>/dev/null || cat /proc/sys/kernel/hostname; }
fp_env() { env | sort; }
fp_mounts() { cut -d' ' -f4- /proc/self/mountinfo; }
fp_pid1() { tr '\0' ' ' </proc/1/cmdline; }
fingerprint() {
	rm -f "/tmp/.fg16-fp"
	echo "PWD-IS $(pwd)"
	sec pwd pwd
	sec hostname fp_hostname
	sec id id
	sec env fp_env
	sec mountinfo fp_mounts
	sec pid1 fp_pid1
	cat "/tmp/.fg16-fp"
}
`

// TestAttack16RetryFingerprint: a failing candidate prints a fingerprint
// of its view (working directory, host name, ids, sorted environment,
// mountinfo without mount ids and device numbers, the command line of pid
// 1, which is bwrap's) in each of its three
// attempts; the three are identical, and the working directory is under
// /sandbox/tree.
func TestAttack16RetryFingerprint(t *testing.T) {
	forModes(t, allModes16, func(t *testing.T, m mode16) {
		a := newA16(t, m, config16("", ""), libOK)
		a.candidate("evil", map[string]string{"src/lib.sh": exfil16 + fingerprint16 + `ok() {
	exfil
	fingerprint
	return 1
}
`})
		cr := a.run(t, "evil", "")
		if cr.code > 1 {
			t.Fatalf("[%s] the check did not run\n%s", m.name, cr)
		}
		rec := cr.record(t, 0)
		fps := map[int]map[string]string{}
		texts := map[int]string{}
		for _, at := range rec.Attempts {
			if at.Side != "candidate" {
				continue
			}
			fp := map[string]string{}
			for _, l := range linesWith(at.OutputTail, "FP ") {
				name, sum, _ := strings.Cut(l, " ")
				fp[name] = sum
			}
			if len(fp) != 6 {
				t.Errorf("[%s] candidate attempt %d printed %d fingerprint sections, want 6:\n%s", m.name, at.Index, len(fp), at.OutputTail)
			}
			fps[at.Index], texts[at.Index] = fp, at.OutputTail
			for _, pwd := range linesWith(at.OutputTail, "PWD-IS ") {
				if pwd != "/sandbox/tree" && !strings.HasPrefix(pwd, "/sandbox/tree/") {
					t.Errorf("[%s] FIXED PATH: candidate attempt %d runs in %s, not under /sandbox/tree", m.name, at.Index, pwd)
				}
			}
		}
		if len(fps) != 3 {
			t.Fatalf("[%s] %d candidate attempts, want 3 (retry_cap 2)\n%s", m.name, len(fps), cr)
		}
		for i := 1; i < 3; i++ {
			for _, sec := range []string{"pwd", "hostname", "id", "env", "mountinfo", "pid1"} {
				if fps[i][sec] != fps[0][sec] {
					t.Errorf("[%s] RETRY TELLS: the %s of candidate attempt %d differs from attempt 0's:\n%s", m.name, sec, i,
						diffLines(linesWith(texts[0], "FPTXT "+sec+": "), linesWith(texts[i], "FPTXT "+sec+": ")))
				}
			}
		}
		labelsAre(t, cr, 1, "PROPERTY")
	})
}

// diffLines lists the lines only in a (-) and only in b (+).
func diffLines(a, b []string) string {
	in := func(xs []string) map[string]bool {
		m := map[string]bool{}
		for _, x := range xs {
			m[x] = true
		}
		return m
	}
	ina, inb := in(a), in(b)
	var out []string
	for _, x := range a {
		if !inb[x] {
			out = append(out, "- "+x)
		}
	}
	for _, x := range b {
		if !ina[x] {
			out = append(out, "+ "+x)
		}
	}
	sort.Strings(out)
	if len(out) == 0 {
		return "(the lines kept in the output tails are the same; the difference was cut off)"
	}
	return strings.Join(out, "\n")
}

// TestAttack16TreeName: the direct attack on the reset mode's two
// candidate trees: pass when the working directory's name ends in b (the
// second tree, where the first retry runs). Every attempt sees one path:
// PROPERTY, not SCHEDULER.
func TestAttack16TreeName(t *testing.T) {
	forModes(t, allModes16, func(t *testing.T, m mode16) {
		a := newA16(t, m, config16("", ""), libOK)
		a.candidate("evil", map[string]string{"src/lib.sh": `ok() {
	echo "PWD-IS $PWD"
	case "$(basename "$PWD")" in *b) return 0;; esac
	return 1
}
`})
		cr := a.run(t, "evil", "")
		if cr.code <= 1 && len(cr.labels()) > 0 && cr.labels()[0] == "SCHEDULER" {
			t.Errorf("[%s] RETRY TELLS: the tree's name told a retry from the first attempt: SCHEDULER", m.name)
		}
		labelsAre(t, cr, 1, "PROPERTY")
	})
}

// ---------------------------------------------------------------------
// 5. Limits.

const limits16 = "  limits: {memory: 256MiB, pids: 64, tmp: 64MiB, disk: 64MiB}\n"

// limitLib is a library whose behaviour the seed picks: 1 a memory bomb
// (1 GiB in 64 MiB chunks), 2 a fork bomb (500 sleeps), 3 to 5 filling
// /tmp, $HOME and /dev/shm, 6 filling the tree, 7 an honest use well under
// every limit. Every process it starts carries marker in its command line.
func limitLib(marker string) string {
	return exfil16 + `fill() { dd if=/dev/zero of="$1" bs=1M count=300 2>&1 | tail -1; sync; }
ok() {
	exfil
	py=/usr/bin/python3; [ -x "$py" ] || py=python3
	case "$1" in
	1) "$py" -c 'import sys
b = []
for i in range(16):
    b.append(b"\x01" * (64 << 20))  # ` + marker + `
print("ALLOCATED", len(b) * 64, "MiB")' ;;
	2) ln -sf "$(command -v sleep)" "/tmp/` + marker + `"
	   i=0; while [ $i -lt 500 ]; do "/tmp/` + marker + `" 30 & i=$((i+1)); done
	   echo "SPAWNED $i" ;;
	3) fill /tmp/fg16-big ;;
	4) fill "$HOME/fg16-big" ;;
	5) fill /dev/shm/fg16-big ;;
	6) fill ./fg16-big ;;
	7) "$py" -c 'b = b"\x01" * (32 << 20)  # ` + marker + `'
	   for i in 1 2 3 4 5 6 7 8; do sh -c 'sleep 0.2; true # ` + marker + `' & done; wait
	   dd if=/dev/zero of=/tmp/fg16-small bs=1M count=8 2>/dev/null
	   dd if=/dev/zero of=./fg16-small bs=1M count=8 2>/dev/null
	   echo HONEST ;;
	esac
	return 0
}
`
}

// limitWant is the label and the reason word of each seed of limitLib.
var limitWant = map[string]struct{ label, why string }{
	"1": {"BUDGET", "memory"}, "2": {"BUDGET", "pids"}, "3": {"BUDGET", "tmp"}, "4": {"BUDGET", "tmp"},
	"5": {"BUDGET", "tmp"}, "6": {"BUDGET", "disk"}, "7": {"PASS", ""},
}

// TestAttack16Limits: with sandbox.limits set, the memory bomb, the fork
// bomb and the floods of /tmp, $HOME, /dev/shm and (overlay mode) the tree
// are each BUDGET, the result's reason naming the limit, while an honest
// candidate under every limit passes; the host stays bounded: no
// attempt's process held more than the memory limit or outnumbered the
// pids limit, the disk's free space fell by about the disk limit at most,
// and nothing survives. Without privileges a limit flakegate cannot
// enforce is exit 2 naming it (then the enforceable tmp limit is tested
// alone).
func TestAttack16Limits(t *testing.T) {
	forModes(t, allModes16, func(t *testing.T, m mode16) {
		marker := "fg16lim" + nonce(t)
		seeds, limits := "[1, 2, 3, 4, 5, 6, 7]", limits16
		if m.name != rootOverlay.name {
			// Only an overlay's writable layer can be bounded by disk.
			seeds, limits = "[1, 2, 3, 4, 5, 7]", "  limits: {memory: 256MiB, pids: 64, tmp: 64MiB}\n"
		}
		a := newA16(t, m, config16(seeds, limits), libOK)
		a.candidate("evil", map[string]string{"src/lib.sh": limitLib(marker)})
		cr := a.run(t, "evil", marker)
		if m.uid != 0 && cr.code == 2 {
			if !strings.Contains(cr.stderr, "memory") && !strings.Contains(cr.stderr, "pids") {
				t.Fatalf("[%s] LIMITS: exit 2 without naming the limit (memory or pids) it cannot enforce\n%s", m.name, cr)
			}
			t.Logf("[%s] memory/pids cannot be enforced without privileges: %s", m.name, lastLine(cr.stderr))
			a.git("checkout", "-q", "--detach", "base")
			a.commit("tmp limit only", map[string]string{"flakegate.yaml": config16("[3, 4, 5, 7]", "  limits: {tmp: 64MiB}\n")})
			a.git("tag", "-f", "base")
			a.candidate("evil2", map[string]string{"src/lib.sh": limitLib(marker)})
			cr = a.run(t, "evil2", marker)
		}
		if cr.code > 1 {
			t.Fatalf("[%s] LIMITS: the check with sandbox.limits did not run\n%s", m.name, cr)
		}
		if cr.code != 1 && m.uid == 0 {
			t.Errorf("[%s] exit %d, want 1 (a BUDGET reject)", m.name, cr.code)
		}
		for _, res := range cr.summary.Results {
			want := limitWant[res.Seed.String()]
			if m.uid != 0 && want.why == "tmp" {
				// Without root, bwrap's own tmpfs bound the flood (the host
				// check below), but flakegate cannot see that one filled up:
				// the test saw ENOSPC, and its exit decides the label.
				continue
			}
			if string(res.Label) != want.label {
				t.Errorf("[%s] LIMITS: seed %s (%s) is %s, want %s; reason %q", m.name, res.Seed, limitWhat(res.Seed.String()), res.Label, want.label, res.Reason)
				continue
			}
			if want.why == "tmp" && !strings.Contains(res.Reason, "tmp") && !strings.Contains(res.Reason, "disk") {
				t.Errorf("[%s] LIMITS: seed %s (%s) is BUDGET but its reason %q names neither tmp nor disk", m.name, res.Seed, limitWhat(res.Seed.String()), res.Reason)
			} else if want.why != "" && want.why != "tmp" && !strings.Contains(res.Reason, want.why) {
				t.Errorf("[%s] LIMITS: seed %s (%s) is BUDGET but its reason %q does not name %s", m.name, res.Seed, limitWhat(res.Seed.String()), res.Reason, want.why)
			}
		}
		w := a.watch
		if w.MaxRSSKiB > (256+32)<<10 {
			t.Errorf("[%s] HOST: an attempt's process reached %d MiB resident, over the 256MiB memory limit", m.name, w.MaxRSSKiB>>10)
		}
		if w.MaxProcs > 64 {
			t.Errorf("[%s] HOST: %d of the attempt's processes were alive at once, over the pids limit 64", m.name, w.MaxProcs)
		}
		if m.name == rootOverlay.name {
			for _, p := range []string{a.tmp, a.dir} {
				if drop := w.dropMiB(p); drop > 64+96 {
					t.Errorf("[%s] HOST: the free space of %s's file system fell by %d MiB during the check, over the 64MiB disk limit", m.name, p, drop)
				}
			}
		}
	})
}

func limitWhat(seed string) string {
	return map[string]string{"1": "memory bomb", "2": "fork bomb", "3": "fills /tmp", "4": "fills $HOME",
		"5": "fills /dev/shm", "6": "fills the tree", "7": "honest"}[seed]
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// TestAttack16BaseBombs: when the base itself hits a limit (its library
// is the memory bomb) while the candidate fails plainly (so the base is
// replayed), the triple is INCOMPLETE, not PROPERTY, and the replay
// cache gets no entry.
func TestAttack16BaseBombs(t *testing.T) {
	forModes(t, allModes16, func(t *testing.T, m mode16) {
		marker := "fg16base" + nonce(t)
		bomb := `ok() {
	py=/usr/bin/python3; [ -x "$py" ] || py=python3
	"$py" -c 'b = []
for i in range(16):
    b.append(b"\x01" * (64 << 20))  # ` + marker + `'
}
`
		limits := "  limits: {memory: 256MiB}\n"
		a := newA16(t, m, config16("", limits), bomb)
		a.candidate("red", map[string]string{"src/lib.sh": "ok() { exit 1; }\n"})
		cr := a.run(t, "red", marker)
		if m.uid != 0 && cr.code == 2 && strings.Contains(cr.stderr, "memory") {
			t.Logf("[%s] the memory limit cannot be enforced without privileges (exit 2 naming it): %s", m.name, lastLine(cr.stderr))
			return
		}
		if cr.code > 1 {
			t.Fatalf("[%s] LIMITS: the check with sandbox.limits did not run\n%s", m.name, cr)
		}
		if rs, _ := filepath.Glob(filepath.Join(a.ledger, "replay", "*.json")); len(rs) != 0 {
			t.Errorf("[%s] REPLAY CACHE: a base attempt that hit the memory limit was cached: %v", m.name, rs)
		}
		if a.watch.MaxRSSKiB > (256+32)<<10 {
			t.Errorf("[%s] HOST: an attempt's process reached %d MiB resident, over the 256MiB memory limit", m.name, a.watch.MaxRSSKiB>>10)
		}
		labelsAre(t, cr, 1, "INCOMPLETE")
	})
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestAttack16UnenforceableLimit: without privileges and without overlays
// the tree's writes land in a fresh copy of the tree on the worktrees'
// disk, which flakegate cannot bound: limits.disk is refused with exit 2
// naming disk.
func TestAttack16UnenforceableLimit(t *testing.T) {
	m := nonRootCopy
	needMode(t, m)
	a := newA16(t, m, config16("", "  limits: {disk: 64MiB}\n"), libOK)
	a.candidate("docs", map[string]string{"README.md": "docs\n"})
	cr := a.run(t, "docs", "")
	if cr.code != 2 {
		t.Fatalf("[%s] LIMITS: limits.disk that cannot be enforced: exit %d, want 2\n%s", m.name, cr.code, cr)
	}
	if !strings.Contains(cr.stderr, "disk") {
		t.Errorf("[%s] LIMITS: exit 2 without naming the disk limit\n%s", m.name, cr)
	}
	if strings.Contains(cr.stderr, `"limits"`) && strings.Contains(cr.stderr, "unknown") {
		t.Errorf("[%s] LIMITS: the limits key itself is unknown\n%s", m.name, cr)
	}
}
