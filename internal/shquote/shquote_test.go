package shquote

import (
	"os/exec"
	"testing"
)

// TestQuoteAsShReadsIt: sh reads each quoted word back as the string it
// came from, one word, with nothing expanded.
func TestQuoteAsShReadsIt(t *testing.T) {
	for _, tc := range []struct{ in, readable string }{
		{"pytest", "pytest"},
		{"--hypothesis-seed=1400", "--hypothesis-seed=1400"},
		{"", "''"},
		{"a b", "'a b'"},
		{"it's", `'it'\''s'`},
		{"$HOME", "'$HOME'"},
		{"^TestX$", "'^TestX$'"},
		{"$(echo pwned) `id` \"x\"\nline", "'$(echo pwned) `id` \"x\"\nline'"},
	} {
		if got := Readable(tc.in); got != tc.readable {
			t.Errorf("Readable(%q) = %s, want %s", tc.in, got, tc.readable)
		}
		for _, q := range []string{Word(tc.in), Readable(tc.in)} {
			got, err := exec.Command("/bin/sh", "-c", "set -- "+q+"; printf %s \"$#:$1\"").Output()
			if err != nil || string(got) != "1:"+tc.in {
				t.Errorf("sh reads %s as %q (%v), want one word %q", q, got, err, tc.in)
			}
		}
	}
}
