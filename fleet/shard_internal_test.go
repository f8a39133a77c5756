package fleet

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/filestore"
)

func TestParseShard(t *testing.T) {
	type testCase struct {
		in   string
		want ShardSpec
		err  string
	}
	for _, tc := range []testCase{
		{"1/3", ShardSpec{1, 3}, ""},
		{"3/3", ShardSpec{3, 3}, ""},
		{"1/1", ShardSpec{1, 1}, ""},
		{"0/3", ShardSpec{}, "between 1 and N"},
		{"4/3", ShardSpec{}, "between 1 and N"},
		{"1/0", ShardSpec{}, "N must be"},
		{"a/3", ShardSpec{}, "integers"},
		{"3", ShardSpec{}, "want I/N"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseShard(tc.in)
			if tc.err != "" {
				if flakegate.ErrorCode(err) != flakegate.EINVALID || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("ParseShard(%q) = %v, want EINVALID saying %q", tc.in, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ParseShard(%q) = %v, %v", tc.in, got, err)
			}
		})
	}
}

func ids(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = flakegate.TripleID("p.sh", "", flakegate.Seed(fmt.Sprint(i+1)))
	}
	return out
}

// TestPartition: without history the shards differ by at most one
// triple; with durations the heaviest shard is as light as greedy can
// make it; the cut depends only on the ids and weights (not their order
// in the config), and every triple is in exactly one shard.
func TestPartition(t *testing.T) {
	type testCase struct {
		name    string
		weights []float64
		n       int
		maxLoad float64 // of the heaviest shard
	}
	run := func(t *testing.T, tc testCase) {
		id := ids(len(tc.weights))
		assign := partition(id, tc.weights, tc.n)
		load := make([]float64, tc.n)
		for i, s := range assign {
			if s < 0 || s >= tc.n {
				t.Fatalf("triple %d in shard %d of %d", i, s, tc.n)
			}
			w := tc.weights[i]
			if w == 0 {
				w = 1
			}
			load[s] += w
		}
		if m := slices.Max(load); m > tc.maxLoad {
			t.Errorf("loads %v: the heaviest is %v, want at most %v", load, m, tc.maxLoad)
		}
		// The same ids and weights in another order cut the same way.
		perm := make([]int, len(id))
		for i := range perm {
			perm[i] = (i*7 + 3) % len(id)
		}
		if len(id)%7 == 0 {
			return
		}
		pid, pw := make([]string, len(id)), make([]float64, len(id))
		for i, p := range perm {
			pid[i], pw[i] = id[p], tc.weights[p]
		}
		passign := partition(pid, pw, tc.n)
		for i, p := range perm {
			if passign[i] != assign[p] {
				t.Fatalf("triple %s: shard %d in config order, %d in another", id[p], assign[p], passign[i])
			}
		}
	}
	for _, tc := range []testCase{
		{"by count", make([]float64, 40), 3, 14},
		{"by count, one shard", make([]float64, 5), 1, 5},
		{"more shards than triples", make([]float64, 2), 4, 1},
		{"durations", []float64{10, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 9}, 3, 10},
		{"durations and unknown ones", []float64{8, 8, 0, 0, 2, 2, 2, 2}, 2, 14},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestDurations: the shard balance reads the median wall time per triple
// from stored records of other candidates, never from this candidate's
// (its shards may already have written some).
func TestDurations(t *testing.T) {
	st, err := filestore.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	put := func(seed int, cand string, walls ...float64) {
		var atts []string
		for _, w := range walls {
			atts = append(atts, fmt.Sprintf(`{"wall_seconds":%v}`, w))
		}
		raw := fmt.Sprintf(`{"property_path":"p.sh","seed":%d,"candidate_sha":%q,"attempts":[%s]}`, seed, cand, strings.Join(atts, ","))
		sum := sha256.Sum256([]byte(raw))
		if err := st.PutRecord(ctx, hex.EncodeToString(sum[:]), []byte(raw)); err != nil {
			t.Fatal(err)
		}
	}
	put(1, "old1", 1, 2)   // 3
	put(1, "old2", 5)      // 5
	put(1, "old3", 4, 0.5) // 4.5: the median of three
	put(2, "old1", 7)
	put(2, "this", 100) // this candidate: left out
	put(3, "this", 100)
	got, err := durations(ctx, st, "this")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{ids(3)[0]: 4.5, ids(3)[1]: 7}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("durations %v, want %v", got, want)
	}
}
