// Package termsafe renders text that came from the code under test (an
// attempt's output, an output tail, a reason quoting an output line, a
// test name) so that it is safe to print on a terminal or in a log a
// person reads: nothing in it can move the cursor, hide, recolour or
// overwrite text, set the window title, write the clipboard, or imitate a
// line of flakegate's own.
//
// Every byte a terminal could act on is rendered as visible text instead
// of being dropped, so a person sees that something was there:
//
//   - C0 controls (0x00–0x1f) except newline and tab, with ESC among them,
//     and DEL become \xNN ("\x1b[8m" shows as the text \x1b[8m). This
//     defuses every escape sequence, CSI, OSC, DCS, APC, PM, SOS and the
//     rest, since each begins with ESC or a C1 control. A carriage return
//     becomes \x0d, except in a CRLF line ending, which becomes "\n": a
//     bare CR would let a line overwrite itself.
//   - C1 controls (U+0080–U+009F, such as the 8-bit CSI 0x9b and OSC 0x9d)
//     encoded in UTF-8 become \u0080 … \u009f.
//   - The bidirectional formatting characters (U+061C, U+200E, U+200F,
//     U+202A–U+202E, U+2066–U+2069), which reorder how a line reads,
//     become \uNNNN.
//   - A byte that is not part of valid UTF-8 (a raw 0x9b, say) becomes
//     \xNN.
//
// The result is valid UTF-8 with no control character but newline and
// tab. A backslash is left as it is, so the rendering is for reading, not
// for decoding. Stored data (records, transcripts, JSON) is never passed
// through here: it keeps the exact bytes.
package termsafe

import (
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// String renders s for a terminal; newlines and tabs are kept.
func String(s string) string {
	if clean(s, true) {
		return s
	}
	return string(appendSafe(nil, s, true))
}

// Line renders s for a terminal on one line: like String, with a newline
// shown as \n too, so s cannot start a line of its own.
func Line(s string) string {
	if clean(s, false) {
		return s
	}
	return string(appendSafe(nil, s, false))
}

// clean reports whether s needs no rendering: printable ASCII only (with
// newlines when keepNL), or valid UTF-8 free of what appendSafe renders.
func clean(s string, keepNL bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 {
			return false // decide rune by rune in appendSafe
		}
		if c < 0x20 || c == 0x7f {
			if c == '\t' || c == '\n' && keepNL {
				continue
			}
			return false
		}
	}
	return true
}

// appendSafe appends the rendering of s to dst.
func appendSafe(dst []byte, s string, keepNL bool) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '\t':
				dst = append(dst, c)
			case c == '\n':
				if keepNL {
					dst = append(dst, c)
				} else {
					dst = append(dst, `\n`...)
				}
			case c == '\r' && keepNL && i+1 < len(s) && s[i+1] == '\n':
				// A CRLF line ending: the CR overwrites nothing.
			case c < 0x20 || c == 0x7f:
				dst = appendHex(dst, c)
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = appendHex(dst, c)
		case r >= 0x80 && r <= 0x9f, bidi(r):
			dst = append(dst, `\u`...)
			dst = append(dst, leftPad(strconv.FormatInt(int64(r), 16))...)
		default:
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return dst
}

func appendHex(dst []byte, c byte) []byte {
	return append(dst, '\\', 'x', hexDigits[c>>4], hexDigits[c&0xf])
}

func leftPad(h string) string {
	return strings.Repeat("0", max(0, 4-len(h))) + h
}

// bidi reports whether r is a bidirectional formatting character.
func bidi(r rune) bool {
	switch {
	case r == 0x061c, r == 0x200e, r == 0x200f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// Writer renders a stream of output as String does and puts Prefix at the
// start of every line, so each line of the stream is marked as the code
// under test's, not flakegate's. A UTF-8 sequence or a CRLF split between
// two writes is rendered as if written at once. Close ends an unfinished
// last line; Lines counts the lines written. A Writer is not safe for
// concurrent use; attempt.Run writes to its Output from one goroutine.
type Writer struct {
	w       io.Writer
	prefix  string
	mid     bool   // the current line has begun: its prefix is written
	pending []byte // an unfinished UTF-8 sequence or a CR, held back
	lines   int
	err     error
}

// NewWriter returns a Writer that writes the rendering of its input to w,
// each line starting with prefix.
func NewWriter(w io.Writer, prefix string) *Writer {
	return &Writer{w: w, prefix: prefix}
}

// Write renders p. It reports len(p) unless the underlying writer failed;
// after a failure it writes nothing more.
func (w *Writer) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	buf := append(w.pending, p...)
	cut := holdBack(buf)
	w.pending = append([]byte(nil), buf[cut:]...)
	w.emit(buf[:cut])
	if w.err != nil {
		return 0, w.err
	}
	return len(p), nil
}

// Close writes what is held back and ends an unfinished last line with a
// newline, so what follows starts at column 0. It does not close the
// underlying writer.
func (w *Writer) Close() error {
	if w.err != nil {
		return w.err
	}
	rest := w.pending
	w.pending = nil
	w.emit(rest)
	if w.err == nil && w.mid {
		_, w.err = io.WriteString(w.w, "\n")
		w.mid = false
		w.lines++
	}
	return w.err
}

// Lines is the number of lines written so far (an unfinished line counts
// once Close ends it).
func (w *Writer) Lines() int { return w.lines }

// emit renders p and writes it, prefixing each line.
func (w *Writer) emit(p []byte) {
	if len(p) == 0 {
		return
	}
	r := appendSafe(nil, string(p), true)
	out := make([]byte, 0, len(r)+len(w.prefix)*4)
	for len(r) > 0 {
		if !w.mid {
			out = append(out, w.prefix...)
			w.mid = true
		}
		i := strings.IndexByte(string(r), '\n')
		if i < 0 {
			out = append(out, r...)
			break
		}
		out = append(out, r[:i+1]...)
		r = r[i+1:]
		w.mid = false
		w.lines++
	}
	_, w.err = w.w.Write(out)
}

// holdBack returns how much of p can be rendered now: all of it but a
// trailing CR (a CRLF may be split) or a trailing UTF-8 sequence that the
// next write may complete.
func holdBack(p []byte) int {
	n := len(p)
	if n > 0 && p[n-1] == '\r' {
		return n - 1
	}
	// Find the start of the last rune, at most UTFMax-1 bytes back.
	for i := n - 1; i >= 0 && i >= n-(utf8.UTFMax-1); i-- {
		if utf8.RuneStart(p[i]) {
			if p[i] >= utf8.RuneSelf && !utf8.FullRune(p[i:]) {
				return i
			}
			break
		}
	}
	return n
}
