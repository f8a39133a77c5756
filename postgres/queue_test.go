package postgres

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/internal/pgtest"
	"github.com/flakegate/flakegate/storetest"
)

// queuedCheck returns a check of n triples of one property.
func queuedCheck(id string, n int) (flakegate.QueuedCheck, []flakegate.QueuedTriple) {
	ts := make([]flakegate.QueuedTriple, n)
	for i := range ts {
		seed := flakegate.Seed(fmt.Sprint(100 + i))
		ts[i] = flakegate.QueuedTriple{ID: flakegate.TripleID("props/p.sh", "", seed), Position: i, PropertyPath: "props/p.sh", Seed: seed}
	}
	c := flakegate.QueuedCheck{ID: id, BaseSHA: strings.Repeat("b", 40), CandidateSHA: strings.Repeat("c", 40),
		ConfigSHA256: storetest.Sha('f'), TriplesSHA256: flakegate.QueuedTriplesSHA256(ts), MaxLeaseExpiries: 2, CreatedBy: "r1"}
	return c, ts
}

func result(l flakegate.TripleLease, label flakegate.Label, sha string, r flakegate.Runner) flakegate.Result {
	return flakegate.Result{PropertyPath: "props/p.sh", Seed: flakegate.Seed(fmt.Sprint(100 + l.Position)), Label: label,
		RecordSHA256: sha, RunnerID: r.ID, RunnerHost: r.Host}
}

// queueRows is every column of the queue tables, as text, to compare.
func queueRows(t *testing.T, dsn string) string {
	t.Helper()
	var out string
	for _, sql := range []string{
		`SELECT coalesce(string_agg(c::text, E'\n' ORDER BY check_id), '') FROM flakegate.checks c`,
		`SELECT coalesce(string_agg(t::text, E'\n' ORDER BY check_id, position), '') FROM flakegate.check_triples t`,
	} {
		conn := openDSN(t, dsn).pool
		var s string
		if err := conn.QueryRow(ctx, sql).Scan(&s); err != nil {
			t.Fatal(err)
		}
		out += s + "\n"
	}
	return out
}

// TestQueueEnqueue: the first runner creates the check, the next ones
// find the same check; one with another base, candidate, config, triple
// list or K is EINVALID naming the difference, and nothing changes.
func TestQueueEnqueue(t *testing.T) {
	dsn := pgtest.DSN(t)
	s := openDSN(t, dsn)
	c, ts := queuedCheck("ci-1", 5)
	created, err := s.Enqueue(ctx, c, ts)
	if err != nil || !created {
		t.Fatalf("first Enqueue: created %v, %v", created, err)
	}
	created, err = s.Enqueue(ctx, c, ts)
	if err != nil || created {
		t.Fatalf("second Enqueue: created %v, %v", created, err)
	}
	before := queueRows(t, dsn)
	type testCase struct {
		name   string
		change func(*flakegate.QueuedCheck, *[]flakegate.QueuedTriple)
		want   string
	}
	for _, tc := range []testCase{
		{"another base", func(c *flakegate.QueuedCheck, _ *[]flakegate.QueuedTriple) { c.BaseSHA = strings.Repeat("d", 40) }, "base"},
		{"another candidate", func(c *flakegate.QueuedCheck, _ *[]flakegate.QueuedTriple) { c.CandidateSHA = strings.Repeat("e", 40) }, "candidate"},
		{"another config", func(c *flakegate.QueuedCheck, _ *[]flakegate.QueuedTriple) { c.ConfigSHA256 = storetest.Sha('0') }, "config digest"},
		{"another K", func(c *flakegate.QueuedCheck, _ *[]flakegate.QueuedTriple) { c.MaxLeaseExpiries = 5 }, "--max-lease-expiries"},
		{"fewer triples", func(c *flakegate.QueuedCheck, ts *[]flakegate.QueuedTriple) {
			*ts = (*ts)[:4]
			c.TriplesSHA256 = flakegate.QueuedTriplesSHA256(*ts)
		}, "4 triples"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c2, ts2 := c, append([]flakegate.QueuedTriple(nil), ts...)
			tc.change(&c2, &ts2)
			_, err := s.Enqueue(ctx, c2, ts2)
			wantCode(t, "Enqueue", err, flakegate.EINVALID)
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "nothing was changed") {
				t.Errorf("error %q does not name %q", err, tc.want)
			}
			if after := queueRows(t, dsn); after != before {
				t.Errorf("a refused Enqueue changed the queue\nbefore:\n%s\nafter:\n%s", before, after)
			}
		})
	}
	_, _, err = s.CheckState(ctx, "no-such-check")
	wantCode(t, "CheckState of an unknown id", err, flakegate.ENOTFOUND)
	_, err = s.Progress(ctx, "no-such-check")
	wantCode(t, "Progress of an unknown id", err, flakegate.ENOTFOUND)
}

// TestQueueClaimOnce: many runners claim and label the triples of one
// check at once; every triple is claimed and labelled exactly once.
func TestQueueClaimOnce(t *testing.T) {
	s := openStore(t)
	c, ts := queuedCheck("ci-2", 60)
	if _, err := s.Enqueue(ctx, c, ts); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	labelled := map[string]string{}
	var wg sync.WaitGroup
	for r := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runner := flakegate.Runner{ID: fmt.Sprintf("r%d", r), Host: "h"}
			for {
				l, ok, err := s.Claim(ctx, c.ID, runner, time.Minute)
				if err != nil {
					t.Error(err)
					return
				}
				if !ok {
					return
				}
				sha := storetest.Sha('a' + byte(l.Position%6))
				if err := s.Complete(ctx, c.ID, l, result(l, flakegate.Pass, sha, runner), []byte(`{}`)); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				if prev, ok := labelled[l.TripleID]; ok {
					t.Errorf("%s labelled by %s and %s", l.TripleID, prev, runner.ID)
				}
				labelled[l.TripleID] = runner.ID
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(labelled) != len(ts) {
		t.Fatalf("%d triples labelled, want %d", len(labelled), len(ts))
	}
	_, states, err := s.CheckState(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range states {
		var r flakegate.Result
		if st.State != flakegate.TripleDone || json.Unmarshal(st.Result, &r) != nil || r.RunnerID != labelled[st.ID] || st.Runner.ID != r.RunnerID {
			t.Errorf("triple %s: state %s, result %s, runner %s; labelled by %s", st.ID, st.State, st.Result, st.Runner.ID, labelled[st.ID])
		}
	}
	ps, err := s.Progress(ctx, c.ID)
	if err != nil || len(ps) != 1 || !ps[0].Finished() || ps[0].Done != 60 {
		t.Fatalf("Progress: %+v, %v", ps, err)
	}
	if _, ok, err := s.Claim(ctx, c.ID, flakegate.Runner{ID: "late"}, time.Minute); ok || err != nil {
		t.Fatalf("Claim after the end: ok %v, %v", ok, err)
	}
}

// TestQueueLease: a lease that is not renewed expires; another runner
// takes the triple over (an expiry counted, naming the runner), and the
// first runner can neither renew nor label it any more. A labelled triple
// cannot be changed, whatever the role may do.
func TestQueueLease(t *testing.T) {
	dsn := pgtest.DSN(t)
	s := openDSN(t, dsn)
	c, ts := queuedCheck("ci-3", 1)
	if _, err := s.Enqueue(ctx, c, ts); err != nil {
		t.Fatal(err)
	}
	r1, r2 := flakegate.Runner{ID: "r1", Host: "h1"}, flakegate.Runner{ID: "r2", Host: "h2"}
	l1, ok, err := s.Claim(ctx, c.ID, r1, 300*time.Millisecond)
	if err != nil || !ok || l1.Expiries != 0 {
		t.Fatalf("Claim: %+v %v %v", l1, ok, err)
	}
	if err := s.Renew(ctx, c.ID, l1, 300*time.Millisecond); err != nil {
		t.Fatalf("Renew of a live lease: %v", err)
	}
	if _, ok, _ := s.Claim(ctx, c.ID, r2, time.Minute); ok {
		t.Fatal("a live lease was taken over")
	}
	time.Sleep(400 * time.Millisecond) // the lease ends by the server's clock
	l2, ok, err := s.Claim(ctx, c.ID, r2, time.Minute)
	if err != nil || !ok || l2.Expiries != 1 || len(l2.Runners) != 1 || l2.Runners[0] != "r1" {
		t.Fatalf("takeover: %+v %v %v", l2, ok, err)
	}
	wantCode(t, "Renew by the old holder", s.Renew(ctx, c.ID, l1, time.Minute), flakegate.ECONFLICT)
	wantCode(t, "Complete by the old holder", s.Complete(ctx, c.ID, l1, result(l1, flakegate.Pass, storetest.Sha('1'), r1), []byte(`{"r":1}`)), flakegate.ECONFLICT)
	if err := s.Complete(ctx, c.ID, l2, result(l2, flakegate.Property, storetest.Sha('2'), r2), []byte(`{"r":2}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetRecord(ctx, storetest.Sha('1')); flakegate.ErrorCode(err) != flakegate.ENOTFOUND {
		t.Errorf("the refused label stored its record: %v", err)
	}
	if raw, err := s.GetRecord(ctx, storetest.Sha('2')); err != nil || string(raw) != `{"r":2}` {
		t.Errorf("the label's record: %q, %v", raw, err)
	}
	wantCode(t, "Complete twice", s.Complete(ctx, c.ID, l2, result(l2, flakegate.Pass, storetest.Sha('3'), r2), nil), flakegate.ECONFLICT)
	for _, sql := range []string{
		`UPDATE flakegate.check_triples SET label = 'PASS'`,
		`DELETE FROM flakegate.check_triples`,
	} {
		if err := exec(t, dsn, sql); err == nil || !strings.Contains(err.Error(), "labelled already") {
			t.Errorf("%s: %v, want refused", sql, err)
		}
	}
	_, states, err := s.CheckState(ctx, c.ID)
	if err != nil || len(states) != 1 || states[0].Runner.ID != "r2" || states[0].Expiries != 1 || !strings.Contains(string(states[0].Result), `"PROPERTY"`) {
		t.Fatalf("CheckState: %+v, %v", states, err)
	}
}

// BenchmarkQueueClaimComplete is the queue's own cost per triple: one
// claim and one label (with its record) on a local PostgreSQL.
func BenchmarkQueueClaimComplete(b *testing.B) {
	s := openStore(b)
	c, ts := queuedCheck("bench", b.N)
	if _, err := s.Enqueue(ctx, c, ts); err != nil {
		b.Fatal(err)
	}
	r := flakegate.Runner{ID: "bench", Host: "h"}
	raw := []byte(strings.Repeat("x", 1500))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		l, ok, err := s.Claim(ctx, c.ID, r, time.Minute)
		if err != nil || !ok {
			b.Fatalf("Claim: %v %v", ok, err)
		}
		sha := fmt.Sprintf("%064x", i)
		if err := s.Complete(ctx, c.ID, l, result(l, flakegate.Pass, sha, r), raw); err != nil {
			b.Fatal(err)
		}
	}
}
