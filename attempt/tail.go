package attempt

import (
	"bytes"
	"strings"
)

// tailBuffer keeps the last max bytes written to it. It holds at most
// 2*max bytes plus one write, however much is written.
type tailBuffer struct {
	max   int
	buf   []byte
	total int64
}

func (t *tailBuffer) Write(p []byte) {
	t.total += int64(len(p))
	if len(p) >= t.max {
		t.buf = append(t.buf[:0], p[len(p)-t.max:]...)
		return
	}
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*t.max {
		n := copy(t.buf, t.buf[len(t.buf)-t.max:])
		t.buf = t.buf[:n]
	}
}

// String returns the last max bytes as valid UTF-8: a rune cut at the
// front is dropped, other invalid bytes become U+FFFD.
func (t *tailBuffer) String() string {
	b := t.buf
	if len(b) > t.max {
		b = b[len(b)-t.max:]
	}
	if int64(len(b)) < t.total {
		for i := 0; i < 3 && len(b) > 0 && b[0]&0xC0 == 0x80; i++ {
			b = b[1:]
		}
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// markerScanner reports whether any marker occurs in a stream written in
// chunks, including a marker split across two chunks.
type markerScanner struct {
	markers [][]byte
	keep    int // longest marker - 1: bytes carried to the next chunk
	window  []byte
	found   string
}

func newMarkerScanner(markers []string) *markerScanner {
	s := &markerScanner{}
	for _, m := range markers {
		if m == "" {
			continue
		}
		s.markers = append(s.markers, []byte(m))
		if len(m)-1 > s.keep {
			s.keep = len(m) - 1
		}
	}
	return s
}

func (s *markerScanner) Write(p []byte) {
	if s.found != "" || len(s.markers) == 0 {
		return
	}
	s.window = append(s.window, p...)
	for _, m := range s.markers {
		if bytes.Contains(s.window, m) {
			s.found = string(m)
			s.window = nil
			return
		}
	}
	if len(s.window) > s.keep {
		n := copy(s.window, s.window[len(s.window)-s.keep:])
		s.window = s.window[:n]
	}
}

// ShortTail is the end of an output for a reason (a prepare's, a Go
// cache fill's): its last lines, at most 400 bytes, on one line.
func ShortTail(tail string) string {
	tail = strings.TrimSpace(tail)
	if len(tail) > 400 {
		tail = "..." + tail[len(tail)-400:]
	}
	tail = strings.Join(strings.Fields(strings.ReplaceAll(tail, "\n", " | ")), " ")
	if tail == "" {
		return "(no output)"
	}
	return tail
}
