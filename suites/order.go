package suites

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"sort"
	"strings"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/config"
)

// Slot is what the order of a suite's triple needs of it.
type Slot struct {
	Seed  flakegate.Seed
	Pkg   string // go: the package's folder argument (its run's)
	Path  string // the test's file
	Name  string // the test's name
	Label string // the batch member's label (pytest: the node id)
}

// SlotOf is the slot of the triple of p (a suite's test, as Property
// makes it) for seed.
func SlotOf(p *config.Property, seed flakegate.Seed) Slot {
	sl := Slot{Seed: seed, Path: p.Path, Name: p.Name, Label: p.Path + "::" + p.Name}
	if p.Suite.Framework == config.FrameworkGo {
		sl.Pkg = p.Run[5]
	}
	return sl
}

// Less orders two triples of suite s as their batches run (go: by
// package, then name; pytest: by each seed's shuffle, Rank; vitest and
// jest: as listed, the framework shuffles them), each seed's apart:
// listed seeds first, in the suite's order, then the others by value.
// One order, for a check and for replay --suite; a stable sort keeps
// the list's order where it says neither is before the other.
func Less(s *config.Suite, a, b Slot) bool {
	if a.Seed != b.Seed {
		return seedBefore(s.Seeds, a.Seed, b.Seed)
	}
	if s.Framework == config.FrameworkGo {
		if a.Pkg != b.Pkg {
			return a.Pkg < b.Pkg
		}
		return a.Name < b.Name
	}
	if s.Framework != config.FrameworkPytest {
		return false // vitest, jest: the list's order
	}
	return Rank(a.Seed, a.Label) < Rank(b.Seed, b.Label)
}

// seedBefore orders two seeds of a suite: listed seeds first, in the
// suite's order, then the others by value.
func seedBefore(seeds []flakegate.Seed, a, b flakegate.Seed) bool {
	ia, ib := slices.Index(seeds, a), slices.Index(seeds, b)
	switch {
	case ia >= 0 && ib >= 0:
		return ia < ib
	case ia >= 0 || ib >= 0:
		return ia >= 0
	}
	return a < b
}

// RunOrder is the order suite s's triples run in: run[k] is the index
// in slots of the k-th to run (a stable sort by Less, so the slots'
// order stands where Less says neither is before the other), and
// orders[k] its order for its record (Orders; l is the base's list).
func RunOrder(s *config.Suite, l *List, slots []Slot) (run []int, orders []*flakegate.SuiteOrder) {
	run = make([]int, len(slots))
	for k := range run {
		run[k] = k
	}
	sort.SliceStable(run, func(a, b int) bool { return Less(s, slots[run[a]], slots[run[b]]) })
	ordered := make([]Slot, len(slots))
	for k, i := range run {
		ordered[k] = slots[i]
	}
	return run, Orders(s, l, ordered)
}

// Orders are the orders of suite s's triples (slots, in run order, as
// Less puts them; l is the base's list), one per slot, for their records.
func Orders(s *config.Suite, l *List, slots []Slot) []*flakegate.SuiteOrder {
	digest := func(names []string) string {
		h := sha256.Sum256([]byte(strings.Join(names, "\n")))
		return hex.EncodeToString(h[:])
	}
	files := map[string][]string{} // vitest, jest: each file's tests as listed
	for _, t := range l.Tests {
		files[t.File] = append(files[t.File], t.Name)
	}
	nodes := map[flakegate.Seed][]string{}
	for _, sl := range slots {
		nodes[sl.Seed] = append(nodes[sl.Seed], sl.Label)
	}
	orders := make([]*flakegate.SuiteOrder, len(slots))
	for i, sl := range slots {
		o := &flakegate.SuiteOrder{Framework: s.Framework, Seed: sl.Seed}
		if s.Framework == config.FrameworkGo {
			pkg := sl.Pkg
			o.Package, o.Flags = pkg, []string{"-shuffle=" + sl.Seed.String()}
			if l.Rapid[pkg] {
				o.Flags = append(o.Flags, "-rapid.seed="+sl.Seed.String())
			}
			o.Tests, o.TestsSHA256 = len(l.PkgTests[pkg]), digest(l.PkgTests[pkg])
		} else if s.Framework != config.FrameworkPytest {
			o.File, o.Flags = sl.Path, JSOrderFlags(s.Framework, sl.Seed)
			o.Tests, o.TestsSHA256 = len(files[sl.Path]), digest(files[sl.Path])
		} else {
			if l.Hypothesis {
				o.Flags = []string{"--hypothesis-seed=" + sl.Seed.String()}
			}
			o.Tests, o.TestsSHA256 = len(nodes[sl.Seed]), digest(nodes[sl.Seed])
		}
		orders[i] = o
	}
	return orders
}
