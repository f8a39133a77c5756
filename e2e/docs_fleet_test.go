package e2e_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/internal/pgtest"
)

// docBlock returns the YAML block of docs/ci-fleet.md marked
// "<!-- fleet-doc: name ... -->".
func docBlock(t *testing.T, name string) string {
	t.Helper()
	doc, err := os.ReadFile("../docs/ci-fleet.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)<!-- fleet-doc: " + regexp.QuoteMeta(name) + "[^>]*-->\\s*```yaml\n(.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatalf("docs/ci-fleet.md has no fleet-doc block %q", name)
	}
	return string(m[1])
}

// docCommands returns the one-line flakegate commands of a block (the
// values of run: and command: keys), in order.
func docCommands(t *testing.T, block string) []string {
	t.Helper()
	var out []string
	for _, line := range strings.Split(block, "\n") {
		l := strings.TrimSpace(line)
		l = strings.TrimPrefix(l, "- ")
		for _, key := range []string{"run: ", "command: "} {
			l = strings.TrimPrefix(l, key)
		}
		if strings.HasPrefix(l, "flakegate ") {
			out = append(out, l)
		}
	}
	return out
}

// docScript returns the literal "run: |" script of the step named name.
func docScript(t *testing.T, block, name string) string {
	t.Helper()
	lines := strings.Split(block, "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) != "- name: "+name {
			continue
		}
		for j := i + 1; j < len(lines); j++ {
			if strings.TrimSpace(lines[j]) != "run: |" {
				continue
			}
			indent := ""
			var script []string
			for _, s := range lines[j+1:] {
				if indent == "" {
					indent = s[:len(s)-len(strings.TrimLeft(s, " "))]
				}
				if !strings.HasPrefix(s, indent) || strings.TrimSpace(s) == "" {
					break
				}
				script = append(script, strings.TrimPrefix(s, indent))
			}
			return strings.Join(script, "\n") + "\n"
		}
	}
	t.Fatalf("no step %q with a run: | script", name)
	return ""
}

// shell runs script with sh -e in dir, the binary first on PATH.
func (r *repo) shell(t *testing.T, name, script string, env ...string) *proc {
	t.Helper()
	bin := filepath.Dir(flakegateBin)
	p := &proc{name: name, cmd: exec.Command("sh", "-e", "-c", script), done: make(chan struct{})}
	p.cmd.Dir = r.dir
	p.cmd.Env = append(append(cleanEnv(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH")), env...)
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // a group of its own, with what it starts in the background
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		err := p.cmd.Wait()
		if ee, ok := err.(*exec.ExitError); ok {
			p.code = ee.ExitCode()
		} else if err != nil {
			p.code = -100
		}
		close(p.done)
	}()
	t.Cleanup(func() {
		syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	})
	return p
}

// leftAlive reports whether a process the script started is still
// running after the script ended: one of its group.
func (p *proc) leftAlive() bool {
	return syscall.Kill(-p.cmd.Process.Pid, 0) == nil
}

// readSummaryFile reads a summary a documented command wrote.
func readSummaryFile(t *testing.T, path string, p *proc) *flakegate.Summary {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%s: %v\n%s", path, err, p)
	}
	var s flakegate.Summary
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("%s is not a summary: %v\n%s", path, err, raw)
	}
	return &s
}

// TestDocsFleetCommands runs the commands of docs/ci-fleet.md, exactly as
// written, on local processes: the CI variables are set as the CI system
// would set them, the database is a local PostgreSQL (pgtest) and each
// CI job is a clone of one repository. Each example gives the labels of
// a single-runner check and exits as it does.
func TestDocsFleetCommands(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end: PostgreSQL, git and flakegate processes")
	}
	const n = 8
	cluster := pgtest.NewCluster(t)
	shared := mkShared(t)
	origin := fleetOrigin(t, n, shared)
	single := origin.clone(t, "single").check("--base", "base", "--candidate", "cand")
	if single.code != 1 {
		t.Fatalf("the single runner: %s", single)
	}
	want := strings.Join(labelsOf(single.summary), ",")
	check := func(t *testing.T, s *flakegate.Summary, runnerPrefix string) {
		t.Helper()
		if got := strings.Join(labelsOf(s), ","); got != want {
			t.Errorf("labels %s, the single runner %s", got, want)
		}
		for _, r := range s.Results {
			if runnerPrefix != "" && !strings.HasPrefix(r.RunnerID, runnerPrefix) {
				t.Errorf("seed %s labelled by %q, want a runner %s*", r.Seed, r.RunnerID, runnerPrefix)
			}
		}
	}

	t.Run("github-matrix", func(t *testing.T) {
		cmds := docCommands(t, docBlock(t, "github-matrix"))
		if len(cmds) != 2 || !strings.Contains(cmds[0], "--join") || !strings.Contains(cmds[1], "verdict") {
			t.Fatalf("commands %q", cmds)
		}
		env := []string{"FLAKEGATE_LEDGER=" + cluster.DSN(t), "CHECK_ID=org/repo-81-1", "BASE=origin/main"}
		var jobs []*proc
		for i := 1; i <= 3; i++ {
			jobs = append(jobs, origin.clone(t, fmt.Sprintf("gha-%d", i)).shell(t, fmt.Sprintf("job %d", i), cmds[0], append(env, fmt.Sprintf("RUNNER_ID=gha-81-%d", i))...))
		}
		verdictJob := origin.clone(t, "gha-verdict")
		v := verdictJob.shell(t, "verdict job", cmds[1], env...)
		for _, p := range append(jobs, v) {
			p.wait(t, 5*time.Minute)
			if p.code != single.code {
				t.Fatalf("exit %d, the single runner %d\n%s", p.code, single.code, p)
			}
		}
		check(t, readSummaryFile(t, filepath.Join(verdictJob.dir, "summary.json"), v), "gha-81-")
		if _, err := os.Stat(filepath.Join(verdictJob.dir, "junit.xml")); err != nil {
			t.Error(err)
		}
	})

	t.Run("github-one-job", func(t *testing.T) {
		block := docBlock(t, "github-one-job")
		cmds := docCommands(t, block)
		if len(cmds) < 1 || cmds[0] != "flakegate db migrate" {
			t.Fatalf("commands %q", cmds)
		}
		env := []string{"FLAKEGATE_LEDGER=" + cluster.DSN(t), "CHECK_ID=81-1", "BASE=origin/main"}
		job := origin.clone(t, "one-job")
		// A runner may still be finishing (its last records, its
		// worktrees) when the verdict is judged: here each check lingers
		// two seconds after it ends, so a step that did not wait for its
		// runners would end while they still run.
		linger := t.TempDir()
		wrapper := "#!/bin/sh\n" + flakegateBin + " \"$@\"; rc=$?\n[ \"$1\" != check ] || sleep 2\nexit $rc\n"
		if err := os.WriteFile(filepath.Join(linger, "flakegate"), []byte(wrapper), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, script := range []string{cmds[0], docScript(t, block, "four runners, one check")} {
			env := env
			if script != cmds[0] {
				env = append(slices.Clip(env), "PATH="+linger+string(os.PathListSeparator)+filepath.Dir(flakegateBin)+string(os.PathListSeparator)+os.Getenv("PATH"))
			}
			p := job.shell(t, "one job", script, env...)
			p.wait(t, 5*time.Minute)
			if want := map[bool]int{true: 0, false: single.code}[script == cmds[0]]; p.code != want {
				t.Fatalf("exit %d, want %d\n%s\n%s", p.code, want, script, p)
			}
			if script != cmds[0] {
				// The runners end with the step (the script waits for
				// them): none is still writing when the job goes on.
				if p.leftAlive() {
					t.Errorf("a runner outlived the step\n%s", script)
				}
				check(t, readSummaryFile(t, filepath.Join(job.dir, "summary.json"), p), "runner-")
			}
		}
	})

	t.Run("buildkite", func(t *testing.T) {
		cmds := docCommands(t, docBlock(t, "buildkite"))
		if len(cmds) != 2 {
			t.Fatalf("commands %q", cmds)
		}
		// What Buildkite does at upload: $$ is a literal $ for the job's shell.
		for i := range cmds {
			cmds[i] = strings.ReplaceAll(cmds[i], "$$", "$")
		}
		env := []string{"FLAKEGATE_LEDGER=" + cluster.DSN(t), "CHECK_ID=pipeline-12-0", "BUILDKITE_PULL_REQUEST_BASE_BRANCH=main", "BUILDKITE_AGENT_NAME=agent"}
		var jobs []*proc
		for i := range 2 {
			jobs = append(jobs, origin.clone(t, fmt.Sprintf("bk-%d", i)).shell(t, fmt.Sprintf("bk job %d", i), cmds[0], append(env, fmt.Sprintf("BUILDKITE_PARALLEL_JOB=%d", i))...))
		}
		for _, p := range jobs {
			p.wait(t, 5*time.Minute)
		}
		step := origin.clone(t, "bk-verdict")
		v := step.shell(t, "verdict step", cmds[1], env...)
		v.wait(t, time.Minute)
		for _, p := range append(jobs, v) {
			if p.code != single.code {
				t.Fatalf("exit %d, the single runner %d\n%s", p.code, single.code, p)
			}
		}
		check(t, readSummaryFile(t, filepath.Join(step.dir, "summary.json"), v), "agent-")
	})

	t.Run("github-shards", func(t *testing.T) {
		cmds := docCommands(t, docBlock(t, "github-shards"))
		if len(cmds) != 2 {
			t.Fatalf("commands %q", cmds)
		}
		last := t.TempDir()
		for i := 1; i <= 4; i++ {
			job := origin.clone(t, fmt.Sprintf("shard-%d", i))
			p := job.shell(t, fmt.Sprintf("shard %d", i), cmds[0], "BASE=origin/main", fmt.Sprintf("SHARD=%d", i))
			p.wait(t, 5*time.Minute)
			if p.code > 1 {
				t.Fatalf("shard %d\n%s", i, p)
			}
			name := fmt.Sprintf("summary-%d.json", i)
			raw, err := os.ReadFile(filepath.Join(job.dir, name))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(last, name), raw, 0o644); err != nil { // the artifact download
				t.Fatal(err)
			}
		}
		v := (&repo{t: t, dir: last}).shell(t, "merge", cmds[1])
		v.wait(t, time.Minute)
		if v.code != single.code {
			t.Fatalf("exit %d, the single runner %d\n%s", v.code, single.code, v)
		}
		check(t, readSummaryFile(t, filepath.Join(last, "summary.json"), v), "")
	})
}
