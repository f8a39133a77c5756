// Package scripts_test runs scripts/setup.sh, which `make demo`, `make
// test` and .ci/run use to install what they need, on PATHs that lack
// bwrap: as a user who is not root (nobody, through setpriv) it must stop
// with the one apt-get line; as root it must run apt-get (a fake one that
// records its arguments: no package is really installed or removed).
package scripts_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// pathWithout makes a folder of links to the named programs (those found)
// and returns it: a PATH that holds them and nothing else.
func pathWithout(t *testing.T, progs ...string) string {
	t.Helper()
	// Not under t.TempDir(), whose parent only root may enter: nobody runs
	// these programs too.
	bin, err := os.MkdirTemp("", "setup-path-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(bin) })
	if err := os.Chmod(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, prog := range progs {
		p, err := exec.LookPath(prog)
		if err != nil {
			continue
		}
		if err := os.Symlink(p, filepath.Join(bin, prog)); err != nil {
			t.Fatal(err)
		}
	}
	return bin
}

// base are the programs the script and make need; bwrap is not among them.
var base = []string{"bash", "sh", "env", "id", "ls", "test", "cat", "chmod", "make", "git", "go", "setpriv", "python3"}

func run(t *testing.T, dir string, env []string, name string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err == nil {
		return string(out), 0
	}
	ee, ok := err.(*exec.ExitError)
	if !ok {
		t.Fatalf("%s %q: %v", name, args, err)
	}
	return string(out), ee.ExitCode()
}

// TestSetupNotRoot: `make demo`, the README's first command, run by a
// user who is not root on a machine without bwrap, stops before building
// anything, printing the one apt-get line; setup.sh test says the same.
func TestSetupNotRoot(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("setpriv to nobody needs root")
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("setpriv not installed")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make not installed")
	}
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	bin := pathWithout(t, base...)
	env := []string{"PATH=" + bin, "HOME=/nonexistent",
		"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=safe.directory", "GIT_CONFIG_VALUE_0=*"}
	nobody := []string{"--reuid=65534", "--regid=65534", "--clear-groups"}

	out, code := run(t, repo, env, filepath.Join(bin, "setpriv"), append(nobody, "make", "--no-print-directory", "demo", "BIN=/nonexistent/flakegate")...)
	if code == 0 {
		t.Fatalf("make demo as nobody without bwrap: exit 0\n%s", out)
	}
	for _, want := range []string{"'make demo' needs packages this machine lacks: bubblewrap", "    sudo apt-get install -y bubblewrap\n", "As root, 'make demo' installs them itself"} {
		if !strings.Contains(out, want) {
			t.Errorf("make demo output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "go build") {
		t.Errorf("make demo went on to build:\n%s", out)
	}

	out, code = run(t, repo, env, filepath.Join(bin, "setpriv"), append(nobody, "scripts/setup.sh", "test")...)
	if code != 1 || !strings.Contains(out, "sudo apt-get install -y ") || !strings.Contains(out, " bubblewrap") || !strings.Contains(out, "make test NO_SETUP=1") {
		t.Errorf("setup.sh test as nobody: exit %d, want 1 and the install line\n%s", code, out)
	}
	out, code = run(t, repo, append(env, "NO_SETUP=1"), filepath.Join(bin, "setpriv"), append(nobody, "scripts/setup.sh", "test")...)
	if code != 0 || !strings.Contains(out, "skipped (NO_SETUP=1)") {
		t.Errorf("NO_SETUP=1: exit %d\n%s", code, out)
	}
}

// TestSetupRoot: as root, a missing bwrap is installed with apt-get (a
// fake that records its arguments and, for bubblewrap, leaves a bwrap on
// PATH as the package would); nothing missing runs no apt-get at all.
func TestSetupRoot(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("the apt-get path runs as root")
	}
	bin := pathWithout(t, base...)
	calls := filepath.Join(t.TempDir(), "calls")
	fake := "#!/bin/sh\necho \"apt-get $*\" >> " + calls + "\n" +
		"case \" $* \" in *\" bubblewrap \"*) printf '#!/bin/sh\\necho bubblewrap 0.8.0\\n' > " + bin + "/bwrap; chmod +x " + bin + "/bwrap;; esac\n"
	if err := os.WriteFile(filepath.Join(bin, "apt-get"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + bin, "HOME=" + t.TempDir()}

	out, code := run(t, "..", env, "bash", "scripts/setup.sh", "demo")
	if code != 0 {
		t.Fatalf("setup.sh demo as root: exit %d\n%s", code, out)
	}
	got, _ := os.ReadFile(calls)
	want := "apt-get update -qq\napt-get install -y -qq --no-install-recommends bubblewrap\n"
	if string(got) != want {
		t.Errorf("apt-get calls:\n%s\nwant:\n%s\noutput:\n%s", got, want, out)
	}
	if !strings.Contains(out, "setup: installing bubblewrap (apt-get, as root)") || !strings.Contains(out, "setup: done") {
		t.Errorf("output:\n%s", out)
	}

	// Now nothing is missing for the demo: no apt-get, no output, exit 0.
	os.Remove(calls)
	out, code = run(t, "..", env, "bash", "scripts/setup.sh", "demo")
	if code != 0 || out != "" {
		t.Errorf("nothing missing: exit %d, output %q", code, out)
	}
	if _, err := os.Stat(calls); err == nil {
		t.Errorf("apt-get ran with nothing missing")
	}

	// The test profile installs the missing ones from its own list, and
	// stops when apt-get did not bring them.
	out, code = run(t, "..", env, "bash", "scripts/setup.sh", "test")
	got, _ = os.ReadFile(calls)
	list := "git make openssl time bubblewrap postgresql chromium python3 python3-pytest python3-hypothesis libxml2-utils jq nodejs npm"
	lines := strings.Split(strings.TrimSpace(string(got)), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[1], "apt-get install -y -qq --no-install-recommends ") {
		t.Fatalf("apt-get calls %q\n%s", got, out)
	}
	for _, p := range strings.Fields(strings.TrimPrefix(lines[1], "apt-get install -y -qq --no-install-recommends ")) {
		if !strings.Contains(" "+list+" ", " "+p+" ") || p == "bubblewrap" {
			t.Errorf("installed %q: not in the test list, or present already", p)
		}
	}
	if code != 1 || !strings.Contains(out, "still missing after apt-get install") {
		t.Errorf("a package apt-get did not bring: exit %d\n%s", code, out)
	}

	out, code = run(t, "..", env, "bash", "scripts/setup.sh", "nonsense")
	if code != 2 || !strings.Contains(out, "usage: scripts/setup.sh demo|test") {
		t.Errorf("unknown profile: exit %d\n%s", code, out)
	}
}

// TestCIUsesSetup: .ci/run installs through setup.sh's list (no list of its
// own) and then runs exactly the README's test command.
func TestCIUsesSetup(t *testing.T) {
	raw, err := os.ReadFile("../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	ci := string(raw)
	if !strings.Contains(ci, "\nscripts/setup.sh test\n") || strings.Contains(ci, "apt-get") {
		t.Errorf(".ci/run does not install through scripts/setup.sh test alone:\n%s", ci)
	}
	lines := strings.Split(strings.TrimSpace(ci), "\n")
	if lines[len(lines)-1] != "make test" {
		t.Errorf(".ci/run ends with %q, want the README's make test", lines[len(lines)-1])
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "\nmake test ") {
		t.Errorf("the README no longer gives make test")
	}
}
