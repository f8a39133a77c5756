package cli

import (
	"context"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/flakegate/flakegate/internal/golden"
	"github.com/flakegate/flakegate/internal/pgtest"
	"github.com/flakegate/flakegate/postgres"
	"github.com/jackc/pgx/v5"
)

// doctorConfig runs a script of the tree and names an env variable.
const doctorConfig = `version: 1
sandbox:
  env: [DOCTOR_PROBE_VAR]
properties:
  - {path: props/p.sh, seeds: [1], run: [sh, "{path}", "{seed}"], wall_budget: 10s}
`

// pytestDoctorConfig runs a pytest test with the interpreter python.
func pytestDoctorConfig(python string) string {
	return "version: 1\nsandbox:\n  env: [DOCTOR_PROBE_VAR]\nproperties:\n  - {path: tests/test_x.py, name: test_x, seeds: [1], run: [" +
		python + ", -m, pytest, \"{path}::{name}\", \"--hypothesis-seed={seed}\"], wall_budget: 10s}\n"
}

// makeDoctorTool is a prepare's script that makes bin/tool.
const makeDoctorTool = `mkdir -p bin && printf '#!/bin/sh\nexit 0\n' > bin/tool && chmod +x bin/tool`

// prepareDoctorConfig runs bin/tool, which only the prepare (sh -c
// script) can make.
func prepareDoctorConfig(script string) string {
	return "version: 1\nsandbox:\n  env: [DOCTOR_PROBE_VAR]\nprepare:\n  run: [sh, -c, " + strconv.Quote(script) + "]\n  budget: 30s\n" +
		"properties:\n  - {path: props/p.sh, seeds: [1], run: [bin/tool, \"{path}\", \"{seed}\"], wall_budget: 10s}\n"
}

// venvDoctorConfig is pytestDoctorConfig with .venv/bin/python, which
// only the prepare (sh -c script) makes.
func venvDoctorConfig(script string) string {
	return strings.Replace(pytestDoctorConfig(".venv/bin/python"), "properties:", "prepare:\n  run: [sh, -c, "+strconv.Quote(script)+"]\n  budget: 1m\nproperties:", 1)
}

// doctorRepo makes a repository with one commit per file set and moves
// the test into it.
func doctorRepo(t *testing.T, commits ...map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	gitIn(t, dir, "init", "-q")
	for i, files := range commits {
		commitFiles(t, dir, "commit "+string(rune('a'+i)), files)
	}
	t.Chdir(dir)
	return dir
}

func needDoctorBwrap(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("bwrap is required under CI=true")
		}
		t.Skip("bwrap not installed")
	}
}

// doctorLine returns the first line of out with that status and topic.
func doctorLine(out, status, topic string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, status+" ") && strings.HasPrefix(strings.TrimSpace(strings.TrimPrefix(l, status)), topic+":") {
			return l
		}
	}
	return ""
}

// TestDoctor runs `flakegate doctor` as a user does, on real repositories
// and this machine's bwrap, and checks the lines and the exit code.
func TestDoctor(t *testing.T) {
	needDoctorBwrap(t)
	type testCase struct {
		name    string
		commits []map[string]string
		args    []string
		env     map[string]string
		path    func(t *testing.T) string // PATH, when set
		code    int
		want    [][2]string // status, part of the line (the topic first)
		notWant []string
		prepare bool // it runs a prepare: root and overlays
	}
	good := map[string]string{"flakegate.yaml": doctorConfig, "props/p.sh": "exit 0\n"}
	run := func(t *testing.T, tc testCase) {
		if tc.prepare && os.Geteuid() != 0 {
			if os.Getenv("CI") == "true" {
				t.Fatal("a prepare needs flakegate as root (overlays); CI runs the tests as root")
			}
			t.Skip("not root: no overlays, so no prepare")
		}
		doctorRepo(t, tc.commits...)
		t.Setenv("FLAKEGATE_LEDGER", "")
		for k, v := range tc.env {
			t.Setenv(k, v)
		}
		if tc.path != nil {
			t.Setenv("PATH", tc.path(t))
		}
		out, errOut, code := runCLI(t, "", append([]string{"doctor"}, tc.args...)...)
		if code != tc.code {
			t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, out, errOut)
		}
		for _, w := range tc.want {
			topic, part, _ := strings.Cut(w[1], ": ")
			l := doctorLine(out, w[0], topic)
			if l == "" || !strings.Contains(l, part) {
				t.Errorf("no %q line for %q containing %q in:\n%s", w[0], topic, part, out)
			}
		}
		for _, nw := range tc.notWant {
			if strings.Contains(out, nw) {
				t.Errorf("stdout holds %q:\n%s", nw, out)
			}
		}
		if !regexp.MustCompile(`(?m)^doctor: \d+ ok, \d+ warn, \d+ fail$`).MatchString(out) {
			t.Errorf("no count line in:\n%s", out)
		}
	}
	for _, tc := range []testCase{
		{name: "this machine", commits: []map[string]string{good}, env: map[string]string{"DOCTOR_PROBE_VAR": "1"}, code: 0,
			want: [][2]string{
				{"ok", "config: flakegate.yaml at HEAD ("},
				{"ok", "bwrap: bubblewrap "},
				{"ok", "sandbox: bwrap+userns+seccomp+minroot"},
				{"ok", "toolchain: sh (properties[0].run): "},
				{"ok", "sandbox.env: DOCTOR_PROBE_VAR set"},
				{"ok", "store: embedded file store "},
			},
			notWant: []string{"\nfail ", "\nwarn "}},
		{name: "bwrap missing from PATH", commits: []map[string]string{good}, code: 1,
			path: func(t *testing.T) string {
				bin := t.TempDir()
				for _, prog := range []string{"git", "sh"} {
					p, err := exec.LookPath(prog)
					if err != nil {
						t.Fatal(err)
					}
					if err := os.Symlink(p, filepath.Join(bin, prog)); err != nil {
						t.Fatal(err)
					}
				}
				return bin
			},
			want: [][2]string{
				{"fail", "bwrap: sudo apt-get install -y bubblewrap"},
				{"fail", "sandbox: no sandbox without bwrap"},
				{"ok", "config: is valid"},
			}},
		{name: "a bwrap that cannot run a sandbox", commits: []map[string]string{good}, env: map[string]string{"DOCTOR_PROBE_VAR": "1"}, code: 1,
			path: func(t *testing.T) string {
				// As on a host whose user namespaces are refused: bwrap
				// prints its version, and every sandbox fails.
				bin := t.TempDir()
				script := "#!/bin/sh\n[ \"$1\" = --version ] && { echo 'bubblewrap 0.8.0'; exit 0; }\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n"
				if err := os.WriteFile(filepath.Join(bin, "bwrap"), []byte(script), 0o755); err != nil {
					t.Fatal(err)
				}
				return bin + ":" + os.Getenv("PATH")
			},
			want: [][2]string{{"ok", "bwrap: bubblewrap 0.8.0"}, {"fail", "sandbox: the sandbox cannot run a test command on this machine"}}},
		{name: "an unset sandbox.env name", commits: []map[string]string{good}, code: 0,
			want: [][2]string{{"warn", "sandbox.env: DOCTOR_PROBE_VAR is not set here"}}},
		{name: "a broken config at --base", code: 1, args: []string{"--base", "HEAD~1"},
			commits: []map[string]string{
				{"flakegate.yaml": "version: 1\nretry_cap: many\nproperties: []\n", "props/p.sh": "exit 0\n"},
				good,
			},
			want: [][2]string{{"fail", "config: retry_cap"}, {"ok", "bwrap: bubblewrap"}}},
		{name: "no config at HEAD", commits: []map[string]string{{"README": "hi\n"}}, code: 1,
			want: [][2]string{{"fail", "config: no such file at the base revision"}}},
		{name: "a sandbox toolchain that differs from the shell's", code: 0,
			commits: []map[string]string{{"flakegate.yaml": strings.Replace(doctorConfig, `run: [sh, "{path}", "{seed}"]`, `run: [fgnode, "{path}"]`, 1), "props/p.sh": "exit 0\n"}},
			env:     map[string]string{"DOCTOR_PROBE_VAR": "1"},
			path: func(t *testing.T) string {
				// Your shell finds the fgnode under $HOME first, as a
				// pyenv or nvm install is found; the sandbox hides the
				// home folder and finds the other. Neither is run on
				// the host: only the sandbox's is asked its version.
				fgnode := func(dir, version string) string {
					if err := os.MkdirAll(dir, 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(filepath.Join(dir, "fgnode"), []byte("#!/bin/sh\necho \"fgnode "+version+"\"\n"), 0o755); err != nil {
						t.Fatal(err)
					}
					return dir
				}
				home := filepath.Join(t.TempDir(), "home-fg")
				t.Setenv("HOME", home)
				return fgnode(filepath.Join(home, "bin"), "v22.1.0") + ":" + fgnode(filepath.Join(t.TempDir(), "bin"), "v18.19.0") + ":" + os.Getenv("PATH")
			},
			want:    [][2]string{{"warn", "toolchain: the sandbox runs "}, {"warn", "toolchain: (fgnode v18.19.0), your shell finds "}, {"warn", "toolchain: /home-fg/bin/fgnode (not run: "}},
			notWant: []string{"v22.1.0"}},
		{name: "a command found nowhere", code: 1,
			commits: []map[string]string{{"flakegate.yaml": strings.Replace(doctorConfig, `run: [sh, "{path}", "{seed}"]`, `run: [no-such-tool-xyz, "{path}"]`, 1), "props/p.sh": "exit 0\n"}},
			env:     map[string]string{"DOCTOR_PROBE_VAR": "1"},
			want:    [][2]string{{"fail", "toolchain: no-such-tool-xyz (properties[0].run): not found, on PATH or in the sandbox"}}},
		{name: "an interpreter without pytest", code: 1,
			commits: []map[string]string{{"flakegate.yaml": pytestDoctorConfig("python3"), "tests/test_x.py": "def test_x(): pass\n"}},
			env:     map[string]string{"DOCTOR_PROBE_VAR": "1"},
			path: func(t *testing.T) string {
				bin := t.TempDir()
				if err := os.Symlink(filepath.Join(noPytestBin(t), "python3"), filepath.Join(bin, "python3")); err != nil {
					t.Fatal(err)
				}
				return bin + ":" + os.Getenv("PATH")
			},
			want: [][2]string{{"fail", "run: properties[0].run: python3 is "}, {"fail", "run: which cannot import pytest or hypothesis: the test never runs"}}},
		{name: "an interpreter with pytest", code: 0,
			commits: []map[string]string{{"flakegate.yaml": pytestDoctorConfig("/usr/bin/python3"), "tests/test_x.py": "def test_x(): pass\n"}},
			env:     map[string]string{"DOCTOR_PROBE_VAR": "1"},
			want:    [][2]string{{"ok", "run: properties[0].run: /usr/bin/python3 is /usr/bin/python3 in the sandbox, with pytest and Hypothesis"}}},
		{name: "a virtual environment no prepare makes", code: 1,
			commits: []map[string]string{{"flakegate.yaml": pytestDoctorConfig(".venv/bin/python"), "tests/test_x.py": "def test_x(): pass\n"}},
			env:     map[string]string{"DOCTOR_PROBE_VAR": "1"},
			want:    [][2]string{{"fail", "run: properties[0].run: .venv/bin/python is not in the base tree and no prepare makes it"}}},
		{name: "a program the prepare makes", code: 0, prepare: true,
			commits: []map[string]string{{"flakegate.yaml": prepareDoctorConfig(makeDoctorTool), "props/p.sh": "exit 0\n"}},
			env:     map[string]string{"DOCTOR_PROBE_VAR": "1"},
			want: [][2]string{
				{"ok", "prepare: prepare ran on the base ("},
				{"ok", "run: properties[0].run: bin/tool is made by the prepare (in the prepared tree, in the sandbox)"},
			},
			notWant: []string{"\nfail "}},
		{name: "a program the prepare does not make", code: 1, prepare: true,
			commits: []map[string]string{{"flakegate.yaml": prepareDoctorConfig(`mkdir -p bin && echo made nothing`), "props/p.sh": "exit 0\n"}},
			env:     map[string]string{"DOCTOR_PROBE_VAR": "1"},
			want: [][2]string{
				{"ok", "prepare: prepare ran on the base ("},
				{"fail", "run: properties[0].run: bin/tool is neither in the base tree nor made by the prepare (it ran, and the prepared tree has no bin/tool): every attempt would fail to start; make the prepare create it"},
			}},
		{name: "a prepare that fails", code: 1, prepare: true,
			commits: []map[string]string{{"flakegate.yaml": prepareDoctorConfig(`echo cannot reach the package index >&2; exit 3`), "props/p.sh": "exit 0\n"}},
			env:     map[string]string{"DOCTOR_PROBE_VAR": "1"},
			want: [][2]string{
				{"fail", "prepare: prepare \"sh -c echo cannot reach"},
				{"fail", "prepare: prepare failed: exit 3: cannot reach the package index: every triple of its properties would be INCOMPLETE"},
				{"fail", "run: properties[0].run: bin/tool is not in the base tree and the prepare that must make it failed"},
			}},
		{name: "a virtual environment the prepare makes", code: 0, prepare: true,
			commits: []map[string]string{{"flakegate.yaml": venvDoctorConfig("/usr/bin/python3 -m venv --without-pip --system-site-packages .venv"), "tests/test_x.py": "def test_x(): pass\n"}},
			env:     map[string]string{"DOCTOR_PROBE_VAR": "1"},
			want: [][2]string{
				{"ok", "prepare: prepare ran on the base ("},
				{"ok", "run: properties[0].run: .venv/bin/python is made by the prepare (.venv/bin/python in the sandbox), with pytest and Hypothesis; the prepare's /usr/bin/python3 is /usr/bin/python3"},
			}},
		{name: "a virtual environment without pytest", code: 1, prepare: true,
			// The prepare's interpreter has pytest; the environment it
			// makes, without the system's packages, has not.
			commits: []map[string]string{{"flakegate.yaml": venvDoctorConfig("/usr/bin/python3 -m venv --without-pip .venv"), "tests/test_x.py": "def test_x(): pass\n"}},
			env:     map[string]string{"DOCTOR_PROBE_VAR": "1"},
			want: [][2]string{
				{"ok", "prepare: prepare ran on the base ("},
				{"fail", "run: properties[0].run: .venv/bin/python is made by the prepare, and cannot import pytest or hypothesis in the sandbox: the test never runs"},
			}},
		{name: "a prepare without a sandbox", code: 1,
			commits: []map[string]string{{"flakegate.yaml": strings.Replace(prepareDoctorConfig(makeDoctorTool), "sandbox:\n", "sandbox:\n  mode: none\n", 1), "props/p.sh": "exit 0\n"}},
			env:     map[string]string{"DOCTOR_PROBE_VAR": "1"},
			want:    [][2]string{{"fail", "prepare: not run: a prepare needs attempts on overlays, and the config says sandbox: {mode: none}"}}},
		{name: "a file store that is a file", commits: []map[string]string{good}, code: 1, args: []string{"--ledger", "flakegate.yaml"},
			env:  map[string]string{"DOCTOR_PROBE_VAR": "1"},
			want: [][2]string{{"fail", "store: not a folder"}}},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestDoctorUsage: a bad flag, a positional argument and a --base that
// does not resolve are usage errors (exit 2).
func TestDoctorUsage(t *testing.T) {
	doctorRepo(t, map[string]string{"README": "hi\n"})
	for _, args := range [][]string{{"doctor", "--frobnicate"}, {"doctor", "extra"}, {"doctor", "--base", "no-such-rev"}} {
		_, errOut, code := runCLI(t, "", args...)
		if code != ExitUsage || !strings.Contains(errOut, "Error: ") {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 and an Error line", args, code, errOut)
		}
	}
}

func TestDoctorHelpGolden(t *testing.T) {
	out, _, code := runCLI(t, "", "doctor", "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	golden.Assert(t, "doctor-help.golden", []byte(out))
}

// TestDoctorPostgres: the store line of a PostgreSQL ledger (pgtest):
// a database without the schema is a warning, a migrated one ok, one that
// cannot be reached a failure; the password never appears.
func TestDoctorPostgres(t *testing.T) {
	needDoctorBwrap(t)
	const pw = "Doctor-pw-4242"
	withPassword := func(dsn string) string { return pgtest.WithPassword(t, dsn, pw) }
	fresh := withPassword(pgtest.DSN(t))
	migrated := withPassword(pgtest.DSN(t))
	if err := postgres.Migrate(context.Background(), migrated); err != nil {
		t.Fatal(err)
	}
	newer := withPassword(pgtest.DSN(t))
	if err := postgres.Migrate(context.Background(), newer); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(context.Background(), newer)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(context.Background(), `INSERT INTO flakegate.schema_version (version, name, flakegate_version) VALUES ($1, 'future', '9.9.9')`,
		postgres.SchemaVersion()+1); err != nil {
		t.Fatal(err)
	}
	conn.Close(context.Background())
	u, _ := url.Parse(migrated)
	q := u.Query()
	q.Set("host", t.TempDir()) // no server there
	u.RawQuery = q.Encode()
	down := u.String()

	doctorRepo(t, map[string]string{"flakegate.yaml": doctorConfig, "props/p.sh": "exit 0\n"})
	t.Setenv("DOCTOR_PROBE_VAR", "1")
	type testCase struct {
		name, dsn  string
		viaEnv     bool
		code       int
		status     string
		part       string
		wantSchema bool
	}
	run := func(t *testing.T, tc testCase) {
		args := []string{"doctor", "--ledger", tc.dsn}
		t.Setenv("FLAKEGATE_LEDGER", "")
		if tc.viaEnv {
			args = []string{"doctor"}
			t.Setenv("FLAKEGATE_LEDGER", tc.dsn)
		}
		out, errOut, code := runCLI(t, "", args...)
		if code != tc.code {
			t.Fatalf("exit %d, want %d\n%s%s", code, tc.code, out, errOut)
		}
		if l := doctorLine(out, tc.status, "store"); !strings.Contains(l, tc.part) {
			t.Errorf("store line %q, want %s with %q\n%s", l, tc.status, tc.part, out)
		}
		if strings.Contains(out+errOut, pw) {
			t.Errorf("the password is in the output:\n%s%s", out, errOut)
		}
	}
	for _, tc := range []testCase{
		{name: "no schema yet", dsn: fresh, code: 0, status: "warn", part: "no flakegate schema yet"},
		{name: "migrated", dsn: migrated, viaEnv: true, code: 0, status: "ok", part: "schema version " + strconv.Itoa(postgres.SchemaVersion()) + " (up to date)"},
		{name: "newer than this flakegate", dsn: newer, code: 1, status: "fail", part: "is newer than this flakegate knows"},
		{name: "unreachable", dsn: down, code: 1, status: "fail", part: "cannot connect to PostgreSQL"},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
	// doctor reads, it never migrates.
	if v, err := postgres.SchemaStatus(context.Background(), fresh); err != nil || v != 0 {
		t.Errorf("after doctor the fresh database has schema version %d (%v), want 0", v, err)
	}
}
