package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/internal/pgtest"
	"github.com/jackc/pgx/v5"
)

// fleetProp is the property of the fleet tests. It logs every run as
// "<side> <seed>" to <shared>/runs.log, where shared ($2) is a folder
// outside every repository, named in the config's run line (so a
// sandboxed run needs only that one path declared writable: sandbox.rw).
// On the candidate, seeds divisible by 5 fail. The first candidate run of
// the seed named by <shared>/hang-seed hangs (it makes <shared>/hang, and
// writes its process group there), so a test can kill its runner in the
// middle of an attempt.
const fleetProp = `#!/bin/sh
seed=$1 shared=$2 side=$(cat src/side.txt)
echo "$side $seed" >> "$shared/runs.log"
if [ "$side" = candidate ] && [ "$seed" = "$(cat "$shared/hang-seed" 2>/dev/null)" ] && mkdir "$shared/hang" 2>/dev/null; then
	echo $$ > "$shared/hang/pgid"
	sleep 300
fi
sleep 0.2
[ "$side" = candidate ] && [ $((seed % 5)) -eq 0 ] && exit 1
exit 0
`

// fleetConfig is a config of one property with seeds 1..n; shared is
// the folder its runs log to. When attempts run in a sandbox, add
// "sandbox: {rw: [<shared>]}" here: it is the one path outside the
// worktree the property writes.
func fleetConfig(n int, shared string) string {
	seeds := make([]string, n)
	for i := range seeds {
		seeds[i] = strconv.Itoa(i + 1)
	}
	return fmt.Sprintf(`version: 1
retry_cap: 1
workers: 1
sandbox:
  rw: [%q]
properties:
  - path: props/prop.sh
    fixture: fixtures/data.txt
    seeds: [%s]
    run: [sh, "{path}", "{seed}", %q]
    wall_budget: 120s
`, shared, strings.Join(seeds, ", "), shared)
}

// fleetOrigin makes a repository whose base and candidate (tags "base"
// and "cand") differ only in src/side.txt, with seeds 1..n logging to
// shared.
func fleetOrigin(t *testing.T, n int, shared string) *repo {
	t.Helper()
	cfg := fleetConfig(n, shared)
	r := newRepo(t, map[string]string{
		"flakegate.yaml":    cfg,
		"alt.yaml":          cfg + "# the same properties, another file: another config digest\n",
		"props/prop.sh":     fleetProp,
		"fixtures/data.txt": "alpha\n",
		"src/side.txt":      "base\n",
		"README.md":         "fleet\n",
	})
	r.candidate("cand", map[string]string{"src/side.txt": "candidate\n"})
	r.git("checkout", "-q", "--detach", "base")
	r.commit("another base", map[string]string{"README.md": "another base\n"})
	r.git("tag", "base2")
	return r
}

// clone clones origin into a new folder, as a CI runner checks out.
func (r *repo) clone(t *testing.T, name string) *repo {
	t.Helper()
	c := &repo{t: t, dir: filepath.Join(t.TempDir(), name), state: t.TempDir()}
	r.git("clone", "-q", "--no-checkout", r.dir, c.dir)
	c.git("checkout", "-q", "--detach", "cand")
	return c
}

// proc is a flakegate process started in the background.
type proc struct {
	name           string
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
	done           chan struct{}
	code           int
}

func (r *repo) start(t *testing.T, name string, args ...string) *proc {
	t.Helper()
	p := &proc{name: name, cmd: exec.Command(flakegateBin, args...), done: make(chan struct{})}
	p.cmd.Dir = r.dir
	p.cmd.Env = cleanEnv()
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		err := p.cmd.Wait()
		if ee, ok := errors.AsType[*exec.ExitError](err); ok {
			p.code = ee.ExitCode()
		} else if err != nil {
			p.code = -100
		}
		close(p.done)
	}()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.done
	})
	return p
}

// wait waits for the process to end, at most d.
func (p *proc) wait(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(d):
		p.cmd.Process.Kill()
		<-p.done
		t.Fatalf("%s did not end within %s\n%s", p.name, d, p)
	}
}

func (p *proc) summary(t *testing.T) *flakegate.Summary {
	t.Helper()
	var s flakegate.Summary
	if err := json.Unmarshal(p.stdout.Bytes(), &s); err != nil {
		t.Fatalf("%s: stdout is not a summary: %v\n%s", p.name, err, p)
	}
	return &s
}

func (p *proc) String() string {
	return fmt.Sprintf("%s: exit %d\nstdout:\n%s\nstderr:\n%s", p.name, p.code, p.stdout.String(), p.stderr.String())
}

// waitFile waits until path exists.
func waitFile(t *testing.T, path string, d time.Duration, procs ...*proc) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			var all strings.Builder
			for _, p := range procs {
				all.WriteString(p.String())
			}
			t.Fatalf("%s did not appear within %s\n%s", path, d, all.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// killHang kills what is left of the hanging attempt when the test ends
// (its runner was killed, not the attempt). The attempt runs in its own
// PID namespace, so the pid it wrote means nothing here: the host's
// processes whose command line names the shared folder are the ones.
// bwrap's --die-with-parent should have ended them already.
func killHang(t *testing.T, shared string) {
	t.Cleanup(func() {
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == os.Getpid() {
				continue
			}
			if b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); err == nil && bytes.Contains(b, []byte(shared)) {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
}

// runCounts counts the lines of <shared>/runs.log per side and seed.
func runCounts(t *testing.T, shared string) map[string]int {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(shared, "runs.log"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	n := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		if line != "" {
			n[line]++
		}
	}
	return n
}

func queryString(t *testing.T, dsn, sql string, args ...any) string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var s string
	if err := conn.QueryRow(ctx, sql, args...).Scan(&s); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return s
}

// queueSnapshot is every row of the queue tables and the record store.
func queueSnapshot(t *testing.T, dsn string) string {
	t.Helper()
	return queryString(t, dsn, `SELECT
		coalesce((SELECT string_agg(c::text, E'\n' ORDER BY check_id) FROM flakegate.checks c), '') || E'\n' ||
		coalesce((SELECT string_agg(t::text, E'\n' ORDER BY check_id, position) FROM flakegate.check_triples t), '') || E'\n' ||
		coalesce((SELECT string_agg(record_sha256, ',' ORDER BY record_sha256) FROM flakegate.records), '') || E'\n' ||
		coalesce((SELECT string_agg(replay_key || result, ',' ORDER BY replay_key) FROM flakegate.replays), '')`)
}

func mkShared(t *testing.T) string {
	t.Helper()
	d := filepath.Join(t.TempDir(), "shared")
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

func writeShared(t *testing.T, shared, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(shared, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestFleetJoin: four runner processes on four clones of one repository
// join one check of 40 triples on PostgreSQL; the runner attempting seed
// 7 is SIGKILLed in the middle of the attempt. Another runner takes the
// triple over once its lease expires; every triple is labelled exactly
// once, with the labels of a single-runner check of the same candidate;
// no base seed runs twice; the runners and 'verdict' exit as the single
// runner did; the records name the runner that labelled them. Runners
// that disagree on the base or the config, and an unknown check id, are
// exit 2 and change nothing.
func TestFleetJoin(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end: PostgreSQL, git and five flakegate processes")
	}
	const n, checkID, hangSeed = 40, "fleet-1", "7"
	dsn := pgtest.NewCluster(t).DSN(t)
	shared := mkShared(t)
	writeShared(t, shared, "hang-seed", hangSeed)
	killHang(t, shared)
	origin := fleetOrigin(t, n, shared)

	join := func(r *repo, id string, extra ...string) []string {
		return append([]string{"check", "--json", "--base", "base", "--candidate", "cand", "--ledger", dsn,
			"--join", "--check-id", checkID, "--runner-id", id, "--lease", "6s"}, extra...)
	}
	var runners []*proc
	for i := 1; i <= 4; i++ {
		id := fmt.Sprintf("r%d", i)
		r := origin.clone(t, "runner-"+id)
		runners = append(runners, r.start(t, id, join(r, id)...))
	}
	waiter := origin.clone(t, "verdict").start(t, "verdict --wait", "verdict", "--json", "--ledger", dsn, "--check-id", checkID, "--wait", "--poll", "200ms")

	// Kill the runner in the middle of the hanging attempt.
	waitFile(t, filepath.Join(shared, "hang", "pgid"), 3*time.Minute, runners...)
	victim := queryString(t, dsn, `SELECT runner_id FROM flakegate.check_triples WHERE check_id = $1 AND seed = $2`, checkID, hangSeed)
	var killed *proc
	for _, p := range runners {
		if p.name == victim {
			killed = p
		}
	}
	if killed == nil {
		t.Fatalf("the hanging triple is held by %q, not a runner", victim)
	}
	if err := killed.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for _, p := range runners {
		p.wait(t, 5*time.Minute)
	}
	waiter.wait(t, time.Minute)

	// Base seeds ran at most once each, in all four runners.
	counts := runCounts(t, shared)
	for i := 1; i <= n; i++ {
		if c := counts[fmt.Sprintf("base %d", i)]; c != 1 {
			t.Errorf("seed %d ran on the base %d times, want 1", i, c)
		}
	}

	// The reference: one runner, its own file store, the same config
	// (the hanging seed does not hang twice).
	singleRun := origin.clone(t, "single").check("--base", "base", "--candidate", "cand")
	if singleRun.code > 1 {
		t.Fatalf("the single runner: %s", singleRun)
	}
	want := labelsOf(singleRun.summary)
	for _, p := range runners {
		if p == killed {
			if p.code != -1 {
				t.Errorf("the killed runner: %s", p)
			}
			continue
		}
		if p.code != singleRun.code {
			t.Fatalf("runner %s exit %d, the single runner %d\n%s", p.name, p.code, singleRun.code, p)
		}
		sum := p.summary(t)
		if got := labelsOf(sum); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("runner %s labels\n%v\nsingle runner\n%v", p.name, got, want)
		}
		if !strings.Contains(p.stderr.String(), "queue: check "+checkID+": ") {
			t.Errorf("runner %s shows no queue progress:\n%s", p.name, p.stderr.String())
		}
	}
	if waiter.code != singleRun.code {
		t.Fatalf("verdict --wait exit %d, the single runner %d\n%s", waiter.code, singleRun.code, waiter)
	}
	sum := waiter.summary(t)
	if got := labelsOf(sum); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("verdict labels\n%v\nsingle runner\n%v", got, want)
	}
	if sum.CheckID != checkID || sum.Base != singleRun.summary.Base || sum.Candidate != singleRun.summary.Candidate || sum.ConfigSHA256 == "" ||
		sum.ConfigSHA256 != singleRun.summary.ConfigSHA256 {
		t.Errorf("verdict summary head: %+v, single runner %+v", sum, singleRun.summary)
	}

	// Every triple labelled once, by a live runner for the hanging one;
	// every record stored, naming its runner.
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for i, res := range sum.Results {
		if res.RunnerID == "" || res.RunnerHost == "" {
			t.Errorf("result %d names no runner: %+v", i, res)
		}
		if res.Seed.String() == hangSeed && res.RunnerID == victim {
			t.Errorf("the hanging triple is labelled by the killed runner %s", victim)
		}
		var raw []byte
		if err := conn.QueryRow(ctx, `SELECT raw FROM flakegate.records WHERE record_sha256 = $1`, res.RecordSHA256).Scan(&raw); err != nil {
			t.Errorf("the record of seed %s: %v", res.Seed, err)
			continue
		}
		var rec flakegate.RunRecord
		if err := json.Unmarshal(raw, &rec); err != nil || rec.RunnerID != res.RunnerID || rec.RunnerHost != res.RunnerHost {
			t.Errorf("the record of seed %s names runner %q on %q, the result %q (%v)", res.Seed, rec.RunnerID, rec.RunnerHost, res.RunnerID, err)
		}
		if got := flakegate.ClassifyBytes(raw).Label; got != res.Label {
			t.Errorf("seed %s: the record classifies %s, the result says %s", res.Seed, got, res.Label)
		}
	}
	var claims, expiries, done int
	if err := conn.QueryRow(ctx, `SELECT sum(claims), sum(expiries), count(*) FILTER (WHERE state = 'done') FROM flakegate.check_triples WHERE check_id = $1`, checkID).
		Scan(&claims, &expiries, &done); err != nil {
		t.Fatal(err)
	}
	if done != n || claims != n+1 || expiries != 1 {
		t.Errorf("%d of %d triples done, %d claims, %d expiries; want %d, %d claims (one takeover), 1 expiry", done, n, claims, expiries, n, n+1)
	}

	// Bad input: nothing changes.
	before := queueSnapshot(t, dsn)
	type testCase struct {
		name string
		args []string
		want []string
	}
	late := origin.clone(t, "late")
	for _, tc := range []testCase{
		{"another base", []string{"check", "--base", "base2", "--candidate", "cand", "--ledger", dsn, "--join", "--check-id", checkID},
			[]string{"this check id was created with base", "nothing was changed", "Try:"}},
		{"another config", []string{"check", "--base", "base", "--candidate", "cand", "--config", "alt.yaml", "--ledger", dsn, "--join", "--check-id", checkID},
			[]string{"config digest", "nothing was changed"}},
		{"verdict of an unknown check", []string{"verdict", "--ledger", dsn, "--check-id", "no-such-check"},
			[]string{"no check with this id", "Try:"}},
		{"join without PostgreSQL", []string{"check", "--base", "base", "--candidate", "cand", "--join", "--check-id", checkID},
			[]string{"--join needs a PostgreSQL ledger"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := late.start(t, tc.name, tc.args...)
			p.wait(t, 2*time.Minute)
			if p.code != 2 {
				t.Fatalf("exit %d, want 2\n%s", p.code, p)
			}
			for _, w := range tc.want {
				if !strings.Contains(p.stderr.String(), w) {
					t.Errorf("stderr does not say %q\n%s", w, p)
				}
			}
			if strings.Contains(p.stderr.String(), "panic") || p.stdout.Len() > 0 {
				t.Errorf("a refused command printed\n%s", p)
			}
			if after := queueSnapshot(t, dsn); after != before {
				t.Errorf("the refused command changed the store\nbefore:\n%s\nafter:\n%s", before, after)
			}
		})
	}

	// verdict after the end, without --wait: the same summary and exit.
	again := late.start(t, "verdict", "verdict", "--json", "--ledger", dsn, "--check-id", checkID)
	again.wait(t, time.Minute)
	if again.code != waiter.code || again.stdout.String() != waiter.stdout.String() {
		t.Errorf("verdict after the end differs from verdict --wait\n%s\n%s", again, waiter)
	}
}

func labelsOf(s *flakegate.Summary) []string {
	var out []string
	for _, r := range s.Results {
		out = append(out, r.Seed.String()+":"+string(r.Label))
	}
	return out
}

// TestFleetLeaseExpiries: with --max-lease-expiries 0, a triple whose
// runner dies in the middle of its attempt is not run again: the runner
// that takes it over labels it INCOMPLETE through a record the decision
// table labels so (transcript_complete false, incomplete_reason naming
// the expired lease). The other triple runs as usual.
func TestFleetLeaseExpiries(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end: PostgreSQL, git and two flakegate processes")
	}
	const checkID = "expiring"
	dsn := pgtest.NewCluster(t).DSN(t)
	shared := mkShared(t)
	writeShared(t, shared, "hang-seed", "1")
	killHang(t, shared)
	origin := fleetOrigin(t, 2, shared)
	args := func(id string) []string {
		return []string{"check", "--json", "--base", "base", "--candidate", "cand", "--ledger", dsn,
			"--join", "--check-id", checkID, "--runner-id", id, "--lease", "6s", "--max-lease-expiries", "0"}
	}
	a := origin.clone(t, "a").start(t, "a", args("a")...)
	waitFile(t, filepath.Join(shared, "hang", "pgid"), 2*time.Minute, a)
	if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	a.wait(t, time.Minute)

	// No verdict yet: exit 3 (never a pass) with the progress; an id no
	// runner creates is exit 2, with --wait once --start-timeout passed.
	v := origin.start(t, "verdict", "verdict", "--json", "--ledger", dsn, "--check-id", checkID)
	v.wait(t, time.Minute)
	if v.code != 3 || v.stdout.Len() > 0 || !strings.Contains(v.stderr.String(), "queue: check expiring: 0/2 done, 1 claimed, 1 queued; a 0 done 1 claimed") ||
		!strings.Contains(v.stderr.String(), "the check is not finished: 0 of 2 triples labelled") || !strings.Contains(v.stderr.String(), "--wait") {
		t.Errorf("verdict of an unfinished check: %s", v)
	}
	v = origin.start(t, "verdict", "verdict", "--ledger", dsn, "--check-id", "never-created", "--wait", "--start-timeout", "1s", "--poll", "100ms")
	v.wait(t, time.Minute)
	if v.code != 2 || !strings.Contains(v.stderr.String(), "no check with this id") {
		t.Errorf("verdict --wait of a check never created: %s", v)
	}

	b := origin.clone(t, "b").start(t, "b", args("b")...)
	b.wait(t, 3*time.Minute)
	if b.code != 1 {
		t.Fatalf("runner b: %s", b)
	}
	sum := b.summary(t)
	if got := strings.Join(labelsOf(sum), ","); got != "1:INCOMPLETE,2:PASS" {
		t.Fatalf("labels %s, want 1:INCOMPLETE,2:PASS\n%s", got, b)
	}
	res := sum.Results[0]
	if res.RunnerID != "b" || !strings.Contains(res.Reason, "lease of this triple expired 1 times") || !strings.Contains(res.Reason, "runners a") {
		t.Errorf("the given-up result: %+v", res)
	}
	raw := []byte(queryString(t, dsn, `SELECT convert_from(raw, 'UTF8') FROM flakegate.records WHERE record_sha256 = $1`, res.RecordSHA256))
	d := flakegate.ClassifyBytes(raw)
	var rec flakegate.RunRecord
	if err := json.Unmarshal(raw, &rec); err != nil {
		t.Fatal(err)
	}
	if d.Label != flakegate.Incomplete || d.Row != 1 || rec.TranscriptComplete || !strings.Contains(rec.IncompleteReason, "--max-lease-expiries 0") || rec.RunnerID != "b" {
		t.Errorf("the given-up record: label %s row %d, %s", d.Label, d.Row, raw)
	}
	if c := runCounts(t, shared); c["candidate 1"] != 1 || c["base 1"] != 0 || c["base 2"] != 1 {
		t.Errorf("runs %v: seed 1 must have run once (the killed attempt) and never on the base", c)
	}
}

// normalRecordHash is the record hash of a record without what differs
// between two runs of the same triple: run id, times, transcript, runner.
func normalRecordHash(t *testing.T, path string) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"run_id", "transcript_path", "transcript_sha256", "runner_id", "runner_host"} {
		delete(m, k)
	}
	atts, _ := m["attempts"].([]any)
	for _, a := range atts {
		delete(a.(map[string]any), "started_at")
		delete(a.(map[string]any), "wall_seconds")
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	sha, err := flakegate.RecordSHA256(b)
	if err != nil {
		t.Fatal(err)
	}
	return sha
}

// TestFleetShards: --shard 1/3, 2/3 and 3/3 plus verdict give the
// unsharded summary (labels, and record hashes apart from run ids and
// times); missing, doubled and disagreeing shards are exit 2 and write
// nothing.
func TestFleetShards(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end: git and flakegate processes")
	}
	shared := mkShared(t)
	origin := fleetOrigin(t, 10, shared)
	r := origin.clone(t, "runner")
	whole := r.check("--base", "base", "--candidate", "cand", "--ledger", filepath.Join(t.TempDir(), "ledger-whole"), "--out", filepath.Join(t.TempDir(), "whole"))
	if whole.code != 1 {
		t.Fatalf("the unsharded check: %s", whole)
	}
	shardLedger := filepath.Join(t.TempDir(), "ledger-shards")
	var files []string
	seen := 0
	for i := 1; i <= 3; i++ {
		out := filepath.Join(t.TempDir(), fmt.Sprintf("shard-%d", i))
		cr := origin.clone(t, fmt.Sprintf("shard-%d", i)).check("--base", "base", "--candidate", "cand", "--ledger", shardLedger, "--out", out, "--shard", fmt.Sprintf("%d/3", i))
		if cr.code > 1 || cr.summary.Shard == nil || cr.summary.Shard.Index != i || len(cr.summary.Results) < 3 || len(cr.summary.Results) > 4 {
			t.Fatalf("shard %d/3 (want 3 or 4 of the 10 triples): %s", i, cr)
		}
		seen += len(cr.summary.Results)
		files = append(files, filepath.Join(out, "summary.json"))
	}
	if seen != 10 {
		t.Fatalf("the shards ran %d triples, want 10", seen)
	}
	verdict := func(args ...string) *proc {
		p := r.start(t, "verdict", append([]string{"verdict"}, args...)...)
		p.wait(t, time.Minute)
		return p
	}
	junit := filepath.Join(t.TempDir(), "junit.xml")
	v := verdict(append([]string{"--json", "--junit", junit}, files[2], files[0], files[1])...)
	if v.code != whole.code {
		t.Fatalf("verdict exit %d, the unsharded check %d\n%s", v.code, whole.code, v)
	}
	sum := v.summary(t)
	if sum.Verdict != whole.summary.Verdict || sum.Base != whole.summary.Base || sum.Candidate != whole.summary.Candidate ||
		sum.ConfigSHA256 != whole.summary.ConfigSHA256 || sum.Shard != nil || len(sum.Results) != len(whole.summary.Results) {
		t.Fatalf("merged summary\n%s\nunsharded\n%s", v.stdout.String(), whole.stdout)
	}
	for i, got := range sum.Results {
		w := whole.summary.Results[i]
		if got.PropertyPath != w.PropertyPath || got.Seed != w.Seed || got.Label != w.Label || got.Row != w.Row || got.Freeze != w.Freeze || got.FixtureSHA256 != w.FixtureSHA256 {
			t.Errorf("result %d: %+v, unsharded %+v", i, got, w)
		}
		if a, b := normalRecordHash(t, got.Record), normalRecordHash(t, w.Record); a != b {
			t.Errorf("result %d: the records differ beyond run ids and times: %s and %s", i, got.Record, w.Record)
		}
	}
	if _, err := os.Stat(junit); err != nil {
		t.Errorf("verdict --junit: %v", err)
	}

	// Bad sets of shards.
	fake := func(name string, change func(s *flakegate.Summary)) string {
		raw, err := os.ReadFile(files[1])
		if err != nil {
			t.Fatal(err)
		}
		var s flakegate.Summary
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatal(err)
		}
		change(&s)
		b, err := json.Marshal(&s)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	type testCase struct {
		name  string
		files []string
		want  string
	}
	for _, tc := range []testCase{
		{"missing shard", files[:2], "shard 3/3 missing"},
		{"doubled shard", []string{files[0], files[1], files[2], files[1]}, "shard 2/3 is given twice"},
		{"doubled triples", []string{files[0], files[1], fake("s3.json", func(s *flakegate.Summary) { s.Shard.Index = 3 })}, "is doubled"},
		{"missing triple", []string{files[0], files[1], fake("s3.json", func(s *flakegate.Summary) {
			s.Shard.Index, s.Shard.Positions, s.Results = 3, []int{}, []flakegate.Result{}
		})}, "are missing"},
		{"another base", []string{files[0], fake("s2.json", func(s *flakegate.Summary) { s.Base = strings.Repeat("0", 40) }), files[2]}, "disagree on the base"},
		{"another candidate", []string{files[0], fake("s2.json", func(s *flakegate.Summary) { s.Candidate = strings.Repeat("0", 40) }), files[2]}, "disagree on the candidate"},
		{"another config", []string{files[0], fake("s2.json", func(s *flakegate.Summary) { s.ConfigSHA256 = strings.Repeat("0", 64) }), files[2]}, "disagree on the config digest"},
		{"not a shard", []string{files[0], fake("s2.json", func(s *flakegate.Summary) { s.Shard = nil }), files[2]}, "is not the summary of a shard"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "junit.xml")
			p := verdict(append([]string{"--json", "--junit", out}, tc.files...)...)
			if p.code != 2 || !strings.Contains(p.stderr.String(), tc.want) || !strings.Contains(p.stderr.String(), "Try:") || p.stdout.Len() > 0 {
				t.Fatalf("want exit 2 saying %q\n%s", tc.want, p)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("a refused verdict wrote its JUnit file: %v", err)
			}
		})
	}
}
