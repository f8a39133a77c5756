package e2e_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flakegate/flakegate"
)

// TestCheckFaults: every broken input is a clear message and exit 2 (or a
// reject), never a PASS.
func TestCheckFaults(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end")
	}
	type testCase struct {
		name      string
		base      func(files map[string]string)
		candidate map[string]string
		args      func(r *repo) []string
		exit      int
		stderr    []string // substrings of the error
	}
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		files := baseFiles(libOK)
		if tc.base != nil {
			tc.base(files)
		}
		r := newRepo(t, files)
		cand := tc.candidate
		if cand == nil {
			cand = map[string]string{"README.md": "changed\n"}
		}
		r.candidate("cand", cand)
		args := []string{"--base", "base", "--candidate", "cand"}
		if tc.args != nil {
			args = tc.args(r)
		}
		cr := r.check(args...)
		if cr.code != tc.exit {
			t.Fatalf("exit %d, want %d\n%s", cr.code, tc.exit, cr)
		}
		for _, s := range tc.stderr {
			if !strings.Contains(cr.stderr, s) {
				t.Errorf("stderr does not mention %q:\n%s", s, cr.stderr)
			}
		}
		if cr.code >= 2 && strings.Contains(cr.stdout, `"PASS"`) {
			t.Errorf("a failed check printed a PASS:\n%s", cr.stdout)
		}
		if cr.summary != nil {
			for _, res := range cr.summary.Results {
				if res.Label == flakegate.Pass {
					t.Errorf("fault case produced a PASS: %+v", res)
				}
			}
		}
	}
	setConfig := func(cfg string) func(map[string]string) {
		return func(f map[string]string) { f["flakegate.yaml"] = cfg }
	}
	tests := []testCase{
		{
			name:   "test command missing",
			base:   setConfig(strings.Replace(config(""), "run: [sh,", "run: [no-such-test-runner-xyz,", 1)),
			exit:   2,
			stderr: []string{"flakegate.yaml", "properties[0].run[0]", "no-such-test-runner-xyz", "not found"},
		},
		{
			name:   "fixture missing on the base",
			base:   func(f map[string]string) { delete(f, "fixtures/data.txt"); f["fixtures/other.txt"] = "x\n" },
			exit:   2,
			stderr: []string{"properties[0].fixture", "fixtures/data.txt", "does not exist at the base"},
		},
		{
			name:      "fixture missing on the candidate",
			candidate: map[string]string{"fixtures/data.txt": ""},
			exit:      1,
			stderr:    []string{"FIXTURE"},
		},
		{
			name:   "property file missing on the base",
			base:   func(f map[string]string) { delete(f, "props/prop.sh") },
			exit:   2,
			stderr: []string{"properties[0].path", "props/prop.sh", "does not exist at the base"},
		},
		{
			name:   "config missing on the base",
			base:   func(f map[string]string) { delete(f, "flakegate.yaml") },
			exit:   2,
			stderr: []string{"flakegate.yaml", "no such file at the base"},
		},
		{
			name:   "config invalid",
			base:   setConfig(config("") + "    timeout: 3s\n"),
			exit:   2,
			stderr: []string{"flakegate.yaml", "properties[0].timeout", "unknown key"},
		},
		{
			name:      "config only on the candidate",
			base:      func(f map[string]string) { delete(f, "flakegate.yaml") },
			candidate: map[string]string{"flakegate.yaml": config("")},
			exit:      2,
			stderr:    []string{"no such file at the base"},
		},
		{
			name:   "base revision does not resolve",
			args:   func(r *repo) []string { return []string{"--base", "no-such-branch"} },
			exit:   2,
			stderr: []string{"--base", "no-such-branch"},
		},
		{
			name:   "candidate revision does not resolve",
			args:   func(r *repo) []string { return []string{"--base", "base", "--candidate", "deadbeef"} },
			exit:   2,
			stderr: []string{"--candidate", "deadbeef"},
		},
		{
			name:   "base missing",
			args:   func(r *repo) []string { return []string{"--candidate", "cand"} },
			exit:   2,
			stderr: []string{"--base is required"},
		},
		{
			name: "out not writable",
			args: func(r *repo) []string {
				file := filepath.Join(r.state, "a-file")
				if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
					t.Fatal(err)
				}
				return []string{"--base", "base", "--candidate", "cand", "--out", filepath.Join(file, "out")}
			},
			exit:   2,
			stderr: []string{"--out", "not writable"},
		},
		{
			name:   "seed smuggling an option",
			base:   setConfig(strings.Replace(config(""), "seeds: [11, 12]", `seeds: ["--rm"]`, 1)),
			exit:   2,
			stderr: []string{"properties[0].seeds[0]", "option"},
		},
		{
			name:   "fixture symlink leaving the repository",
			base:   func(f map[string]string) { f["fixtures/data.txt"] = "symlink:/etc/hostname" },
			exit:   2,
			stderr: []string{"properties[0].fixture", "leads out of the repository"},
		},
		{
			name:      "candidate fixture symlink leaving the repository",
			candidate: map[string]string{"fixtures/data.txt": "symlink:../../../../../../etc/hostname"},
			exit:      1,
			stderr:    []string{"FIXTURE"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestCheckWorktreeDeleted: a worktree folder removed between two checks
// is recreated.
func TestCheckWorktreeDeleted(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end")
	}
	r := newRepo(t, baseFiles(libOK))
	r.candidate("cand", map[string]string{"README.md": "changed\n"})
	first := r.check("--base", "base", "--candidate", "cand")
	if first.code != 0 {
		t.Fatalf("first check\n%s", first)
	}
	wt := treesDir(t, r.dir)
	for _, side := range []string{"base-0", "candidate-0"} {
		if _, err := os.Stat(filepath.Join(wt, side, "props", "prop.sh")); err != nil {
			t.Fatalf("worktree %s: %v", side, err)
		}
		if err := os.RemoveAll(filepath.Join(wt, side)); err != nil {
			t.Fatal(err)
		}
	}
	second := r.check("--base", "base", "--candidate", "cand")
	if second.code != 0 || strings.Join(second.labels(), ",") != "PASS,PASS" {
		t.Fatalf("after deleting the worktrees\n%s", second)
	}
	// The user's own work tree was never touched.
	if st := r.git("status", "--porcelain"); st != "" {
		t.Errorf("the user's work tree changed:\n%s", st)
	}
}

// TestCheckUserTreeIgnored: uncommitted edits in the user's work tree are
// neither read nor changed.
func TestCheckUserTreeIgnored(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end")
	}
	r := newRepo(t, baseFiles(libOK))
	r.candidate("cand", map[string]string{"README.md": "changed\n"})
	dirty := filepath.Join(r.dir, "src", "lib.sh")
	if err := os.WriteFile(dirty, []byte(libRed), 0o644); err != nil {
		t.Fatal(err)
	}
	cr := r.check("--base", "base", "--candidate", "cand")
	if cr.code != 0 || strings.Join(cr.labels(), ",") != "PASS,PASS" {
		t.Fatalf("a dirty user tree changed the result\n%s", cr)
	}
	if b, _ := os.ReadFile(dirty); string(b) != libRed {
		t.Errorf("the user's edit was lost: %q", b)
	}
}
