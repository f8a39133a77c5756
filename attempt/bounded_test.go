package attempt

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBounded: the buffer keeps what fits whole, drops a write that
// would pass Max, and says so.
func TestBounded(t *testing.T) {
	b := &Bounded{Max: 8}
	b.Write([]byte("12345"))
	b.Write([]byte("6789"))
	b.Write([]byte("678"))
	if b.String() != "12345678" || !b.Over {
		t.Fatalf("%q over %v", b.String(), b.Over)
	}
}

// TestReadBounded: a file over max is an error, one at max is read.
func TestReadBounded(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	os.WriteFile(p, []byte("abcd"), 0o600)
	if b, err := ReadBounded(p, 4); err != nil || string(b) != "abcd" {
		t.Fatalf("%q %v", b, err)
	}
	if _, err := ReadBounded(p, 3); err == nil || !strings.Contains(err.Error(), "larger than 3 bytes") {
		t.Fatalf("over max: %v", err)
	}
}

// TestShortTail: the last 400 bytes on one line, lines joined by " | ".
func TestShortTail(t *testing.T) {
	for in, want := range map[string]string{
		"":                       "(no output)",
		"  \n":                   "(no output)",
		"a\nb  c\n":              "a | b c",
		strings.Repeat("x", 401): "..." + strings.Repeat("x", 400),
	} {
		if got := ShortTail(in); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}
