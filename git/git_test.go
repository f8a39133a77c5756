package git_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/git"
)

// testEnv keeps the tests' own git calls away from the user's config and
// gives commits a fixed author and date.
var testEnv = []string{
	"GIT_CONFIG_GLOBAL=/dev/null",
	"GIT_CONFIG_NOSYSTEM=1",
	"GIT_AUTHOR_NAME=Flake Gate", "GIT_AUTHOR_EMAIL=gate@example.com",
	"GIT_COMMITTER_NAME=Flake Gate", "GIT_COMMITTER_EMAIL=gate@example.com",
	"GIT_AUTHOR_DATE=2026-01-02T03:04:05Z", "GIT_COMMITTER_DATE=2026-01-02T03:04:05Z",
}

// gitT runs git in dir for test setup and returns trimmed stdout.
func gitT(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), testEnv...)
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("git %v: %v: %s", args, err, stderr)
	}
	return strings.TrimSpace(string(out))
}

func writeFile(t *testing.T, name, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// repo is a temporary repository with two commits:
//
//	c1: a.txt, dir/b.txt, old.txt, gone.txt, .gitignore (ignores *.log)
//	c2: old.txt renamed to new.txt, a.txt changed, gone.txt deleted,
//	    "sp ace.txt" added
type repo struct {
	dir    string
	c1, c2 string
}

func newRepo(t *testing.T) repo {
	t.Helper()
	dir := t.TempDir()
	gitT(t, dir, "init", "-q", "-b", "main")
	writeFile(t, filepath.Join(dir, "a.txt"), "a1\n")
	writeFile(t, filepath.Join(dir, "dir", "b.txt"), "b\n")
	writeFile(t, filepath.Join(dir, "old.txt"), "same content, renamed\n")
	writeFile(t, filepath.Join(dir, "gone.txt"), "gone\n")
	writeFile(t, filepath.Join(dir, ".gitignore"), "*.log\n")
	gitT(t, dir, "add", "-A")
	gitT(t, dir, "commit", "-q", "-m", "c1")
	c1 := gitT(t, dir, "rev-parse", "HEAD")
	gitT(t, dir, "tag", "v1")
	gitT(t, dir, "mv", "old.txt", "new.txt")
	gitT(t, dir, "rm", "-q", "gone.txt")
	writeFile(t, filepath.Join(dir, "a.txt"), "a2\n")
	writeFile(t, filepath.Join(dir, "sp ace.txt"), "x\n")
	gitT(t, dir, "add", "-A")
	gitT(t, dir, "commit", "-q", "-m", "c2")
	c2 := gitT(t, dir, "rev-parse", "HEAD")
	return repo{dir: dir, c1: c1, c2: c2}
}

func code(err error) string { return flakegate.ErrorCode(err) }

func TestRevParse(t *testing.T) {
	r := newRepo(t)
	c := &git.Client{Dir: r.dir}
	tree := gitT(t, r.dir, "rev-parse", "HEAD^{tree}")

	type testCase struct {
		name     string
		rev      string
		want     string // full hash, or "" when an error is expected
		wantCode string
		wantMsg  string // substring of the error
	}
	run := func(t *testing.T, tc testCase) {
		got, err := c.RevParse(context.Background(), tc.rev)
		if tc.wantCode != "" {
			if code(err) != tc.wantCode {
				t.Fatalf("RevParse(%q) error %v (code %q), want code %q", tc.rev, err, code(err), tc.wantCode)
			}
			if !strings.Contains(err.Error(), tc.wantMsg) {
				t.Fatalf("RevParse(%q) error %q does not contain %q", tc.rev, err, tc.wantMsg)
			}
			return
		}
		if err != nil {
			t.Fatalf("RevParse(%q): %v", tc.rev, err)
		}
		if got != tc.want {
			t.Fatalf("RevParse(%q) = %q, want %q", tc.rev, got, tc.want)
		}
	}
	for _, tc := range []testCase{
		{name: "HEAD", rev: "HEAD", want: r.c2},
		{name: "branch", rev: "main", want: r.c2},
		{name: "tag", rev: "v1", want: r.c1},
		{name: "short hash", rev: r.c1[:8], want: r.c1},
		{name: "parent", rev: "HEAD~1", want: r.c1},
		{name: "unknown rev", rev: "no-such-branch", wantCode: flakegate.EINVALID, wantMsg: `revision "no-such-branch" does not name a commit`},
		{name: "tree is not a commit", rev: tree, wantCode: flakegate.EINVALID, wantMsg: tree},
		{name: "option-like", rev: "--all", wantCode: flakegate.EINVALID, wantMsg: `"--all"`},
		{name: "empty", rev: "", wantCode: flakegate.EINVALID, wantMsg: "empty revision"},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func TestShow(t *testing.T) {
	r := newRepo(t)
	c := &git.Client{Dir: r.dir}

	type testCase struct {
		name     string
		rev      string
		path     string
		want     string
		wantCode string
		wantMsg  string
	}
	run := func(t *testing.T, tc testCase) {
		got, err := c.Show(context.Background(), tc.rev, tc.path)
		if tc.wantCode != "" {
			if code(err) != tc.wantCode {
				t.Fatalf("Show(%q, %q) error %v (code %q), want code %q", tc.rev, tc.path, err, code(err), tc.wantCode)
			}
			if !strings.Contains(err.Error(), tc.wantMsg) {
				t.Fatalf("Show error %q does not contain %q", err, tc.wantMsg)
			}
			return
		}
		if err != nil {
			t.Fatalf("Show(%q, %q): %v", tc.rev, tc.path, err)
		}
		if string(got) != tc.want {
			t.Fatalf("Show(%q, %q) = %q, want %q", tc.rev, tc.path, got, tc.want)
		}
	}
	for _, tc := range []testCase{
		{name: "file at HEAD", rev: "HEAD", path: "a.txt", want: "a2\n"},
		{name: "file at older rev", rev: r.c1, path: "a.txt", want: "a1\n"},
		{name: "nested", rev: "HEAD", path: "dir/b.txt", want: "b\n"},
		{name: "unclean path", rev: "HEAD", path: "./dir//b.txt", want: "b\n"},
		{name: "deleted later", rev: "v1", path: "gone.txt", want: "gone\n"},
		{name: "missing path", rev: "HEAD", path: "gone.txt", wantCode: flakegate.ENOTFOUND, wantMsg: "gone.txt: no such file at HEAD"},
		{name: "never existed", rev: "HEAD", path: "dir/nope.txt", wantCode: flakegate.ENOTFOUND, wantMsg: "dir/nope.txt"},
		{name: "folder", rev: "HEAD", path: "dir", wantCode: flakegate.EINVALID, wantMsg: "is a tree"},
		{name: "climbs out", rev: "HEAD", path: "../x", wantCode: flakegate.EINVALID, wantMsg: "not a repo-relative file path"},
		{name: "absolute", rev: "HEAD", path: "/etc/passwd", wantCode: flakegate.EINVALID, wantMsg: "not a repo-relative file path"},
		{name: "bad rev", rev: "nope", path: "a.txt", wantCode: flakegate.EINVALID, wantMsg: `"nope"`},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func TestDiffNames(t *testing.T) {
	r := newRepo(t)
	c := &git.Client{Dir: r.dir}
	// A repository config that would hide renames or reorder paths for a
	// porcelain diff must not change the answer.
	gitT(t, r.dir, "config", "diff.renames", "copies")

	type testCase struct {
		name       string
		base, cand string
		want       []string
		wantCode   string
	}
	run := func(t *testing.T, tc testCase) {
		got, err := c.DiffNames(context.Background(), tc.base, tc.cand)
		if tc.wantCode != "" {
			if code(err) != tc.wantCode {
				t.Fatalf("DiffNames error %v, want code %q", err, tc.wantCode)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, tc.want) {
			t.Fatalf("DiffNames(%s, %s) = %q, want %q", tc.base, tc.cand, got, tc.want)
		}
	}
	for _, tc := range []testCase{
		{name: "rename lists both sides", base: r.c1, cand: r.c2, want: []string{"a.txt", "gone.txt", "new.txt", "old.txt", "sp ace.txt"}},
		{name: "reverse", base: r.c2, cand: r.c1, want: []string{"a.txt", "gone.txt", "new.txt", "old.txt", "sp ace.txt"}},
		{name: "same commit", base: "HEAD", cand: r.c2, want: []string{}},
		{name: "bad base", base: "nope", cand: "HEAD", wantCode: flakegate.EINVALID},
		{name: "bad candidate", base: "HEAD", cand: "nope", wantCode: flakegate.EINVALID},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func TestTopLevelAndCommonDir(t *testing.T) {
	r := newRepo(t)
	wt := filepath.Join(t.TempDir(), "wt")
	gitT(t, r.dir, "worktree", "add", "-q", "--detach", wt, r.c1)
	notRepo := t.TempDir()

	type testCase struct {
		name       string
		dir        string
		wantTop    string
		wantCommon string
		wantCode   string
	}
	run := func(t *testing.T, tc testCase) {
		c := &git.Client{Dir: tc.dir}
		top, err := c.TopLevel(context.Background())
		if tc.wantCode != "" {
			if code(err) != tc.wantCode {
				t.Fatalf("TopLevel error %v, want code %q", err, tc.wantCode)
			}
			if _, err := c.CommonDir(context.Background()); code(err) != tc.wantCode {
				t.Fatalf("CommonDir error %v, want code %q", err, tc.wantCode)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if !sameFile(t, top, tc.wantTop) || !filepath.IsAbs(top) {
			t.Fatalf("TopLevel = %q, want %q", top, tc.wantTop)
		}
		common, err := c.CommonDir(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if !sameFile(t, common, tc.wantCommon) || !filepath.IsAbs(common) {
			t.Fatalf("CommonDir = %q, want %q", common, tc.wantCommon)
		}
	}
	for _, tc := range []testCase{
		{name: "repo root", dir: r.dir, wantTop: r.dir, wantCommon: filepath.Join(r.dir, ".git")},
		{name: "subfolder", dir: filepath.Join(r.dir, "dir"), wantTop: r.dir, wantCommon: filepath.Join(r.dir, ".git")},
		{name: "linked worktree", dir: wt, wantTop: wt, wantCommon: filepath.Join(r.dir, ".git")},
		{name: "not a repository", dir: notRepo, wantCode: flakegate.EINVALID},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func sameFile(t *testing.T, a, b string) bool {
	t.Helper()
	fa, err := os.Stat(a)
	if err != nil {
		t.Fatal(err)
	}
	fb, err := os.Stat(b)
	if err != nil {
		t.Fatal(err)
	}
	return os.SameFile(fa, fb)
}

func TestGitError(t *testing.T) {
	c := &git.Client{Dir: t.TempDir(), Command: helperCommand("exit=3", "stderr=boom\n")}
	_, err := c.DiffNames(context.Background(), "HEAD", "HEAD")
	var ge *git.GitError
	if !errors.As(err, &ge) {
		t.Fatalf("error %v (%T) is not a *GitError", err, err)
	}
	if ge.ExitCode != 3 || ge.Stderr != "boom" || ge.Args[0] != "rev-parse" {
		t.Fatalf("GitError = %+v, want exit 3, stderr boom, args rev-parse ...", ge)
	}
	if want := "git rev-parse --verify --quiet --end-of-options HEAD^{commit}: exit status 3: boom"; ge.Error() != want {
		t.Fatalf("Error() = %q, want %q", ge.Error(), want)
	}
}

func TestCanceled(t *testing.T) {
	r := newRepo(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := (&git.Client{Dir: r.dir}).RevParse(ctx, "HEAD"); !errors.Is(err, context.Canceled) {
		t.Errorf("RevParse with a canceled context: %v, want context.Canceled", err)
	}
	// A constructor that ignores the context still works.
	c := &git.Client{Dir: r.dir, Command: func(_ context.Context, name string, args ...string) *exec.Cmd {
		return exec.Command(name, args...)
	}}
	if got, err := c.RevParse(context.Background(), "HEAD"); err != nil || got != r.c2 {
		t.Errorf("RevParse with exec.Command = %q, %v; want %s", got, err, r.c2)
	}
}

// TestEveryCallIsSafe records every git call of a full worktree cycle and
// checks the argv and environment each one gets.
func TestEveryCallIsSafe(t *testing.T) {
	r := newRepo(t)
	t.Setenv("GIT_DIR", filepath.Join(t.TempDir(), "elsewhere"))
	t.Setenv("GIT_TERMINAL_PROMPT", "1")
	var calls []*exec.Cmd
	c := &git.Client{Dir: r.dir, Command: func(ctx context.Context, name string, args ...string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, name, args...)
		calls = append(calls, cmd)
		return cmd
	}}
	wt := filepath.Join(t.TempDir(), "wt")
	if err := c.PrepareWorktree(context.Background(), wt, r.c1); err != nil {
		t.Fatal(err)
	}
	if err := c.PrepareWorktree(context.Background(), wt, r.c2); err != nil {
		t.Fatal(err)
	}
	if len(calls) < 6 {
		t.Fatalf("only %d git calls recorded", len(calls))
	}
	for _, cmd := range calls {
		safety := []string{"git", "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "core.attributesFile=/dev/null", "-c", "core.autocrlf=false"}
		if len(cmd.Args) < len(safety) || !slices.Equal(cmd.Args[:len(safety)], safety) {
			t.Errorf("argv %q does not start with the safety config", cmd.Args)
		}
		if !slices.Contains(cmd.Env, "GIT_TERMINAL_PROMPT=0") || slices.Contains(cmd.Env, "GIT_TERMINAL_PROMPT=1") {
			t.Errorf("%q: env does not disable prompts", cmd.Args)
		}
		for _, kv := range []string{"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_ATTR_NOSYSTEM=1"} {
			if !slices.Contains(cmd.Env, kv) {
				t.Errorf("%q: env lacks %s", cmd.Args, kv)
			}
		}
		for _, kv := range cmd.Env {
			if strings.HasPrefix(kv, "GIT_DIR=") {
				t.Errorf("%q: env keeps %s", cmd.Args, kv)
			}
		}
	}
}

// helperCommand fakes git with this test binary (see TestHelperProcess).
func helperCommand(args ...string) func(context.Context, string, ...string) *exec.Cmd {
	return func(ctx context.Context, name string, gitArgs ...string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, os.Args[0], append([]string{"-test.run=^TestHelperProcess$", "--"}, args...)...)
		cmd.Env = []string{"FLAKEGATE_GIT_HELPER=1"}
		if dir := os.Getenv("GOCOVERDIR"); dir != "" {
			// A coverage build writes its counters there as it exits
			// (and says on stderr that it cannot, without it).
			cmd.Env = append(cmd.Env, "GOCOVERDIR="+dir)
		}
		return cmd
	}
}

// TestHelperProcess is not a test: it is the fake git of helperCommand.
func TestHelperProcess(t *testing.T) {
	if os.Getenv("FLAKEGATE_GIT_HELPER") != "1" {
		t.Skip("helper process for TestGitError")
	}
	exit := 0
	i := slices.Index(os.Args, "--")
	for _, a := range os.Args[i+1:] {
		k, v, _ := strings.Cut(a, "=")
		switch k {
		case "exit":
			fmt.Sscan(v, &exit)
		case "stderr":
			fmt.Fprint(os.Stderr, v)
		}
	}
	os.Exit(exit)
}

// TestRevParseAsksOnce: a full hash RevParse verified is not asked
// again, nor is the common dir or a commit's files; a name (a tag, which can move) is asked
// every time.
func TestRevParseAsksOnce(t *testing.T) {
	r := newRepo(t)
	n := 0
	c := &git.Client{Dir: r.dir, Command: func(ctx context.Context, name string, args ...string) *exec.Cmd {
		n++
		return exec.CommandContext(ctx, name, args...)
	}}
	ctx := context.Background()
	if got, err := c.RevParse(ctx, "v1"); err != nil || got != r.c1 { // and the client's first call (its filters)
		t.Fatalf("RevParse v1 = %q, %v", got, err)
	}
	first := n
	if got, err := c.RevParse(ctx, "v1"); err != nil || got != r.c1 || n != first+1 {
		t.Fatalf("RevParse v1 again = %q, %v: %d calls after %d, want one more", got, err, n, first)
	}
	for range 3 {
		if got, err := c.RevParse(ctx, r.c1); err != nil || got != r.c1 {
			t.Fatalf("RevParse %s = %q, %v", r.c1, got, err)
		}
	}
	if n != first+1 {
		t.Fatalf("three verified hashes ran git %d more times, want none", n-first-1)
	}
	if _, err := c.RevParse(ctx, r.c2); err != nil || n != first+2 {
		t.Fatalf("an unverified hash: %v, %d calls", err, n)
	}
	d1, err1 := c.CommonDir(ctx)
	d2, err2 := c.CommonDir(ctx)
	if err1 != nil || err2 != nil || d1 != d2 || n != first+3 {
		t.Fatalf("CommonDir twice: %q %q (%v %v), %d calls", d1, d2, err1, err2, n)
	}
	f1, err1 := c.ListFiles(ctx, r.c1)
	f1[0] = "changed by the caller"
	f2, err2 := c.ListFiles(ctx, r.c1)
	if err1 != nil || err2 != nil || n != first+4 || f2[0] == "changed by the caller" || len(f2) != 5 {
		t.Fatalf("ListFiles twice: %q (%v %v), %d calls", f2, err1, err2, n)
	}
}

// TestCheckoutSize: each blob at whole pages; c2 holds a.txt, dir/b.txt,
// new.txt, sp ace.txt and .gitignore (five files under a page each), and
// a blob of a page and a byte takes two.
func TestCheckoutSize(t *testing.T) {
	r := newRepo(t)
	c := &git.Client{Dir: r.dir}
	n, err := c.CheckoutSize(context.Background(), r.c2, 4096)
	if err != nil || n != 5*4096 {
		t.Fatalf("CheckoutSize(c2) = %d, %v; want %d", n, err, 5*4096)
	}
	writeFile(t, filepath.Join(r.dir, "big"), strings.Repeat("x", 4097))
	gitT(t, r.dir, "add", "big")
	gitT(t, r.dir, "commit", "-q", "-m", "big")
	if n, err = c.CheckoutSize(context.Background(), "HEAD", 4096); err != nil || n != 7*4096 {
		t.Fatalf("CheckoutSize(HEAD) = %d, %v; want %d", n, err, 7*4096)
	}
	if _, err := c.CheckoutSize(context.Background(), "no-such-rev", 4096); err == nil {
		t.Fatal("an unknown revision has a size")
	}
}

// TestBranch: the branch HEAD is on (init names it as the base a check
// takes), "" on a detached HEAD, an error outside a repository.
func TestBranch(t *testing.T) {
	r := newRepo(t)
	c := &git.Client{Dir: r.dir}
	ctx := context.Background()
	gitT(t, r.dir, "branch", "-q", "-m", "master")
	if b, err := c.Branch(ctx); err != nil || b != "master" {
		t.Fatalf("on master: %q, %v", b, err)
	}
	gitT(t, r.dir, "checkout", "-q", "--detach", r.c1)
	if b, err := c.Branch(ctx); err != nil || b != "" {
		t.Fatalf("detached: %q, %v", b, err)
	}
	if b, err := (&git.Client{Dir: t.TempDir()}).Branch(ctx); err == nil {
		t.Fatalf("outside a repository: %q, no error", b)
	}
}
