package action_test

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// actionUID is the job's user of the tests that run the check step
// without root (a uid of its own: RLIMIT_NPROC counts every process of a
// user on the machine).
const actionUID = 61535

// TestActionStrongestMode: the check step runs flakegate in the
// strongest mode the runner allows, and says which: as root when the job
// is root; through passwordless sudo when the job's user has it (a fake
// sudo here, which records its arguments and runs the command as the
// job's user: the test cannot grant real root to another user), with the
// job's PATH and environment, and gives the files root wrote back; as
// the job's user when sudo asks for a password, or the sudo input is
// never. Every check passes, and doctor's sandbox line names the tree
// mode reached: overlays as root, overlays in the helper's user namespace
// without root.
func TestActionStrongestMode(t *testing.T) {
	needTools(t)
	if os.Getuid() != 0 {
		t.Skip("runs the check step as another user: needs root")
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("setpriv (util-linux) is required under CI=true")
		}
		t.Skip("setpriv not installed")
	}
	a := readAction(t)
	temp := worldDir(t) // RUNNER_TEMP: flakegate is installed once
	base := map[string]string{"flakegate.yaml": baseConfig, "props/sorted.sh": "exit 0\n", "src/lib.sh": "v=1\n"}
	cand := map[string]string{"src/lib.sh": "v=2\n"}

	ws, ev := pullRequest(t, base, cand)
	r := newRunner(t, temp, ws, ev)
	if code := r.step(a, "Install flakegate"); code != 0 {
		t.Fatalf("install: exit %d\n%s%s", code, r.stdout, r.stderr)
	}
	if code := r.step(a, "flakegate check"); code != 0 || r.outputs["verdict"] != "pass" {
		t.Fatalf("as root: exit %d, verdict %q\n%s%s", code, r.outputs["verdict"], r.stdout, r.stderr)
	}
	for _, want := range []string{"flakegate runs as root (the job's user)", "tree: a throwaway overlay per attempt (as root)"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("as root: the step's output lacks %q:\n%s", want, r.stdout)
		}
	}

	for _, tc := range []struct {
		name, sudo, input string
		mode, tree        string
		viaSudo           bool
	}{
		{name: "passwordless sudo", sudo: sudoRuns, mode: "flakegate runs as root through sudo (passwordless sudo: the strongest sandbox)", viaSudo: true,
			tree: "tree: a throwaway overlay per attempt (in the helper's user namespace)"},
		{name: "sudo asks for a password", sudo: sudoRefuses, mode: "flakegate runs as uid 61535, the job's user (sudo asks for a password here)",
			tree: "tree: a throwaway overlay per attempt (in the helper's user namespace)"},
		{name: "the sudo input is never", sudo: sudoRuns, input: "never", mode: "flakegate runs as uid 61535, the job's user (the sudo input is never)",
			tree: "tree: a throwaway overlay per attempt (in the helper's user namespace)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, ev := pullRequest(t, base, cand)
			r := newRunner(t, temp, ws, ev)
			if tc.input != "" {
				r.with["sudo"] = tc.input
			}
			ac := a // asJobUser changes the steps of this subtest's copy
			log := asJobUser(t, r, &ac, tc.sudo)
			code := r.step(ac, "flakegate check")
			if code != 0 || r.outputs["verdict"] != "pass" {
				t.Fatalf("exit %d, verdict %q\n%s%s", code, r.outputs["verdict"], r.stdout, r.stderr)
			}
			for _, want := range []string{tc.mode, tc.tree} {
				if !strings.Contains(r.stdout, want) {
					t.Errorf("the step's output lacks %q:\n%s", want, r.stdout)
				}
			}
			calls, _ := os.ReadFile(log)
			bin := filepath.Join(temp, "flakegate-action", "bin", "flakegate")
			if tc.viaSudo {
				for _, want := range []string{"sudo -n true\n", "sudo -n -E -- env PATH=" + r.processPATH + " " + bin + " doctor --base ",
					"sudo -n -E -- env PATH=" + r.processPATH + " " + bin + " check --base ", "sudo -n chown -R 61535:61535 "} {
					if !strings.Contains(string(calls), want) {
						t.Errorf("sudo was not called with %q; its calls:\n%s", want, calls)
					}
				}
			} else if strings.Contains(string(calls), " check ") {
				t.Errorf("the check ran through sudo in mode %q:\n%s", tc.mode, calls)
			}
			// Nothing of the check is left that the job's user does not own.
			_ = filepath.WalkDir(filepath.Join(ws, ".git"), func(p string, d fs.DirEntry, err error) error {
				if err != nil {
					return nil
				}
				if fi, err := d.Info(); err == nil && ownerOf(fi) != actionUID {
					t.Errorf("%s is owned by uid %d after the check, not the job's user", p, ownerOf(fi))
					return fs.SkipAll
				}
				return nil
			})
		})
	}
}

// The fake sudos: each records its arguments; sudoRuns then runs the
// command after its options (as the job's user), sudoRefuses fails as
// `sudo -n` does when it would ask for a password.
const (
	sudoRuns = `#!/bin/sh
echo "sudo $*" >> "$SUDO_LOG"
while [ $# -gt 0 ]; do
	case $1 in -n|-E) shift ;; --) shift; break ;; *) break ;; esac
done
exec "$@"
`
	sudoRefuses = `#!/bin/sh
echo "sudo $*" >> "$SUDO_LOG"
echo "sudo: a password is required" >&2
exit 1
`
)

// asJobUser makes r's next steps run as uid actionUID: the steps' scripts
// through setpriv, the workspace, the runner's files and RUNNER_TEMP's
// state given to that user, a home of its own, and a fake sudo (script)
// first on PATH. It returns the file sudo logs its calls to.
func asJobUser(t *testing.T, r *runner, a *actionFile, script string) string {
	t.Helper()
	id := strconv.Itoa(actionUID)
	fakes := worldDir(t)
	log := filepath.Join(fakes, "calls")
	if err := os.WriteFile(filepath.Join(fakes, "sudo"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(log, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(log, actionUID, actionUID); err != nil {
		t.Fatal(err)
	}
	home := worldDir(t)
	r.processPATH = fakes + ":" + r.processPATH
	r.env["HOME"], r.env["SUDO_LOG"] = home, log
	for _, d := range []string{r.workspace, filepath.Dir(r.output), filepath.Join(r.temp, "flakegate-action"), home} {
		chownTree(t, d, actionUID)
		walkable(t, d)
	}
	steps := append(a.Runs.Steps[:0:0], a.Runs.Steps...)
	for i := range steps {
		steps[i].Run = "setpriv --reuid=" + id + " --regid=" + id + " --clear-groups " +
			strings.ReplaceAll(steps[i].Run, `"$GITHUB_ACTION_PATH/action/run.sh"`, `bash "$GITHUB_ACTION_PATH/action/run.sh"`)
	}
	a.Runs.Steps = steps
	return log
}

// worldDir is a folder every user may walk through (t.TempDir's parent is
// root's alone).
func worldDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "action-mode-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	if err := os.Chmod(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

// walkable makes dir's ancestors searchable by every user.
func walkable(t *testing.T, dir string) {
	t.Helper()
	for p := filepath.Dir(dir); p != "/" && p != "."; p = filepath.Dir(p) {
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

func chownTree(t *testing.T, dir string, uid int) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, uid)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func ownerOf(fi fs.FileInfo) int {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid)
	}
	return -1
}
