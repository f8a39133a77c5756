package e2e_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Issue 42, attack 5: `flakegate doctor` (default --base HEAD, so in a
// checkout of a patch it reads the patch's flakegate.yaml) ran an
// absolute argv[0] of that config with --version on the host:
// /proc/self/cwd/props/p.sh ran as uid 0 with every capability and no
// seccomp. Here a patch's config names programs of its own tree every
// way it can (absolute through /proc/self/cwd, relative, through a
// symlink, by the checkout's absolute path, by a bare name that PATH
// finds in the tree, behind env, and as the python of a sh -c script),
// with and without sandbox: {mode: none}, and each tree program writes a
// marker on the host when it runs there. Every command runs in the
// checkout of the patch: doctor, init (which asks the interpreters on
// PATH, and with --measure times the suites), check --plan, check
// --explain-watch, check with the patch as base and as candidate, and
// replay of the patch's own config. No marker may appear. A control
// runs the tree program plainly first, so the test can fail.

var hostNonRoot = mode16{name: "nonroot", uid: 61543}

// hostProgram is the tree program of the attack: it leaves a line in the
// marker file (an absolute host path, absent inside the sandbox), then
// behaves as the interpreter it stands in for.
func hostProgram(marker string) string {
	return "#!/bin/sh\necho \"ran on the host: $0 $*\" >> " + marker + "\nexec /usr/bin/python3 \"$@\"\n"
}

// hostConfig is the patch's config: every way to name a program of the
// tree as argv[0]. mode is "" or "none".
func hostConfig(repoDir, mode string) string {
	sb := "sandbox:\n  env: [FG_STATE]\n"
	if mode != "" {
		sb = "sandbox:\n  mode: " + mode + "\n  env: [FG_STATE]\n"
	}
	prop := func(name, run string) string {
		return "  - {path: props/prop.sh, name: " + name + ", seeds: [11], run: " + run + ", wall_budget: 20s}\n"
	}
	return "version: 1\nretry_cap: 1\nworkers: 1\nflake_probe_runs: 0\n" + sb + "properties:\n" +
		prop("proc", `[/proc/self/cwd/props/p.sh, "{path}", "{seed}"]`) +
		prop("relative", `[props/p.sh, "{path}", "{seed}"]`) +
		prop("symlink", `[/proc/self/cwd/link.sh, "{path}", "{seed}"]`) +
		prop("absolute", `[`+strconv.Quote(filepath.Join(repoDir, "props/p.sh"))+`, "{path}", "{seed}"]`) +
		prop("bare", `[fg-tree-tool, "{path}", "{seed}"]`) +
		prop("env", `[env, A=1, /proc/self/cwd/props/p.sh, "{path}", "{seed}"]`) +
		prop("shc", `[sh, -c, "python3 -c pass {seed}"]`) +
		"suites:\n  - {path: tests, framework: pytest, seeds: [1], wall_budget: 1m}\n"
}

// hostFiles are the patch's files: the tree programs (bin/ is on the
// PATH flakegate runs with, as a direnv `PATH_add bin` puts it), a pytest
// test beside a conftest.py that leaves the marker when it is imported,
// and the config.
func hostFiles(repoDir, marker, mode string) map[string]string {
	prog := hostProgram(marker)
	return map[string]string{
		"flakegate.yaml":     hostConfig(repoDir, mode),
		"props/p.sh":         prog,
		"link.sh":            "symlink:props/p.sh",
		"bin/fg-tree-tool":   prog,
		"bin/python3":        prog,
		"fg-tree-tool":       prog,
		"python3":            prog,
		"tests/conftest.py":  "import os\nopen(" + strconv.Quote(marker) + ", 'a').write('ran on the host: conftest.py, pid %d\\n' % os.getpid())\n",
		"tests/test_prop.py": "from hypothesis import given, strategies as st\n\n\n@given(st.integers())\ndef test_prop(x):\n    assert x == x\n",
	}
}

// hostRun runs flakegate with args in dir as m's user, with PATH led by
// the checkout's bin/ and a relative entry; it returns the exit code and
// the output.
func hostRun(t *testing.T, m mode16, bin, dir, work string, args ...string) (int, string) {
	t.Helper()
	var cmd *exec.Cmd
	if m.asOther() {
		id := strconv.Itoa(m.uid)
		cmd = exec.Command("setpriv", append([]string{"--reuid=" + id, "--regid=" + id, "--clear-groups", bin}, args...)...)
	} else {
		cmd = exec.Command(bin, args...)
	}
	cmd.Dir = dir
	cmd.Env = append(cleanEnv(), "PATH="+filepath.Join(dir, "bin")+":.:"+os.Getenv("PATH"),
		"TMPDIR="+filepath.Join(work, "tmp"), "FLAKEGATE_LEDGER="+filepath.Join(work, "ledger"), "FG_STATE="+work)
	if m.asOther() {
		cmd.Env = append(cmd.Env, "HOME="+filepath.Join(work, "home"), "XDG_CACHE_HOME="+userCache(t, m.uid))
	}
	return runExit(t, cmd)
}

func TestAttackHostProgram(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: runs flakegate")
	}
	forModes(t, []mode16{rootOverlay, hostNonRoot}, func(t *testing.T, m mode16) {
		work := t.TempDir()
		marker := filepath.Join(work, "marker")
		for _, d := range []string{"tmp", "home", "ledger"} {
			if err := os.Mkdir(filepath.Join(work, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		files := baseFiles(libOK)
		files["flakegate.yaml"] = strings.Replace(config(""), "  rw: [\"@FG_STATE@\"]\n", "", 1) +
			"  - {path: props/prop.sh, name: python, seeds: [11], run: [/usr/bin/python3, -c, \"print('ok {seed}')\"], wall_budget: 20s}\n"
		r := newRepo(t, files)
		exe := func(files map[string]string, tag string) {
			t.Helper()
			r.candidate(tag, files)
			for _, p := range []string{"props/p.sh", "bin/fg-tree-tool", "bin/python3", "fg-tree-tool", "python3"} {
				if err := os.Chmod(filepath.Join(r.dir, p), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			r.git("add", "-A")
			r.git("commit", "-q", "--amend", "--no-edit")
			r.git("tag", "-f", tag)
		}
		exe(hostFiles(r.dir, marker, ""), "evil")
		exe(hostFiles(r.dir, marker, "none"), "evil-none")
		bin := flakegateBin
		if m.asOther() {
			dir := t.TempDir()
			bin = filepath.Join(dir, "flakegate")
			copyFile(t, flakegateBin, bin, 0o755)
			reachable(t, dir)
			chownAll(t, m.uid, r.dir, work)
			reachable(t, r.dir)
			reachable(t, work)
			if err := os.Chmod(work, 0o777); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { chownAll(t, 0, r.dir, work) })
		}
		checkout := func(tag string) {
			t.Helper()
			if m.asOther() {
				chownAll(t, 0, r.dir)
			}
			r.git("checkout", "-q", "--detach", tag)
			if m.asOther() {
				chownAll(t, m.uid, r.dir)
			}
		}

		// The control: the tree program, run plainly, leaves the marker.
		checkout("evil")
		if out, err := exec.Command(filepath.Join(r.dir, "props/p.sh"), "-c", "pass").CombinedOutput(); err != nil {
			t.Fatalf("control: %v\n%s", err, out)
		}
		if b, err := os.ReadFile(marker); err != nil || !strings.Contains(string(b), "ran on the host") {
			t.Fatalf("control: the tree program left no marker: %v", err)
		}
		os.Remove(marker)

		noMarker := func(what string, code int, out string) {
			t.Helper()
			if b, err := os.ReadFile(marker); err == nil {
				t.Errorf("[%s] %s ran a program of the tree on the host (exit %d):\n%s\n--- output:\n%s", m.name, what, code, b, out)
				os.Remove(marker)
			}
		}
		type command struct {
			tag  string
			args []string
		}
		for _, c := range []command{
			{"evil", []string{"doctor"}},
			{"evil-none", []string{"doctor"}},
			{"evil", []string{"init", "--dry-run", "--no-try"}},
			{"evil", []string{"init", "--dry-run", "--measure"}},
			{"evil", []string{"check", "--plan", "--base", "HEAD"}},
			{"evil-none", []string{"check", "--plan", "--base", "HEAD"}},
			{"evil-none", []string{"check", "--explain-watch", "--base", "HEAD"}},
			{"evil", []string{"check", "--base", "HEAD", "--candidate", "HEAD", "--out", filepath.Join(work, "out-self")}},
			{"evil-none", []string{"check", "--base", "base", "--candidate", "HEAD", "--out", filepath.Join(work, "out-cand")}},
			{"evil", []string{"replay", "--repo", ".", "--rev", "HEAD", "--property", "props/prop.sh", "--name", "proc", "--seed", "11"}},
			{"evil-none", []string{"replay", "--repo", ".", "--rev", "HEAD", "--property", "props/prop.sh", "--name", "proc", "--seed", "11"}},
			{"evil-none", []string{"replay", "--repo", ".", "--rev", "HEAD", "--property", "props/prop.sh", "--name", "bare", "--seed", "11"}},
			{"evil-none", []string{"replay", "--repo", ".", "--rev", "base", "--config-rev", "HEAD", "--property", "props/prop.sh", "--name", "relative", "--seed", "11"}},
		} {
			checkout(c.tag)
			code, out := hostRun(t, m, bin, r.dir, work, c.args...)
			noMarker(c.tag+": flakegate "+strings.Join(c.args, " "), code, out)
		}

		// A legitimate config is still looked at, inside the sandbox.
		checkout("base")
		code, out := hostRun(t, m, bin, r.dir, work, "doctor")
		if !strings.Contains(out, "ok   toolchain: /usr/bin/python3 (properties[1].run): /usr/bin/python3, Python 3.") || !strings.Contains(out, "in the sandbox") {
			t.Errorf("[%s] doctor of a legitimate config does not name the sandbox's python (exit %d):\n%s", m.name, code, out)
		}
		noMarker("doctor of the base", code, out)
	})
}
