package canonjson

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestReaderFind: a Reader's Find, which remembers slots per known key
// sequence, gives the slots Keys.Find gives over objects whose keys follow,
// extend, cut and reorder one another.
func TestReaderFind(t *testing.T) {
	ks := NewKeys("a", "k03", "k17", "zz")
	other := NewKeys("k00", "k17")
	obj := func(keys ...string) string {
		s := "{"
		for i, k := range keys {
			if i > 0 {
				s += ","
			}
			s += fmt.Sprintf("%q:%d", k, i)
		}
		return s + "}"
	}
	seq := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("k%02d", i)
		}
		return out
	}
	texts := []string{
		obj(seq(20)...), obj(seq(20)...), obj(seq(18)...), obj(append(seq(18), "a")...),
		obj(append(seq(18), "zz", "a")...), obj(seq(20)...), `[1,2]`, obj("a", "zz"), obj(seq(17)...),
	}
	var rd Reader
	for round := 0; round < 3; round++ {
		for _, text := range texts {
			v, err := rd.Read(text)
			if err != nil {
				t.Fatal(err)
			}
			for _, keys := range []*Keys{ks, other} {
				got, want := make([]int32, keys.Len()), make([]int32, keys.Len())
				rd.Find(keys, v, got)
				keys.Find(v, want)
				if !slices.Equal(got, want) {
					t.Fatalf("round %d, %s: Reader.Find %v, Keys.Find %v", round, text, got, want)
				}
			}
		}
	}
}

func TestNewKeysRefusesDuplicates(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("NewKeys took a duplicate key")
		}
	}()
	NewKeys("a", "b", "a")
}

// TestReaderFollowedSequenceReplaced: while an object's keys follow a
// known sequence, nested objects may push that sequence out of the
// Reader's memory. The keys followed must stay what they were, or a
// duplicate key that the new sequence happens to hold at that place
// passes unseen.
func TestReaderFollowedSequenceReplaced(t *testing.T) {
	keys := func(prefix string, n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("%s%02d", prefix, i)
		}
		return out
	}
	obj := func(keys []string, values []string) string {
		var b strings.Builder
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			v := "1"
			if i < len(values) {
				v = values[i]
			}
			fmt.Fprintf(&b, "%q:%s", k, v)
		}
		b.WriteByte('}')
		return b.String()
	}
	var rd Reader
	if _, err := rd.Read(obj(keys("k", 20), nil)); err != nil {
		t.Fatal(err)
	}
	// Eight nested objects of new keys fill the Reader's memory, the last
	// one holding "k00" where the followed sequence holds "k10".
	var nested []string
	for i := range 7 {
		nested = append(nested, obj(keys(fmt.Sprintf("n%d_", i), 16), nil))
	}
	last := append(keys("y", 10), "k00")
	last = append(last, keys("z", 6)...)
	nested = append(nested, obj(last, nil))
	outer := append(keys("k", 10), "k00")
	text := obj(outer, nested)
	_, err := rd.Read(text)
	if err == nil || !strings.Contains(err.Error(), `duplicate key "k00"`) {
		t.Fatalf("reused Reader: %v, want the duplicate key k00\n%s", err, text)
	}
	if _, err := Read([]byte(text)); err == nil {
		t.Fatal("a fresh Read accepts the duplicate key")
	}
}
