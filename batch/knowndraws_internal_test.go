package batch

import (
	"slices"
	"sync"
	"testing"

	"github.com/flakegate/flakegate/evidence"
)

// TestKnownDrawsOncePerTree: with a check's draws, every batch of a tree
// (other seeds, other members) plants the same file with the same
// nonces, so the package's test binary is the same; another tree, or no
// tree key, draws anew.
func TestKnownDrawsOncePerTree(t *testing.T) {
	dir := knownModule(t)
	var draws KnownDraws
	plant := func(tree, seed string, names ...string) *KnownSet {
		t.Helper()
		k, err := plantKnown(KnownPlan{Framework: evidence.FrameworkGo, Dir: dir, Members: goMembers(seed, names...), Seed: "3", Draws: &draws, Tree: tree})
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	same := func(a, b *KnownSet) bool {
		return len(a.files) == 1 && len(b.files) == 1 && a.files[0].Rel == b.files[0].Rel && string(a.files[0].Data) == string(b.files[0].Data) &&
			slices.EqualFunc(a.answers, b.answers, func(x, y knownAnswer) bool { return x.label == y.label && x.nonce == y.nonce && x.want == y.want })
	}
	a := plant("candidate abc", "1", "TestA", "TestC")
	if b := plant("candidate abc", "2", "TestB"); !same(a, b) {
		t.Errorf("two batches of one tree planted different answers: %+v, %+v", a.files, b.files)
	}
	if b := plant("base def", "1", "TestA", "TestC"); same(a, b) {
		t.Errorf("another tree reused the draw: %+v", b.files)
	}
	if b, c := plant("", "1", "TestA"), plant("", "1", "TestA"); same(b, c) {
		t.Errorf("without a tree key two attempts planted the same answers: %+v", b.files)
	}
}

// TestKnownDrawsConcurrent: workers planting in one tree at once get
// one draw.
func TestKnownDrawsConcurrent(t *testing.T) {
	dir := knownModule(t)
	var draws KnownDraws
	sets := make([]*KnownSet, 8)
	var wg sync.WaitGroup
	for i := range sets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k, err := plantKnown(KnownPlan{Framework: evidence.FrameworkGo, Dir: dir, Members: goMembers("1", "TestA"), Seed: "1", Draws: &draws, Tree: "candidate abc"})
			if err != nil {
				t.Error(err)
				return
			}
			sets[i] = k
		}()
	}
	wg.Wait()
	for _, k := range sets[1:] {
		if k == nil || sets[0] == nil || string(k.files[0].Data) != string(sets[0].files[0].Data) {
			t.Fatalf("concurrent plants drew twice")
		}
	}
}
