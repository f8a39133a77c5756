// Package action_test runs the steps of the GitHub Action (action.yml at
// the repository root, its logic in action/run.sh) with bash, the way a
// GitHub runner does, on temporary repositories: the inputs evaluated from
// action.yml as GitHub evaluates them, the GITHUB_* files, and a
// pull_request event. What needs GitHub itself (go install at a published
// ref, the runner's masking of secrets, the step summary's rendering) is
// listed in docs/github-action.md.
package action_test

import (
	"context"
	"encoding/json"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/flakegate/flakegate/internal/pgtest"
	"github.com/flakegate/flakegate/postgres"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// actionFile is the part of action.yml the tests read.
type actionFile struct {
	Inputs map[string]struct {
		Default string `yaml:"default"`
	} `yaml:"inputs"`
	Outputs map[string]struct {
		Value string `yaml:"value"`
	} `yaml:"outputs"`
	Runs struct {
		Using string `yaml:"using"`
		Steps []struct {
			Name  string            `yaml:"name"`
			ID    string            `yaml:"id"`
			Shell string            `yaml:"shell"`
			Env   map[string]string `yaml:"env"`
			Run   string            `yaml:"run"`
		} `yaml:"steps"`
	} `yaml:"runs"`
}

func readAction(t *testing.T) actionFile {
	t.Helper()
	raw, err := os.ReadFile("../action.yml")
	if err != nil {
		t.Fatal(err)
	}
	var a actionFile
	if err := yaml.Unmarshal(raw, &a); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	return a
}

var exprRe = regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)

// TestActionFile: a composite action whose every input reaches run.sh as
// INPUT_* through env:, never through ${{ }} inside a script (an input
// inlined into a script is a shell injection, and a secret's value would
// be written into the script file); its outputs are the check step's.
func TestActionFile(t *testing.T) {
	a := readAction(t)
	if a.Runs.Using != "composite" {
		t.Errorf("runs.using %q, want composite", a.Runs.Using)
	}
	for _, name := range []string{"base", "args", "freeze-owner", "ledger", "version"} {
		if _, ok := a.Inputs[name]; !ok {
			t.Errorf("no input %q", name)
		}
	}
	if d := a.Inputs["base"].Default; d != "${{ github.event.pull_request.base.sha }}" {
		t.Errorf("base defaults to %q, want the pull request's base sha", d)
	}
	mapped := map[string]bool{}
	for _, s := range a.Runs.Steps {
		if strings.Contains(s.Run, "${{") {
			t.Errorf("step %q has an expression inside its script: %q", s.Name, s.Run)
		}
		if s.Shell != "bash" || !strings.Contains(s.Run, `"$GITHUB_ACTION_PATH/action/run.sh"`) {
			t.Errorf("step %q: shell %q, run %q; want bash running action/run.sh", s.Name, s.Shell, s.Run)
		}
		for k, v := range s.Env {
			if m := exprRe.FindStringSubmatch(v); m != nil && strings.HasPrefix(m[1], "inputs.") {
				in := strings.TrimPrefix(m[1], "inputs.")
				if want := "INPUT_" + strings.ToUpper(strings.ReplaceAll(in, "-", "_")); k != want {
					t.Errorf("input %s is passed as %s, want %s", in, k, want)
				}
				mapped[in] = true
			}
		}
	}
	for name := range a.Inputs {
		if !mapped[name] {
			t.Errorf("input %q reaches no step", name)
		}
	}
	for _, name := range []string{"verdict", "junit"} {
		if v := a.Outputs[name].Value; v != "${{ steps.check.outputs."+name+" }}" {
			t.Errorf("output %s = %q, want the check step's", name, v)
		}
	}
}

// runner is one simulated GitHub runner: its files and the inputs.
type runner struct {
	t                                   *testing.T
	workspace, event, output, summary   string
	path, temp                          string
	with                                map[string]string // the workflow's with:
	env                                 map[string]string // more environment
	eventJSON                           map[string]any
	stdout, stderr                      string
	actionPath                          string
	outputs                             map[string]string
	stepSummary                         string
	githubContextActionRef, processPATH string
}

func newRunner(t *testing.T, temp, workspace string, event map[string]any) *runner {
	t.Helper()
	dir := t.TempDir()
	r := &runner{t: t, workspace: workspace, temp: temp, with: map[string]string{}, env: map[string]string{}, eventJSON: event,
		event: filepath.Join(dir, "event.json"), output: filepath.Join(dir, "output"), summary: filepath.Join(dir, "summary"),
		path: filepath.Join(dir, "path"), processPATH: os.Getenv("PATH")}
	abs, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	r.actionPath = abs
	raw, _ := json.Marshal(event)
	for _, f := range []struct {
		name string
		data []byte
	}{{r.event, raw}, {r.output, nil}, {r.summary, nil}, {r.path, nil}} {
		if err := os.WriteFile(f.name, f.data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// eval evaluates a ${{ }} expression of action.yml as GitHub would for
// this workflow (the contexts the action uses, nothing else).
func (r *runner) eval(a actionFile, s string) string {
	return exprRe.ReplaceAllStringFunc(s, func(m string) string {
		e := exprRe.FindStringSubmatch(m)[1]
		switch {
		case strings.HasPrefix(e, "inputs."):
			name := strings.TrimPrefix(e, "inputs.")
			if v, ok := r.with[name]; ok {
				return v
			}
			return r.eval(a, a.Inputs[name].Default)
		case e == "github.action_ref":
			return r.githubContextActionRef
		case strings.HasPrefix(e, "github.event."):
			var v any = r.eventJSON
			for _, k := range strings.Split(strings.TrimPrefix(e, "github.event."), ".") {
				m, _ := v.(map[string]any)
				v = m[k]
			}
			if s, ok := v.(string); ok {
				return s
			}
			return ""
		}
		r.t.Fatalf("action.yml uses %q, which the test does not evaluate", e)
		return ""
	})
}

// step runs the action's step named name as the runner would (bash
// --noprofile --norc -eo pipefail) and returns its exit code.
func (r *runner) step(a actionFile, name string) int {
	r.t.Helper()
	for _, s := range a.Runs.Steps {
		if s.Name != name {
			continue
		}
		cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", s.Run)
		cmd.Dir = r.workspace
		env := []string{"PATH=" + r.processPATH, "HOME=" + os.Getenv("HOME"), "CI=true", "GITHUB_ACTIONS=true",
			"GITHUB_ACTION_PATH=" + r.actionPath, "GITHUB_WORKSPACE=" + r.workspace, "GITHUB_EVENT_PATH=" + r.event,
			"GITHUB_EVENT_NAME=pull_request", "GITHUB_OUTPUT=" + r.output, "GITHUB_STEP_SUMMARY=" + r.summary,
			"GITHUB_PATH=" + r.path, "RUNNER_TEMP=" + r.temp}
		for _, k := range []string{"GOPATH", "GOCACHE", "GOMODCACHE", "GOFLAGS", "GOPROXY", "GOTOOLCHAIN"} {
			if v, ok := os.LookupEnv(k); ok {
				env = append(env, k+"="+v)
			}
		}
		for k, v := range r.env {
			env = append(env, k+"="+v)
		}
		for k, v := range s.Env {
			env = append(env, k+"="+r.eval(a, v))
		}
		cmd.Env = env
		var out, errOut strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		r.stdout, r.stderr = out.String(), errOut.String()
		r.readFiles()
		if err == nil {
			return 0
		}
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		r.t.Fatalf("step %q: %v", name, err)
	}
	r.t.Fatalf("action.yml has no step %q", name)
	return -1
}

func (r *runner) readFiles() {
	r.outputs = map[string]string{}
	raw, _ := os.ReadFile(r.output)
	for _, l := range strings.Split(string(raw), "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			r.outputs[k] = v
		}
	}
	b, _ := os.ReadFile(r.summary)
	r.stepSummary = string(b)
}

// everything is every byte the steps wrote where a reader can see it.
func (r *runner) everything() string {
	out, _ := os.ReadFile(r.output)
	path, _ := os.ReadFile(r.path)
	return r.stdout + r.stderr + string(out) + r.stepSummary + string(path)
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func commit(t *testing.T, dir string, files map[string]string) string {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git(t, dir, "add", "-A")
	git(t, dir, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "c")
	return git(t, dir, "rev-parse", "HEAD")
}

const baseConfig = `version: 1
retry_cap: 1
properties:
  - {path: props/sorted.sh, seeds: [1, 2], run: [sh, "{path}", "{seed}"], wall_budget: 20s}
`

// pullRequest is a repository with a base commit and a candidate on top,
// and the pull_request event of the two.
func pullRequest(t *testing.T, base, candidate map[string]string) (string, map[string]any) {
	t.Helper()
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	baseSHA := commit(t, dir, base)
	headSHA := commit(t, dir, candidate)
	return dir, map[string]any{
		"action": "synchronize",
		"number": 7,
		"pull_request": map[string]any{
			"number": 7,
			"base":   map[string]any{"ref": "main", "sha": baseSHA},
			"head":   map[string]any{"ref": "feature", "sha": headSHA},
		},
	}
}

func needTools(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds flakegate and runs checks")
	}
	for _, tool := range []string{"bwrap", "jq", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is required under CI=true", tool)
			}
			t.Skipf("%s not installed", tool)
		}
	}
}

// TestActionSteps runs the three steps on pull requests: the install from
// this checkout (a local action has no ref), then the check, asserting
// the outputs, the step summary, the exit code of the step and that a
// ledger DSN given as an input never shows.
func TestActionSteps(t *testing.T) {
	needTools(t)
	a := readAction(t)
	temp := t.TempDir() // RUNNER_TEMP, shared: flakegate is installed once

	base := map[string]string{"flakegate.yaml": baseConfig, "props/sorted.sh": ". ./src/lib.sh; test \"$v\" != broken\n", "src/lib.sh": "v=1\n"}
	ws, ev := pullRequest(t, base, map[string]string{"src/lib.sh": "v=2\n"})
	r := newRunner(t, temp, ws, ev)
	if code := r.step(a, "Install bubblewrap"); code != 0 || !strings.Contains(r.stdout, "bubblewrap: ") {
		t.Fatalf("setup: exit %d\n%s%s", code, r.stdout, r.stderr)
	}
	if code := r.step(a, "Install flakegate"); code != 0 {
		t.Fatalf("install: exit %d\n%s%s", code, r.stdout, r.stderr)
	}
	bin := filepath.Join(temp, "flakegate-action", "bin")
	if !strings.Contains(r.stdout, "go install ./cmd/flakegate") || !strings.Contains(r.stdout, "flakegate ") {
		t.Errorf("install printed:\n%s%s", r.stdout, r.stderr)
	}
	if p, _ := os.ReadFile(r.path); strings.TrimSpace(string(p)) != bin {
		t.Errorf("GITHUB_PATH holds %q, want %q", p, bin)
	}

	const pw = "Action-pw-9137"
	withPassword := func(dsn string) string { return pgtest.WithPassword(t, dsn, pw) }
	live := withPassword(pgtest.DSN(t))
	if err := postgres.Migrate(context.Background(), live); err != nil {
		t.Fatal(err)
	}
	du, _ := url.Parse(live)
	q := du.Query()
	q.Set("host", t.TempDir()) // no server there
	du.RawQuery = q.Encode()
	down := du.String()

	type testCase struct {
		name      string
		candidate map[string]string // nil: the harmless candidate
		base      map[string]string // nil: base
		event     func(map[string]any) map[string]any
		with      map[string]string
		code      int
		verdict   string
		summary   string // part of the step summary
		junit     bool
		secret    string // never in any output
		stdout    string // part of the step's stdout
	}
	run := func(t *testing.T, tc testCase) {
		b, c := tc.base, tc.candidate
		if b == nil {
			b = base
		}
		if c == nil {
			c = map[string]string{"src/lib.sh": "v=2\n"}
		}
		ws, ev := pullRequest(t, b, c)
		if tc.event != nil {
			ev = tc.event(ev)
		}
		r := newRunner(t, temp, ws, ev)
		for k, v := range tc.with {
			r.with[k] = v
		}
		code := r.step(a, "flakegate check")
		if code != tc.code {
			t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, r.stdout, r.stderr)
		}
		if r.outputs["verdict"] != tc.verdict {
			t.Errorf("output verdict %q, want %q", r.outputs["verdict"], tc.verdict)
		}
		if !strings.Contains(r.stepSummary, tc.summary) {
			t.Errorf("step summary does not hold %q:\n%s", tc.summary, r.stepSummary)
		}
		if tc.junit {
			j := r.outputs["junit"]
			raw, err := os.ReadFile(j)
			if err != nil || !strings.Contains(string(raw), "<testsuites") {
				t.Errorf("output junit %q: %v\n%s", j, err, raw)
			}
			var sum struct{ Verdict string }
			raw, err = os.ReadFile(r.outputs["summary"])
			if err != nil || json.Unmarshal(raw, &sum) != nil || sum.Verdict != tc.verdict {
				t.Errorf("output summary %q: %v, verdict %q\n%s", r.outputs["summary"], err, sum.Verdict, raw)
			}
		} else if j, ok := r.outputs["junit"]; ok {
			t.Errorf("output junit %q set without a verdict", j)
		}
		if tc.verdict != "error" && !strings.Contains(r.stdout, "::group::flakegate doctor") {
			t.Errorf("no doctor group in:\n%s", r.stdout)
		}
		if !strings.Contains(r.stdout, tc.stdout) {
			t.Errorf("stdout does not hold %q:\n%s", tc.stdout, r.stdout)
		}
		if tc.secret != "" {
			for _, s := range []string{tc.secret, pw} {
				if strings.Contains(r.everything(), s) {
					t.Errorf("%q shows in the step's output:\n%s", s, r.everything())
				}
			}
		}
	}
	for _, tc := range []testCase{
		{name: "pass", code: 0, verdict: "pass", summary: "flakegate check: pass", junit: true,
			stdout: "ok   bwrap: "},
		{name: "reject", candidate: map[string]string{"src/lib.sh": "v=broken\n"}, code: 1, verdict: "reject",
			summary: "flakegate check: reject", junit: true},
		{name: "a broken config is not a pass", base: map[string]string{"flakegate.yaml": "version: 1\nretry_cap: many\n", "props/sorted.sh": "exit 0\n"},
			code: 2, verdict: "error", summary: "no verdict (exit 2)"},
		{name: "the base input wins over the event", with: map[string]string{"base": "HEAD"}, code: 0, verdict: "pass", summary: "flakegate check: pass", junit: true},
		{name: "no pull request, no base", event: func(map[string]any) map[string]any { return map[string]any{"ref": "refs/heads/main"} },
			code: 2, verdict: "error", summary: "No base revision"},
		{name: "args and freeze-owner pass through", with: map[string]string{"args": "--no-replay-cache  --lock-timeout 1m", "freeze-owner": "alice@example.com"},
			code: 0, verdict: "pass", summary: "flakegate check: pass", junit: true,
			stdout: "--json --freeze-owner alice@example.com --no-replay-cache --lock-timeout 1m"},
		{name: "a PostgreSQL ledger from a secret", with: map[string]string{"ledger": live}, code: 0, verdict: "pass", summary: "flakegate check: pass", junit: true, secret: live},
		{name: "an unreachable ledger", with: map[string]string{"ledger": down}, code: 3, verdict: "error", summary: "no verdict (exit 3)", secret: down},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestActionSetup: without bwrap, the setup step installs bubblewrap with
// apt-get (a fake one here, recording its arguments) and lifts AppArmor's
// restriction of unprivileged user namespaces (a fake sysctl); without
// root or sudo it stops with the install line.
func TestActionSetup(t *testing.T) {
	if testing.Short() {
		t.Skip("runs bash")
	}
	a := readAction(t)
	// Folders nobody may enter too (t.TempDir's parent is root's alone).
	world := func() string {
		d, err := os.MkdirTemp("", "action-setup-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(d) })
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	fakes := world()
	log := filepath.Join(fakes, "calls")
	for _, prog := range []string{"apt-get", "sysctl"} {
		script := "#!/bin/sh\necho \"" + prog + " $*\" >> " + log + "\n"
		if err := os.WriteFile(filepath.Join(fakes, prog), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A PATH with what run.sh needs and no bwrap.
	bin := world()
	for _, prog := range []string{"bash", "sh", "env", "cat", "id", "head", "dirname"} {
		p, err := exec.LookPath(prog)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(p, filepath.Join(bin, prog)); err != nil {
			t.Fatal(err)
		}
	}
	proc := t.TempDir()
	if err := os.MkdirAll(filepath.Join(proc, "kernel"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proc, "kernel", "apparmor_restrict_unprivileged_userns"), []byte("1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := newRunner(t, t.TempDir(), t.TempDir(), map[string]any{})
	r.processPATH = fakes + ":" + bin
	r.env["PROC_SYS"] = proc
	if os.Getuid() != 0 {
		t.Skip("the apt-get path runs as root")
	}
	if code := r.step(a, "Install bubblewrap"); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, r.stdout, r.stderr)
	}
	calls, _ := os.ReadFile(log)
	want := "apt-get update -qq\napt-get install -y -qq --no-install-recommends bubblewrap\nsysctl -q -w kernel.apparmor_restrict_unprivileged_userns=0\n"
	if string(calls) != want {
		t.Errorf("calls:\n%s\nwant:\n%s", calls, want)
	}

	// Not root and no sudo: the install line, exit 1.
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("setpriv not installed")
	}
	os.Remove(log)
	setpriv, _ := exec.LookPath("setpriv")
	if err := os.Symlink(setpriv, filepath.Join(bin, "setpriv")); err != nil {
		t.Fatal(err)
	}
	for i := range a.Runs.Steps {
		if a.Runs.Steps[i].Name == "Install bubblewrap" {
			a.Runs.Steps[i].Run = "setpriv --reuid=65534 --regid=65534 --clear-groups " + strings.ReplaceAll(a.Runs.Steps[i].Run, `"$GITHUB_ACTION_PATH/action/run.sh"`, `bash "$GITHUB_ACTION_PATH/action/run.sh"`)
		}
	}
	if err := os.Chmod(r.temp, 0o777); err != nil {
		t.Fatal(err)
	}
	code := r.step(a, "Install bubblewrap")
	if strings.Contains(r.stdout+r.stderr, "not found") {
		t.Errorf("as nobody, a program run.sh needs was not found:\n%s%s", r.stdout, r.stderr)
	}
	if code != 1 || !strings.Contains(r.stdout, "sudo apt-get install -y bubblewrap") {
		t.Errorf("as nobody: exit %d, want 1 and the install line\n%s%s", code, r.stdout, r.stderr)
	}
	if calls, _ := os.ReadFile(log); len(calls) != 0 {
		t.Errorf("as nobody, apt-get or sysctl ran: %s", calls)
	}
}

// TestActionDocs: the workflows of docs/github-action.md parse, give the
// action only inputs it has, and read only outputs it sets.
func TestActionDocs(t *testing.T) {
	a := readAction(t)
	doc, err := os.ReadFile("../docs/github-action.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)<!-- action-doc: (\\w+) -->\\s*```yaml\n(.*?)```").FindAllSubmatch(doc, -1)
	if len(blocks) != 2 {
		t.Fatalf("%d action-doc blocks, want 2 (single, fleet)", len(blocks))
	}
	outRe := regexp.MustCompile(`steps\.flakegate\.outputs\.([\w-]+)`)
	for _, b := range blocks {
		name, body := string(b[1]), b[2]
		var wf struct {
			Jobs map[string]struct {
				Steps []struct {
					ID   string            `yaml:"id"`
					Uses string            `yaml:"uses"`
					With map[string]string `yaml:"with"`
				} `yaml:"steps"`
			} `yaml:"jobs"`
		}
		if err := yaml.Unmarshal(body, &wf); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		used := 0
		for _, job := range wf.Jobs {
			for _, s := range job.Steps {
				if !strings.HasPrefix(s.Uses, "flakegate/flakegate@") {
					continue
				}
				used++
				for k := range s.With {
					if _, ok := a.Inputs[k]; !ok {
						t.Errorf("%s: the action has no input %q", name, k)
					}
				}
			}
		}
		if used == 0 {
			t.Errorf("%s: no step uses the action", name)
		}
		for _, m := range outRe.FindAllSubmatch(body, -1) {
			if _, ok := a.Outputs[string(m[1])]; !ok {
				t.Errorf("%s: the action has no output %q", name, m[1])
			}
		}
	}
}
