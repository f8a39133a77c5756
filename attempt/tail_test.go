package attempt

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzTail checks the tail buffer and the marker scanner against the
// obvious implementations on the whole output, for any split into chunks.
func FuzzTail(f *testing.F) {
	f.Add([]byte("hello, world\nno tests ran\n"), []byte{3, 5, 1}, uint8(8))
	f.Add([]byte("no tes"+"ts ran"), []byte{6}, uint8(4))
	f.Add([]byte("héllo wörld"), []byte{2, 1, 1}, uint8(5))
	f.Add(bytes.Repeat([]byte("xyz"), 100), []byte{7, 200}, uint8(16))
	f.Fuzz(func(t *testing.T, data, cuts []byte, size uint8) {
		n := int(size%64) + 1
		tail := &tailBuffer{max: n}
		scan := newMarkerScanner(testMarkers)
		rest := data
		for i := 0; len(rest) > 0; i++ {
			k := len(rest)
			if i < len(cuts) && int(cuts[i]) < k {
				k = int(cuts[i])
			}
			tail.Write(rest[:k])
			scan.Write(rest[:k])
			rest = rest[k:]
		}
		got := tail.String()
		if !utf8.ValidString(got) {
			t.Errorf("tail %q is not valid UTF-8", got)
		}
		if utf8.Valid(data) {
			// The last n bytes, less at most 3 bytes of a rune cut in front.
			if !strings.HasSuffix(string(data), got) || len(got) > n || len(got) < min(n, len(data))-3 {
				t.Errorf("tail = %q, want the last %d bytes of %q", got, n, data)
			}
			if len(data) <= n && got != string(data) {
				t.Errorf("tail = %q, want all of %q", got, data)
			}
		}
		if len(tail.buf) > 2*n+len(data) || tail.total != int64(len(data)) {
			t.Errorf("buffer holds %d bytes, total %d, for %d bytes", len(tail.buf), tail.total, len(data))
		}
		wantFound := false
		for _, m := range testMarkers {
			wantFound = wantFound || bytes.Contains(data, []byte(m))
		}
		if (scan.found != "") != wantFound {
			t.Errorf("marker found = %q, want found = %t in %q", scan.found, wantFound, data)
		}
	})
}
