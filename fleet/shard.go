package fleet

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/flakegate/flakegate"
)

// ShardSpec is check --shard I/N: run only shard Index of Count.
type ShardSpec struct {
	Index, Count int
}

// MaxShards bounds N of --shard I/N.
const MaxShards = 1000

// ParseShard reads "I/N" (1 <= I <= N).
func ParseShard(s string) (ShardSpec, error) {
	bad := func(msg string) (ShardSpec, error) {
		return ShardSpec{}, &flakegate.Error{Code: flakegate.EINVALID, Op: "check --shard", Path: s, Message: msg,
			Hint: "pass --shard I/N with 1 <= I <= N, e.g. --shard 2/4 for the second of four runners"}
	}
	i, n, ok := strings.Cut(s, "/")
	if !ok {
		return bad("want I/N")
	}
	idx, err1 := strconv.Atoi(i)
	cnt, err2 := strconv.Atoi(n)
	switch {
	case err1 != nil || err2 != nil:
		return bad("I and N must be integers")
	case cnt < 1 || cnt > MaxShards:
		return bad(fmt.Sprintf("N must be between 1 and %d", MaxShards))
	case idx < 1 || idx > cnt:
		return bad("I must be between 1 and N")
	}
	return ShardSpec{Index: idx, Count: cnt}, nil
}

// Shard picks the triples of shard spec.Index of spec.Count (check
// --shard I/N): the triples, named by their ids (flakegate.TripleID) in
// config order, are cut into Count shards balanced by the durations of
// earlier records in records from other candidates than candSHA
// (partition). It returns the positions of the shard's triples and the
// shard's place in the whole, for the summary.
func Shard(ctx context.Context, records flakegate.RecordStore, candSHA string, ids []string, spec ShardSpec) ([]int, *flakegate.Shard, error) {
	hist, err := durations(ctx, records, candSHA)
	if err != nil {
		return nil, nil, err
	}
	weights := make([]float64, len(ids))
	for i, id := range ids {
		weights[i] = hist[id]
	}
	assign := partition(ids, weights, spec.Count)
	info := &flakegate.Shard{Index: spec.Index, Count: spec.Count, Triples: len(ids), Positions: []int{},
		PartitionSHA256: partitionSHA256(ids, assign)}
	for i, s := range assign {
		if s == spec.Index-1 {
			info.Positions = append(info.Positions, i)
		}
	}
	return info.Positions, info, nil
}

// durations returns, per triple id, the median wall time of the stored
// records of that triple from other candidates than candSHA (the records
// of this candidate are left out, so shards of one check that start at
// different times read the same history). Durations are rounded to a
// tenth of a second: small differences in history do not move triples
// around.
func durations(ctx context.Context, records flakegate.RecordStore, candSHA string) (map[string]float64, error) {
	seen := map[string][]float64{}
	err := records.EachRecord(ctx, func(_ string, raw []byte) error {
		var r struct {
			PropertyPath string         `json:"property_path"`
			Name         string         `json:"name"`
			Seed         flakegate.Seed `json:"seed"`
			CandidateSHA string         `json:"candidate_sha"`
			Attempts     []struct {
				WallSeconds float64 `json:"wall_seconds"`
			} `json:"attempts"`
		}
		if json.Unmarshal(raw, &r) != nil || r.PropertyPath == "" || !r.Seed.Valid() || r.CandidateSHA == candSHA || len(r.Attempts) == 0 {
			return nil
		}
		total := 0.0
		for _, a := range r.Attempts {
			total += a.WallSeconds
		}
		id := flakegate.TripleID(r.PropertyPath, r.Name, r.Seed)
		seen[id] = append(seen[id], total)
		return nil
	})
	if err != nil {
		return nil, flakegate.StoreError("read earlier records for the shard balance", err)
	}
	out := make(map[string]float64, len(seen))
	for id, ds := range seen {
		sort.Float64s(ds)
		out[id] = math.Round(ds[len(ds)/2]*10) / 10
	}
	return out, nil
}

// partition assigns each triple (by position) a shard 0..n-1: longest
// first, each to the shard with the least total so far (ties: the lower
// shard), in an order fixed by the triple ids, so every runner given the
// same ids and weights computes the same cut. A triple without history
// weighs the median of those with one (1 when none has): without any
// history the shards differ by at most one triple.
func partition(ids []string, weights []float64, n int) []int {
	var known []float64
	for _, w := range weights {
		if w > 0 {
			known = append(known, w)
		}
	}
	fill := 1.0
	if len(known) > 0 {
		sort.Float64s(known)
		fill = known[len(known)/2]
	}
	w := make([]float64, len(weights))
	order := make([]int, len(ids))
	for i := range ids {
		order[i] = i
		w[i] = weights[i]
		if w[i] <= 0 {
			w[i] = fill
		}
	}
	sort.SliceStable(order, func(a, b int) bool {
		i, j := order[a], order[b]
		if w[i] != w[j] {
			return w[i] > w[j]
		}
		return ids[i] < ids[j]
	})
	load := make([]float64, n)
	assign := make([]int, len(ids))
	for _, i := range order {
		best := 0
		for s := 1; s < n; s++ {
			if load[s] < load[best] {
				best = s
			}
		}
		assign[i] = best
		load[best] += w[i]
	}
	return assign
}

// partitionSHA256 digests the cut: every triple id with its shard.
func partitionSHA256(ids []string, assign []int) string {
	h := sha256.New()
	for i, id := range ids {
		fmt.Fprintf(h, "%d %s\n", assign[i], id)
	}
	return hex.EncodeToString(h.Sum(nil))
}
