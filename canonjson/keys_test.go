package canonjson

import (
	"fmt"
	"slices"
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
