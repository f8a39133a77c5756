package e2e_test

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// The attacks of issue 24 on the attempt's tree (item 3): the code under
// test marks its tree with what `git reset --hard` and `git clean` do not
// undo, an extended attribute, a folder of mode 000 (which the same uid's
// git cannot clean), a read-only file and folder, the modes of committed
// files, the times of files and folders, and passes when a later attempt
// finds the mark. A deterministic regression must stay PROPERTY (exit 1),
// never SCHEDULER; the worktrees and the repository must hold none of
// the marks after the check; and a later check of another commit, whose
// code under test fails on any mark it finds, must pass. Each runs as
// root on overlays, as root with FLAKEGATE_NO_OVERLAY=1 (a fresh copy per
// attempt), without root (uid 61534: overlays in the helper's user
// namespace) and without root with FLAKEGATE_NO_OVERLAY=1 (fresh copies).

// nonRootCopy is flakegate without root, forced onto fresh copies.
var nonRootCopy = mode16{name: "nonroot-copy", env: []string{"FLAKEGATE_NO_OVERLAY=1"}, uid: nonRootUID}

var treeModes24 = []mode16{rootOverlay, rootReset, nonRoot, nonRootCopy}

// markTime is 2001-01-01 00:00:00 UTC, the time the times attack sets.
const markTime = 978307200

// treeAttacks24 are the attacks: shell that says whether the mark is
// there (seen) and shell that leaves it (set). The property script runs
// in the tree's top folder.
var treeAttacks24 = []struct{ name, seen, set string }{
	{"xattr",
		`"$py" -c 'import os; os.getxattr("src", "user.fg24")' 2>/dev/null || "$py" -c 'import os; os.getxattr("README.md", "user.fg24")' 2>/dev/null`,
		`"$py" -c 'import os; os.setxattr("src", "user.fg24", b"1"); os.setxattr("README.md", "user.fg24", b"1")'`},
	{"mode000",
		`[ -e junk ] || [ ! -r tools ]`,
		`mkdir -p junk/deep && echo x > junk/deep/f && chmod 000 junk && chmod 000 tools && chmod 000 .`},
	{"readonly",
		`[ -e marker.ro ] || [ -e rodir ]`,
		`echo x > marker.ro && chmod 444 marker.ro && mkdir rodir && echo x > rodir/f && chmod 555 rodir`},
	{"chmod",
		`[ "$(stat -c %a README.md)" = 600 ] || [ "$(stat -c %a fixtures)" = 700 ]`,
		`chmod 600 README.md && chmod 700 fixtures`},
	{"times",
		`[ "$(stat -c %Y README.md)" = ` + strconv.Itoa(markTime) + ` ] || [ "$(stat -c %Y src)" = ` + strconv.Itoa(markTime) + ` ]`,
		`touch -d @` + strconv.Itoa(markTime) + ` README.md src`},
}

// attackLib24 is the code under test of one attack: a retry that finds
// the mark passes; an attempt that does not leaves it and fails.
func attackLib24(seen, set string) string {
	return `ok() {
	py=/usr/bin/python3; [ -x "$py" ] || py=python3
	if ` + seen + `; then echo "MARK-SEEN: a retry"; return 0; fi
	if ` + set + `; then echo "MARK-SET"; else echo "MARK-REFUSED"; fi
	return 1
}
`
}

// detectLib24 is the code under test of the later check: it fails on
// any mark of any attack.
func detectLib24() string {
	var b strings.Builder
	b.WriteString("ok() {\n\tpy=/usr/bin/python3; [ -x \"$py\" ] || py=python3\n\tleak=0\n")
	for _, at := range treeAttacks24 {
		b.WriteString("\tif " + at.seen + "; then echo \"LEAK " + at.name + "\"; leak=1; fi\n")
	}
	b.WriteString("\techo DETECTED-$leak\n\treturn $leak\n}\n")
	return b.String()
}

// TestAttack24TreeMarks: each attack in each mode, then a later check of
// another commit.
func TestAttack24TreeMarks(t *testing.T) {
	forModes(t, treeModes24, func(t *testing.T, m mode16) {
		needUsernsOverlay(t, m)
		for _, at := range treeAttacks24 {
			t.Run(at.name, func(t *testing.T) {
				a := newA16(t, m, config16("", ""), libOK)
				a.candidate("evil", map[string]string{"src/lib.sh": attackLib24(at.seen, at.set)})
				a.candidate("later", map[string]string{"src/lib.sh": detectLib24(), "README.md": "another commit\n"})
				cr := a.run(t, "evil", "")
				if cr.code > 1 {
					t.Fatalf("[%s/%s] TREE: the check did not run to a label (exit %d): what an attempt left stopped flakegate\n%s", m.name, at.name, cr.code, cr)
				}
				rec := cr.record(t, 0)
				if tail := tailOf(t, rec, "candidate", 0); !strings.Contains(tail, "MARK-SET") {
					t.Fatalf("[%s/%s] the first attempt could not leave its mark: the test would prove nothing\n%s", m.name, at.name, tail)
				}
				for _, att := range rec.Attempts {
					if att.Side == "candidate" && strings.Contains(att.OutputTail, "MARK-SEEN") {
						t.Errorf("[%s/%s] TREE: candidate attempt %d found the mark an earlier attempt left", m.name, at.name, att.Index)
					}
				}
				if cr.code == 0 || strings.Join(cr.labels(), ",") == "SCHEDULER" {
					t.Errorf("[%s/%s] TREE: the deterministic regression became %v, exit %d, through the tree", m.name, at.name, cr.labels(), cr.code)
				}
				labelsAre(t, cr, 1, "PROPERTY")
				a.noMarks(t, at.name)

				later := a.run(t, "later", "")
				if later.code != 0 || strings.Join(later.labels(), ",") != "PASS" {
					t.Errorf("[%s/%s] TREE: a later check of another commit is affected by the attack's marks: exit %d, labels %v\n%s", m.name, at.name, later.code, later.labels(), later)
				} else if tail := tailOf(t, later.record(t, 0), "candidate", 0); !strings.Contains(tail, "DETECTED-0") {
					t.Errorf("[%s/%s] the later check's detector did not run:\n%s", m.name, at.name, tail)
				}
				a.noMarks(t, at.name)
			})
		}
	})
}

// TestAttack24LeftoverTree: a worktree that an older flakegate left with
// an attempt's marks in it (a folder of mode 000 inside and at a
// committed path, a read-only folder) is recovered by flakegate itself:
// the check runs to its label, and the tree is pristine after it.
func TestAttack24LeftoverTree(t *testing.T) {
	forModes(t, []mode16{rootOverlay, nonRoot}, func(t *testing.T, m mode16) {
		needUsernsOverlay(t, m)
		a := newA16(t, m, config16("", ""), libOK)
		a.candidate("red", map[string]string{"src/lib.sh": libRed})
		a.candidate("red2", map[string]string{"src/lib.sh": libRed + "# another\n"})
		if cr := a.run(t, "red", ""); cr.code != 1 {
			t.Fatalf("[%s] the first check: exit %d, want 1\n%s", m.name, cr.code, cr)
		}
		root := treesDir(t, a.dir)
		for _, name := range []string{"base-0", "candidate-0"} {
			tree := filepath.Join(root, name)
			// As an older flakegate's reset mode left it: unsealed, written.
			os.Remove(filepath.Join(a.dir, ".git", "worktrees", name, "flakegate-sealed"))
			must(t, os.MkdirAll(filepath.Join(tree, "junk", "deep"), 0o755))
			must(t, os.WriteFile(filepath.Join(tree, "junk", "deep", "f"), []byte("x"), 0o644))
			must(t, os.Mkdir(filepath.Join(tree, "rodir"), 0o755))
			must(t, os.WriteFile(filepath.Join(tree, "rodir", "f"), []byte("x"), 0o444))
			must(t, os.Chmod(filepath.Join(tree, "rodir"), 0o555))
			must(t, os.Chmod(filepath.Join(tree, "junk"), 0))
			must(t, os.Chmod(filepath.Join(tree, "tools"), 0))
		}
		// Not a.run: its snapshot before the check would fail on the
		// planted leftovers; the one after it (a.snapshot) must not.
		a.grant(t)
		cr := a.exec(t, []string{"FLAKEGATE_LEDGER=" + a.ledger}, "--base", "base", "--candidate", "red2", "--out", filepath.Join(a.work, "out-leftover"))
		a.revoke(t)
		a.snapshot(t)
		if cr.code != 1 {
			t.Fatalf("[%s] LEFTOVER: a worktree with an unreadable folder stopped the check: exit %d, want 1\n%s", m.name, cr.code, cr)
		}
		labelsAre(t, cr, 1, "PROPERTY")
		a.noMarks(t, "leftover")
	})
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// needUsernsOverlay skips (fails under CI=true) a non-root mode on
// overlays when an unprivileged user cannot mount overlayfs in a user
// namespace of its own (Linux 5.11+), which that mode needs.
func needUsernsOverlay(t *testing.T, m mode16) {
	t.Helper()
	if m.uid == 0 || len(m.env) > 0 {
		return
	}
	script := `d=$(mktemp -d) && cd "$d" && mkdir l u w m && mount -t tmpfs tmpfs u && mkdir u/u u/w && ` +
		`mount -t overlay -o lowerdir=l,upperdir=u/u,workdir=u/w,userxattr overlay m; r=$?; cd /; umount -R "$d/m" "$d/u" 2>/dev/null; rm -rf "$d"; exit $r`
	argv := []string{"unshare", "-Urm", "sh", "-c", script}
	if m.asOther() {
		id := strconv.Itoa(m.uid)
		argv = append([]string{"setpriv", "--reuid=" + id, "--regid=" + id, "--clear-groups"}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "TMPDIR=/tmp")
	if out, err := cmd.CombinedOutput(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("an unprivileged user cannot mount overlayfs in its own user namespace (Linux 5.11+; the non-root mode needs it): %v\n%s", err, out)
		}
		t.Skipf("an unprivileged user cannot mount overlayfs in its own user namespace: %v\n%s", err, out)
	}
}

// noMarks fails if the repository's checkout or a worktree holds any
// attack's mark: an extended attribute user.fg24, the mark time, a mode
// other than git's (0644 or 0755 files, 0755 folders), or a file the
// attempts made; and if an attempt's copy is left.
func (a *a16) noMarks(t *testing.T, attack string) {
	t.Helper()
	root := treesDir(t, a.dir)
	dirs := []string{a.dir}
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, filepath.Join(root, e.Name()))
		}
	}
	if len(dirs) < 3 {
		t.Errorf("[%s/%s] %d worktrees after the check, want 2 or more: the test would prove nothing", a.m.name, attack, len(dirs)-1)
	}
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				t.Errorf("[%s/%s] TREE: %v", a.m.name, attack, err)
				return nil
			}
			if d.Name() == ".git" {
				if d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			rel, _ := filepath.Rel(dir, p)
			var st syscall.Stat_t
			if err := syscall.Lstat(p, &st); err != nil {
				return err
			}
			mode := st.Mode & 0o7777
			switch {
			case d.IsDir() && mode != 0o755, !d.IsDir() && d.Type().IsRegular() && mode != 0o644 && mode != 0o755:
				t.Errorf("[%s/%s] TREE: %s in %s has mode %o after the check", a.m.name, attack, rel, dir, mode)
			}
			if st.Mtim.Sec == markTime {
				t.Errorf("[%s/%s] TREE: %s in %s has the attack's time", a.m.name, attack, rel, dir)
			}
			switch rel {
			case "junk", "rodir", "marker.ro":
				t.Errorf("[%s/%s] TREE: %s in %s is left after the check", a.m.name, attack, rel, dir)
			}
			var buf [64]byte
			if _, err := unix.Lgetxattr(p, "user.fg24", buf[:]); err == nil || !errors.Is(err, unix.ENODATA) && !errors.Is(err, unix.ENOTSUP) {
				t.Errorf("[%s/%s] TREE: %s in %s carries the attack's extended attribute (%v)", a.m.name, attack, rel, dir, err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(a.dir, ".git", "flakegate", "copies", "*")); len(left) != 0 {
		t.Errorf("[%s/%s] TREE: attempt copies left after the check: %v", a.m.name, attack, left)
	}
}

// TestAttack24NonRootDisk: without root the tree's overlay lies in the
// helper's user namespace, on a tmpfs of the disk limit, so limits.disk
// is enforced there too (it was refused, exit 2): the attempt that fills
// its tree is BUDGET naming disk, the honest one passes, and the host's
// free space falls by about the limit at most.
func TestAttack24NonRootDisk(t *testing.T) {
	needMode(t, nonRoot)
	needUsernsOverlay(t, nonRoot)
	marker := "fg24disk" + nonce(t)
	a := newA16(t, nonRoot, config16("[6, 7]", "  limits: {disk: 64MiB}\n"), libOK)
	a.candidate("evil", map[string]string{"src/lib.sh": limitLib(marker)})
	cr := a.run(t, "evil", marker)
	if cr.code != 1 {
		t.Fatalf("[%s] DISK: exit %d, want 1 (a BUDGET reject)\n%s", nonRoot.name, cr.code, cr)
	}
	for _, res := range cr.summary.Results {
		want := limitWant[res.Seed.String()]
		if string(res.Label) != want.label || !strings.Contains(res.Reason, want.why) {
			t.Errorf("[%s] DISK: seed %s (%s) is %s (%q), want %s naming %q", nonRoot.name, res.Seed, limitWhat(res.Seed.String()), res.Label, res.Reason, want.label, want.why)
		}
	}
	for _, p := range []string{a.tmp, a.dir} {
		if drop := a.watch.dropMiB(p); drop > 64+96 {
			t.Errorf("[%s] HOST: the free space of %s's file system fell by %d MiB during the check, over the 64MiB disk limit", nonRoot.name, p, drop)
		}
	}
}

// TestAttack24Immutable: an attempt cannot set the immutable or
// append-only flag on a file or folder of its tree (it would stop every
// later remove, reset or copy): chattr is refused in every mode, the
// regression stays PROPERTY, and a later check of another commit passes.
func TestAttack24Immutable(t *testing.T) {
	if _, err := exec.LookPath("chattr"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("chattr (e2fsprogs) is required under CI=true")
		}
		t.Skip("chattr not installed")
	}
	forModes(t, treeModes24, func(t *testing.T, m mode16) {
		needUsernsOverlay(t, m)
		a := newA16(t, m, config16("", ""), libOK)
		a.candidate("evil", map[string]string{"src/lib.sh": `ok() {
	for f in README.md src fixtures/data.txt; do
		if chattr +i "$f" 2>/dev/null || chattr +a "$f" 2>/dev/null; then echo "CHATTR-SET $f"; else echo "CHATTR-REFUSED $f"; fi
	done
	return 1
}
`})
		a.candidate("later", map[string]string{"src/lib.sh": detectLib24(), "README.md": "another commit\n"})
		cr := a.run(t, "evil", "")
		if cr.code > 1 {
			t.Fatalf("[%s] IMMUTABLE: the check did not run to a label (exit %d)\n%s", m.name, cr.code, cr)
		}
		for _, att := range cr.record(t, 0).Attempts {
			if att.Side != "candidate" {
				continue
			}
			if strings.Contains(att.OutputTail, "CHATTR-SET") || !strings.Contains(att.OutputTail, "CHATTR-REFUSED") {
				t.Errorf("[%s] IMMUTABLE: candidate attempt %d set a flag, or did not try:\n%s", m.name, att.Index, att.OutputTail)
			}
		}
		labelsAre(t, cr, 1, "PROPERTY")
		later := a.run(t, "later", "")
		labelsAre(t, later, 0, "PASS")
		a.noMarks(t, "immutable")
	})
}
