package check

import (
	"context"
	"testing"
	"time"

	sitepkg "github.com/flakegate/flakegate/site"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/batch"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/filestore"
)

// interruptingStore ends the check (cancel) when a check asks for the
// replay lock of key, as a signal arriving while a batch waits for it
// would.
type interruptingStore struct {
	flakegate.Store
	key    string
	cancel context.CancelFunc
}

func (s *interruptingStore) LockReplay(ctx context.Context, key string) (func(), error) {
	if key == s.key {
		s.cancel()
		return nil, ctx.Err()
	}
	return s.Store.LockReplay(ctx, key)
}

// failingRunner fails every attempt it is asked for, in no process.
type failingRunner struct{}

func (failingRunner) Attempt(_ context.Context, a batch.Attempt) (batch.Results, error) {
	res := batch.Results{Of: map[*batch.Member]batch.Outcome{}}
	for _, m := range a.Members {
		if a.Takes(m) {
			res.Of[m] = batch.Outcome{Result: attempt.Fail}
		}
	}
	return res, nil
}

func (failingRunner) Note(*batch.Member, string, int, string, string) {}
func (failingRunner) BaseKnown(*batch.Member)                         {}

// TestBatchBasesInterruptedAtTheLock: a batch interrupted while it takes
// its members' replay locks, after the first member's base was read from
// the cache, leaves every member's base not_run, none of them from the
// cache: a record never says base_seed_result "not_run" with
// base_from_cache true, and the summary counts no base attempt.
func TestBatchBasesInterruptedAtTheLock(t *testing.T) {
	st, err := filestore.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := &checker{site: site{progress: discardProgress{}, baseSHA: "b"}, candSHA: "c", now: time.Now}
	c.cfg, c.iso = &config.Config{RetryCap: 2}, &sitepkg.Isolation{Mode: sitepkg.IsolationBwrap}
	var members []*batchMember
	for _, name := range []string{"TestA", "TestB"} {
		ps := &propState{prop: &config.Property{Path: "p_test.go", Name: name, WallBudget: time.Minute}}
		r := &tripleRun{c: c, j: &job{ps: ps, seed: "1"}, argv: []string{"go", "test", "-run", name},
			t: transcriptRun{Tally: batch.Tally{BudgetOK: true, Complete: true, Retries: []string{}}}}
		members = append(members, &batchMember{r: r})
	}
	first, second := members[0], members[1]
	if first.r.replayKey("go batch") > second.r.replayKey("go batch") {
		first, second = second, first
	}
	// The first key in lock order has a stored base result; the check is
	// interrupted while it waits for the second key's lock.
	if _, err := st.PutReplay(ctx, first.r.replayKey("go batch"), flakegate.BaseReplay{Result: "pass", RunID: "earlier", At: time.Now().UTC()}); err != nil {
		t.Fatal(err)
	}
	c.store = &interruptingStore{Store: st, key: second.r.replayKey("go batch"), cancel: cancel}
	runs := map[*batch.Member]*tripleRun{}
	var drive []*batch.Member
	for _, m := range members {
		m.m = m.r.member("go batch")
		runs[m.m] = m.r
		drive = append(drive, m.m)
	}
	if err := c.driver(failingRunner{}, runs).Drive(ctx, drive); err != nil {
		t.Fatalf("Drive: %v (an interrupted lock wait is not an error)", err)
	}
	for _, m := range members {
		if m.r.t.Base != notRun || m.r.t.FromCache {
			t.Errorf("%s: base %q from_cache %v, want %q from_cache false", m.r.j.ps.prop.Name, m.r.t.Base, m.r.t.FromCache, notRun)
		}
		if _, base := m.r.attemptCounts(); base != 0 {
			t.Errorf("%s: %d base attempts counted, want 0 (none ran, none was read)", m.r.j.ps.prop.Name, base)
		}
	}
}
