package report

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/flakegate/flakegate"
)

// memStore is an in-memory flakegate.Store for the report tests: the
// report only reads, so the write methods keep just enough to fill it.
type memStore struct {
	freezes map[string]flakegate.Freeze
	audit   [][]byte
	records map[string][]byte
	replays map[string]flakegate.BaseReplay
}

var _ flakegate.Store = (*memStore)(nil)

func newMemStore() *memStore {
	return &memStore{freezes: map[string]flakegate.Freeze{}, records: map[string][]byte{}, replays: map[string]flakegate.BaseReplay{}}
}

func (m *memStore) ListFreezes(context.Context) ([]flakegate.Freeze, error) {
	var out []flakegate.Freeze
	for _, f := range m.freezes {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Triple().Less(out[j].Triple()) })
	return out, nil
}

func (m *memStore) GetFreeze(_ context.Context, t flakegate.Triple) (flakegate.Freeze, error) {
	f, ok := m.freezes[t.Key()]
	if !ok {
		return f, flakegate.Errorf(flakegate.ENOTFOUND, "no freeze")
	}
	return f, nil
}

func (m *memStore) Grant(_ context.Context, f flakegate.Freeze, replace bool) error {
	if _, ok := m.freezes[f.Triple().Key()]; ok && !replace {
		return flakegate.Errorf(flakegate.ECONFLICT, "freeze exists")
	}
	m.freezes[f.Triple().Key()] = f
	m.event(flakegate.AuditEvent{Action: flakegate.ActionGrant, At: f.GrantedAt, By: f.GrantedBy, Triple: f.Triple(), RunsLeft: f.ExpiresAfterRuns, Freeze: &f})
	return nil
}

func (m *memStore) Consume(_ context.Context, t flakegate.Triple, sha, by string) (int, error) {
	f, ok := m.freezes[t.Key()]
	if !ok || f.RecordSHA256 != sha || f.ExpiresAfterRuns <= 0 {
		return 0, flakegate.Errorf(flakegate.ENOTFOUND, "no freeze to consume")
	}
	f.ExpiresAfterRuns--
	m.freezes[t.Key()] = f
	return f.ExpiresAfterRuns, nil
}

func (m *memStore) Remove(_ context.Context, t flakegate.Triple, action flakegate.AuditAction, by, reason string) error {
	if _, ok := m.freezes[t.Key()]; !ok {
		return flakegate.Errorf(flakegate.ENOTFOUND, "no freeze")
	}
	delete(m.freezes, t.Key())
	m.event(flakegate.AuditEvent{Action: action, By: by, Triple: t, Reason: reason})
	return nil
}

func (m *memStore) event(ev flakegate.AuditEvent) {
	b, _ := json.Marshal(ev)
	m.audit = append(m.audit, b)
}

func (m *memStore) AuditLines(context.Context) ([][]byte, error) { return m.audit, nil }

func (m *memStore) PutRecord(_ context.Context, sha string, raw []byte) error {
	if _, ok := m.records[sha]; !ok {
		m.records[sha] = raw
	}
	return nil
}

func (m *memStore) GetRecord(_ context.Context, sha string) ([]byte, error) {
	raw, ok := m.records[sha]
	if !ok {
		return nil, flakegate.Errorf(flakegate.ENOTFOUND, "no record")
	}
	return raw, nil
}

func (m *memStore) EachRecord(_ context.Context, fn func(string, []byte) error) error {
	for sha, raw := range m.records {
		if err := fn(sha, raw); err != nil {
			return err
		}
	}
	return nil
}

func (m *memStore) GetReplay(_ context.Context, key string) (flakegate.BaseReplay, bool, error) {
	r, ok := m.replays[key]
	return r, ok, nil
}

// LockReplay is a no-op: the report only reads.
func (m *memStore) LockReplay(context.Context, string) (func(), error) { return func() {}, nil }

func (m *memStore) PutReplay(_ context.Context, key string, r flakegate.BaseReplay) (flakegate.BaseReplay, error) {
	if old, ok := m.replays[key]; ok {
		return old, nil
	}
	m.replays[key] = r
	return r, nil
}

// SeedSecret is a fixed secret: the report never draws seeds.
func (m *memStore) SeedSecret(context.Context) ([]byte, error) {
	return []byte("report tests: not a real secret."), nil
}

func (m *memStore) Close() error { return nil }

const testFixture = "9f2c1e4b7a0d3c5e8f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f70"

// makeRecord builds a record that the decision table labels want, with one
// attempt started at at. The first record of each label is checked with
// flakegate.ClassifyBytes; the rest differ only in path, seed and times.
// The store is keyed by a stand-in digest (the report never checks it).
func makeRecord(t testing.TB, path string, seed int, want flakegate.Label, at time.Time, run int) (sha string, raw []byte) {
	t.Helper()
	env := &flakegate.Env{Workers: 1, ClockBudgetS: 60, Filesystem: "ext4"}
	r := flakegate.RunRecord{
		Schema: "flakegate.run/v1", RunID: fmt.Sprintf("run-%d", run), Seed: flakegate.Seed(strconv.Itoa(seed)),
		PropertyPath: path, PropertySHA256: testFixture, FixtureSHA256: testFixture, BaseFixtureSHA256: testFixture,
		DiffPaths: []string{"src/app.py"}, CandidateResult: "fail", BaseSeedResult: "pass",
		RetryResults: []string{"fail", "fail"}, RetryCap: 2, BudgetOK: true, TranscriptComplete: true,
		CandidateEnv: env, BaseEnv: env,
		Attempts: []flakegate.Attempt{{Side: "candidate", Result: "fail", ExitCode: 1, StartedAt: at, WallSeconds: 1.5}},
	}
	switch want {
	case flakegate.Pass:
		r.CandidateResult, r.RetryResults = "pass", []string{}
	case flakegate.Scheduler:
		r.RetryResults = []string{"fail", "pass"}
	case flakegate.Property:
		r.BaseSeedResult = "fail"
	case flakegate.Fixture:
		r.BaseFixtureSHA256 = "0" + testFixture[1:]
	case flakegate.Budget:
		r.BudgetOK = false
	case flakegate.Contaminated:
		r.DiffPaths = append(r.DiffPaths, path)
	case flakegate.Incomplete:
		r.TranscriptComplete = false
	}
	raw, err := r.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if _, done := checkedLabels.LoadOrStore(want, true); !done {
		if d := flakegate.ClassifyBytes(raw); d.Label != want {
			t.Fatalf("fixture record for %s is %s (%s)", want, d.Label, d.Reason)
		}
	}
	return fmt.Sprintf("%x", sha256.Sum256(raw)), raw
}

var checkedLabels sync.Map

// bigStore fills a store the way a busy repository would: records over
// many properties and seeds, freezes with runs used up, and an audit log
// with voids and expiries. The same seed gives the same store.
func bigStore(t testing.TB, records, freezes, removed int) *memStore {
	t.Helper()
	m := newMemStore()
	rng := rand.New(rand.NewPCG(7, 1402))
	start := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	props := []string{"tests/props/test_retry_budget.py", "tests/props/test_parser.py", "tests/props/test_cache.py",
		"tests/props/test_scheduler_fairness.py", "tests/props/test_merge_queue.py", "tests/props/storage/test_wal_replay.py",
		"tests/props/storage/test_compaction.py", "tests/props/net/test_backoff.py", "tests/props/net/test_dns_cache.py",
		"tests/props/test_json_roundtrip.py", "tests/props/very/deeply/nested/package/path/test_long_name_property.py"}
	weights := []struct {
		l flakegate.Label
		w int
	}{{flakegate.Pass, 70}, {flakegate.Scheduler, 9}, {flakegate.Property, 7}, {flakegate.Fixture, 3},
		{flakegate.Budget, 5}, {flakegate.Contaminated, 3}, {flakegate.Incomplete, 3}}
	for i := range records {
		p := props[rng.IntN(len(props))]
		n := rng.IntN(100)
		l := flakegate.Pass
		for _, w := range weights {
			if n < w.w {
				l = w.l
				break
			}
			n -= w.w
		}
		at := start.Add(time.Duration(i) * 17 * time.Minute)
		sha, raw := makeRecord(t, p, 1400+rng.IntN(12), l, at, i)
		m.PutRecord(context.Background(), sha, raw)
	}
	owners := []string{"alice@example.com", "bob@example.com", "ci-bot", "carol@example.com"}
	for i := range freezes + removed {
		runs := 5 + rng.IntN(16)
		f := flakegate.Freeze{
			Label: flakegate.Scheduler, PropertyPath: props[i%len(props)], Seed: flakegate.Seed(strconv.Itoa(2000 + i)),
			FixtureSHA256: testFixture, ExpiresAfterRuns: runs, Owner: owners[i%len(owners)],
			RecordSHA256: fmt.Sprintf("%x", sha256.Sum256([]byte(strconv.Itoa(i)))), PropertySHA256: testFixture,
			GrantedAt: start.Add(time.Duration(i) * time.Hour), GrantedBy: owners[(i+1)%len(owners)],
		}
		m.Grant(context.Background(), f, false)
		m.freezes[f.Triple().Key()] = withRuns(f, rng.IntN(runs)+1)
		if i >= freezes {
			ev := flakegate.AuditEvent{At: start.Add(time.Duration(i)*time.Hour + 30*time.Minute), By: "flakegate check", Triple: f.Triple()}
			if i%3 == 0 {
				ev.Action, ev.Reason = flakegate.ActionVoid, "the check failed: PROPERTY on the candidate"
			} else {
				ev.Action, ev.Reason = flakegate.ActionExpire, "no runs left"
			}
			delete(m.freezes, f.Triple().Key())
			m.event(ev)
		}
	}
	return m
}

func withRuns(f flakegate.Freeze, n int) flakegate.Freeze {
	f.ExpiresAfterRuns = n
	return f
}

// The report reads no failure corpus.
func (m *memStore) AddFailure(context.Context, string, flakegate.CorpusEntry) (flakegate.CorpusAdd, error) {
	return flakegate.CorpusAdded, nil
}

func (m *memStore) CorpusBase(context.Context, string) (int, error) { return 0, nil }

func (m *memStore) Failures(context.Context, string) ([]flakegate.CorpusEntry, error) {
	return nil, nil
}
