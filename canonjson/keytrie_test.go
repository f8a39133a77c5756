package canonjson

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// recordVariants returns n objects of 14 to 20 keys, each with its own
// key sequence: a fixed head, then optional keys in or out, as records
// from one producer with optional keys are.
func recordVariants(n int) []string {
	head := []string{"schema", "run_id", "seed", "property_path", "fixture_sha256", "diff_paths",
		"candidate_result", "base_seed_result", "retry_results", "retry_cap", "budget_ok", "transcript_complete"}
	optional := []string{"candidate_env", "base_env", "fixture_generator_path", "watch_paths", "note", "x_ci", "x_nonce", "x_retry_of"}
	var out []string
	for v := 0; len(out) < n; v++ {
		var b strings.Builder
		b.WriteString(`{`)
		for i, k := range head {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, `"%s": %d`, k, i)
		}
		for i, k := range optional {
			if v>>i&1 == 1 {
				fmt.Fprintf(&b, `, "%s": null`, k)
			}
		}
		b.WriteString(`}`)
		out = append(out, b.String())
	}
	return out
}

// TestReaderManySequencesAllocateNothing: once a Reader has seen each of
// 40 key sequences, reading and hashing them again allocates nothing (a
// memory of a few sequences would forget and sort again, and allocate).
func TestReaderManySequencesAllocateNothing(t *testing.T) {
	records := recordVariants(40)
	var rd Reader
	for _, r := range records {
		if _, _, err := rd.ReadSum(r); err != nil {
			t.Fatal(err)
		}
	}
	allocs := testing.AllocsPerRun(20, func() {
		for _, r := range records {
			if _, _, err := rd.ReadSum(r); err != nil {
				t.Fatal(err)
			}
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations reading 40 known key sequences, want 0", allocs)
	}
	if n := len(rd.keys.nodes); n > 12+8*40+1 {
		t.Fatalf("the trie holds %d nodes for 40 sequences", n)
	}
}

// TestReaderTrieFull reads objects of fresh random keys until the trie has
// been filled and emptied several times, and checks every read against a
// fresh Reader: the same canonical bytes, the same Find slots, the same
// error.
func TestReaderTrieFull(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 11))
	keys := NewKeys("k00", "k07", "seed")
	var rd Reader
	resets := 0
	for i := range 3000 {
		var b strings.Builder
		b.WriteByte('{')
		n := 10 + rnd.IntN(10)
		for j := range n {
			if j > 0 {
				b.WriteByte(',')
			}
			switch {
			case rnd.IntN(4) == 0:
				fmt.Fprintf(&b, `"k%02d":%d`, j, j) // a sequence seen before, at times
			case rnd.IntN(50) == 0:
				b.WriteString(`"k00":1`) // a duplicate, at times
			default:
				fmt.Fprintf(&b, `"r%x":[%d]`, rnd.Uint32(), j)
			}
		}
		b.WriteByte('}')
		text := b.String()
		before := len(rd.keys.nodes)
		v, sum, err := rd.ReadSum(text)
		if len(rd.keys.nodes) < before {
			resets++
		}
		if len(rd.keys.nodes) > maxTrieNodes {
			t.Fatalf("record %d: the trie holds %d nodes, more than %d", i, len(rd.keys.nodes), maxTrieNodes)
		}
		fresh, ferr := Read([]byte(text))
		if fmt.Sprint(err) != fmt.Sprint(ferr) {
			t.Fatalf("record %d: reused Reader says %v, fresh Read %v", i, err, ferr)
		}
		if err != nil {
			continue
		}
		want := Append(nil, &fresh)
		if sum != Sum(sha256Sum(want)) {
			t.Fatalf("record %d: reused Reader hashes other bytes than %s", i, want)
		}
		if got := Append(nil, v); !bytes.Equal(got, want) {
			t.Fatalf("record %d: %s, want %s", i, got, want)
		}
		got, plain := make([]int32, keys.Len()), make([]int32, keys.Len())
		rd.Find(keys, v, got)
		keys.Find(&fresh, plain)
		if !slices.Equal(got, plain) {
			t.Fatalf("record %d: Find %v, want %v", i, got, plain)
		}
	}
	if resets < 2 {
		t.Fatalf("the trie was emptied %d times, want the test to fill it at least twice", resets)
	}
}
