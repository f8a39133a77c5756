package postgres

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/internal/pgtest"
)

// TestQueueClaimGroup: ClaimGroup claims the first claimable triple and
// the claimable triples of its group in one transaction, each under a
// token of its own; a triple another runner holds is skipped. Runners
// claiming at once never cut a group: every group is claimed whole by
// one of them. Expired leases of a group are taken over together, each
// counting its expiry, and the old tokens can no longer renew.
func TestQueueClaimGroup(t *testing.T) {
	dsn := pgtest.DSN(t)
	s := openDSN(t, dsn)
	// 12 triples in 4 groups of neighbours: a plain claim at the wrong
	// moment would take the second triple of the group being claimed.
	c, ts := queuedCheck("groups", 12)
	if _, err := s.Enqueue(ctx, c, ts); err != nil {
		t.Fatal(err)
	}
	group := func(pos int) []int {
		first := pos / 3 * 3
		return []int{first, first + 1, first + 2}
	}
	// The claim asks for the group in the middle of its transaction:
	// slow, so that the runners' claims overlap.
	slowGroup := func(pos int) []int {
		time.Sleep(100 * time.Millisecond)
		return group(pos)
	}
	r0 := flakegate.Runner{ID: "r0", Host: "h"}

	var mu sync.Mutex
	got := map[string][]int{}
	tokens := map[string]bool{}
	var wg sync.WaitGroup
	for i := 1; i <= 4; i++ {
		r := flakegate.Runner{ID: fmt.Sprintf("r%d", i), Host: "h"}
		wg.Add(1)
		go func() {
			defer wg.Done()
			ls, err := s.ClaimGroup(ctx, c.ID, r, 800*time.Millisecond, slowGroup)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			for _, l := range ls {
				got[r.ID] = append(got[r.ID], l.Position)
				if tokens[l.Token] || l.Token == "" {
					t.Errorf("token %q given twice", l.Token)
				}
				tokens[l.Token] = true
			}
		}()
	}
	wg.Wait()
	groups := map[string]bool{}
	for id, ps := range got {
		want := group(ps[0])
		if fmt.Sprint(ps) != fmt.Sprint(want) {
			t.Errorf("%s claimed %v, want its whole group %v", id, ps, want)
		}
		groups[fmt.Sprint(ps)] = true
	}
	if len(got) != 4 || len(groups) != 4 {
		t.Fatalf("four runners claimed %v, want the four groups, one each", got)
	}
	if ls, err := s.ClaimGroup(ctx, c.ID, r0, time.Minute, group); err != nil || len(ls) != 0 {
		t.Fatalf("a claim with every triple held: %+v, %v", ls, err)
	}

	// The leases expire: one runner takes a group over whole, every
	// triple counting an expiry and naming its old runner.
	time.Sleep(900 * time.Millisecond)
	ls, err := s.ClaimGroup(ctx, c.ID, r0, time.Minute, group)
	if err != nil || len(ls) != 3 || ls[0].Position != 0 || ls[2].Position != 2 {
		t.Fatalf("takeover: %+v, %v", ls, err)
	}
	old := ""
	for id, ps := range got {
		if ps[0] == 0 {
			old = id
		}
	}
	for _, l := range ls {
		if l.Expiries != 1 || len(l.Runners) != 1 || l.Runners[0] != old {
			t.Errorf("taken over %+v: want one expiry of %s", l, old)
		}
		if err := s.Renew(ctx, c.ID, l, time.Minute); err != nil {
			t.Errorf("renew of the new lease of %d: %v", l.Position, err)
		}
		if err := s.Complete(ctx, c.ID, l, result(l, flakegate.Pass, "", r0), nil); err != nil {
			t.Errorf("complete %d: %v", l.Position, err)
		}
	}
	// A group whose triples are partly done claims only the rest.
	ls, err = s.ClaimGroup(ctx, c.ID, r0, time.Minute, func(pos int) []int { return append(group(pos), 0, 2) })
	if err != nil || len(ls) != 3 || ls[0].Position != 3 || ls[1].Position != 4 || ls[2].Position != 5 {
		t.Fatalf("next group: %+v, %v", ls, err)
	}
}
