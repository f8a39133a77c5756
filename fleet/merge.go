package fleet

import (
	"fmt"
	"sort"
	"strings"

	"github.com/flakegate/flakegate"
)

// MergeShards merges the summaries of the shards of one check (check
// --shard I/N, one per shard, in any order; names are their file names
// for messages) into the summary the unsharded check gives: results in
// config order, the verdict of them all. Shards that disagree on the
// base, the candidate, the config digest or the cut, a shard missing or
// given twice, and a triple missing or doubled are EINVALID.
func MergeShards(sums []*flakegate.Summary, names []string) (*flakegate.Summary, error) {
	bad := func(format string, args ...any) error {
		return &flakegate.Error{Code: flakegate.EINVALID, Op: "verdict", Message: fmt.Sprintf(format, args...),
			Hint: "pass the summary of every shard of one check once (the summary.json or --json output of each 'check --shard I/N')"}
	}
	if len(sums) == 0 {
		return nil, bad("no shard summaries given")
	}
	first := sums[0]
	for i, s := range sums {
		if s.Shard == nil {
			return nil, bad("%s is not the summary of a shard (no \"shard\" object)", names[i])
		}
		sh := s.Shard
		switch {
		case s.Base != first.Base:
			return nil, bad("the shards disagree on the base: %s has %s, %s has %s", names[0], first.Base, names[i], s.Base)
		case s.Candidate != first.Candidate:
			return nil, bad("the shards disagree on the candidate: %s has %s, %s has %s", names[0], first.Candidate, names[i], s.Candidate)
		case s.ConfigSHA256 != first.ConfigSHA256:
			return nil, bad("the shards disagree on the config digest: %s has %s, %s has %s", names[0], first.ConfigSHA256, names[i], s.ConfigSHA256)
		case sh.Count != first.Shard.Count || sh.Triples != first.Shard.Triples:
			return nil, bad("the shards disagree on the cut: %s is shard %d/%d of %d triples, %s is %d/%d of %d",
				names[0], first.Shard.Index, first.Shard.Count, first.Shard.Triples, names[i], sh.Index, sh.Count, sh.Triples)
		case sh.PartitionSHA256 != first.Shard.PartitionSHA256 && (hasDrawn(first) || hasDrawn(s)):
			return nil, &flakegate.Error{Code: flakegate.EINVALID, Op: "verdict",
				Message: fmt.Sprintf("%s and %s were cut from different triples or duration histories (partition %s vs %s); drawn seeds (random_seeds) differ from store to store, so shards checked on different stores cut different triples",
					names[0], names[i], flakegate.ShortSHA(first.Shard.PartitionSHA256), flakegate.ShortSHA(sh.PartitionSHA256)),
				Hint: "drawn seeds are keyed by the store's secret: run every shard against one store (--ledger postgres://..., or one ledger folder they all reach), then merge the new summaries"}
		case sh.PartitionSHA256 != first.Shard.PartitionSHA256:
			return nil, bad("%s and %s were cut from different duration histories (partition %s vs %s): their triples overlap or leave gaps",
				names[0], names[i], flakegate.ShortSHA(first.Shard.PartitionSHA256), flakegate.ShortSHA(sh.PartitionSHA256))
		case len(sh.Positions) != len(s.Results):
			return nil, bad("%s lists %d positions for %d results", names[i], len(sh.Positions), len(s.Results))
		}
	}
	count, total := first.Shard.Count, first.Shard.Triples
	byIndex := map[int]string{}
	for i, s := range sums {
		if prev, ok := byIndex[s.Shard.Index]; ok {
			return nil, bad("shard %d/%d is given twice: %s and %s", s.Shard.Index, count, prev, names[i])
		}
		byIndex[s.Shard.Index] = names[i]
	}
	var missing []string
	for i := 1; i <= count; i++ {
		if _, ok := byIndex[i]; !ok {
			missing = append(missing, fmt.Sprintf("%d/%d", i, count))
		}
	}
	if len(missing) > 0 {
		return nil, bad("shard %s missing", strings.Join(missing, ", "))
	}
	results := make([]*flakegate.Result, total)
	from := make([]string, total)
	ids := map[string]string{}
	for i, s := range sums {
		for k, pos := range s.Shard.Positions {
			r := s.Results[k]
			if pos < 0 || pos >= total {
				return nil, bad("%s: position %d is outside the check's %d triples", names[i], pos, total)
			}
			if results[pos] != nil {
				return nil, bad("triple %d (%s seed %s) is doubled: in %s and %s", pos, r.PropertyPath, r.Seed, from[pos], names[i])
			}
			id := resultID(&r)
			if prev, ok := ids[id]; ok {
				return nil, bad("%s seed %s is doubled: in %s and %s", r.PropertyPath, r.Seed, prev, names[i])
			}
			ids[id] = names[i]
			results[pos], from[pos] = &r, names[i]
		}
	}
	var gaps []int
	for pos, r := range results {
		if r == nil {
			gaps = append(gaps, pos)
		}
	}
	if len(gaps) > 0 {
		sort.Ints(gaps)
		return nil, bad("%d of %d triples are missing (positions %v)", len(gaps), total, gaps)
	}
	out := &flakegate.Summary{Base: first.Base, Candidate: first.Candidate, ConfigSHA256: first.ConfigSHA256,
		Results: make([]flakegate.Result, total)}
	for i, r := range results {
		out.Results[i] = *r
	}
	for _, s := range sums {
		out.RejectNewFlakes = out.RejectNewFlakes || s.RejectNewFlakes
		out.RejectFlakyNewTests = out.RejectFlakyNewTests || s.RejectFlakyNewTests
		out.NewTests = append(out.NewTests, s.NewTests...) // only shard 1 runs them
	}
	out.SetVerdict()
	return out, nil
}

// hasDrawn reports whether a summary has a result of a drawn or corpus
// seed (both depend on the store).
func hasDrawn(s *flakegate.Summary) bool {
	for i := range s.Results {
		if o := s.Results[i].SeedOrigin; o == flakegate.SeedDrawn || o == flakegate.SeedCorpus {
			return true
		}
	}
	return false
}

// resultID is the identity of a summary line (flakegate.TripleID).
func resultID(r *flakegate.Result) string {
	return flakegate.TripleID(r.PropertyPath, r.Name, r.Seed)
}
