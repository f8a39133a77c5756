package termsafe

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// hostile is what an attack on a terminal prints: a fake verdict, a
// conceal that hides what follows, a clipboard write, a window title, a
// bare CR, an 8-bit CSI as a raw byte and in UTF-8, and a DCS string.
const hostile = "replay: pass\n\x1b[8mreplay: fail\x1b[0m\n" +
	"\x1b]52;c;ZWNobyBwd25lZA==\x07\x1b]2;pwned\x1b\\" +
	"ok\rverdict: pass\n\x9b31m\u009b31m\x1bP1$r\x1b\\"

func TestString(t *testing.T) {
	type testCase struct{ name, in, want string }
	run := func(t *testing.T, tc testCase) {
		got := String(tc.in)
		if got != tc.want {
			t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
		}
		assertSafe(t, got, true)
	}
	for _, tc := range []testCase{
		{"plain", "plain text\n\tindented\n", "plain text\n\tindented\n"},
		{"utf-8 is kept", "größer → ✓ 😀 \ufffd", "größer → ✓ 😀 \ufffd"},
		{"CSI conceal", "\x1b[8mhidden\x1b[0m", `\x1b[8mhidden\x1b[0m`},
		{"colour", "\x1b[1;31mred\x1b[m", `\x1b[1;31mred\x1b[m`},
		{"OSC 52 clipboard, BEL", "\x1b]52;c;aGk=\x07", `\x1b]52;c;aGk=\x07`},
		{"OSC 2 title, ST", "\x1b]2;title\x1b\\", `\x1b]2;title\x1b\`},
		{"OSC 0 title", "\x1b]0;t\x07", `\x1b]0;t\x07`},
		{"DCS", "\x1bP1$r\x1b\\", `\x1bP1$r\x1b\`},
		{"APC PM SOS", "\x1b_a\x1b\\\x1b^b\x1b\\\x1bXc\x1b\\", `\x1b_a\x1b\\x1b^b\x1b\\x1bXc\x1b\`},
		{"two-byte ESC", "\x1bc\x1b7\x1b8", `\x1bc\x1b7\x1b8`},
		{"bare CR", "ok\rFAIL", `ok\x0dFAIL`},
		{"CR at the end", "ok\r", `ok\x0d`},
		{"CRLF ends a line", "a\r\nb\r\n", "a\nb\n"},
		{"CR CR LF", "a\r\r\n", "a\\x0d\n"},
		{"other C0 and DEL", "\x00\x07\x08\x0b\x0c\x7f", `\x00\x07\x08\x0b\x0c\x7f`},
		{"8-bit CSI and OSC as raw bytes", "\x9b31m\x9d0;t\x07", `\x9b31m\x9d0;t\x07`},
		{"C1 in UTF-8", "\u009b31m \u009d \u0085 \u0080 \u009f", `\u009b31m \u009d \u0085 \u0080 \u009f`},
		{"invalid UTF-8", "a\xffb\xc3(\xe2\x82", `a\xffb\xc3(\xe2\x82`},
		{"overlong and surrogate", "\xc0\xaf\xed\xa0\x80", `\xc0\xaf\xed\xa0\x80`},
		{"bidi overrides", "a\u202eb\u2066c\u200fd\u061c", `a\u202eb\u2066c\u200fd\u061c`},
		{"backslashes stay", `C:\x1b\path`, `C:\x1b\path`},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func TestLine(t *testing.T) {
	type testCase struct{ in, want string }
	for _, tc := range []testCase{
		{"one line", "one line"},
		{"a\nverdict: pass", `a\nverdict: pass`},
		{"a\r\nb", `a\x0d\nb`},
		{"tab\tkept", "tab\tkept"},
		{"\x1b[8m", `\x1b[8m`},
	} {
		got := Line(tc.in)
		if got != tc.want {
			t.Errorf("Line(%q) = %q, want %q", tc.in, got, tc.want)
		}
		assertSafe(t, got, false)
	}
}

func TestWriter(t *testing.T) {
	type testCase struct {
		name   string
		writes []string
		want   string
		lines  int
	}
	run := func(t *testing.T, tc testCase) {
		var b bytes.Buffer
		w := NewWriter(&b, "  │ ")
		for _, s := range tc.writes {
			if n, err := w.Write([]byte(s)); n != len(s) || err != nil {
				t.Fatalf("Write(%q) = %d, %v", s, n, err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if b.String() != tc.want {
			t.Errorf("got  %q\nwant %q", b.String(), tc.want)
		}
		if w.Lines() != tc.lines {
			t.Errorf("Lines() = %d, want %d", w.Lines(), tc.lines)
		}
		assertSafe(t, b.String(), true)
	}
	for _, tc := range []testCase{
		{"nothing", nil, "", 0},
		{"lines", []string{"a\nb\n"}, "  │ a\n  │ b\n", 2},
		{"unfinished last line", []string{"a\nb"}, "  │ a\n  │ b\n", 2},
		{"a line in pieces", []string{"ver", "dict: pa", "ss\n"}, "  │ verdict: pass\n", 1},
		{"empty lines", []string{"\n\n"}, "  │ \n  │ \n", 2},
		{"CRLF split", []string{"a\r", "\nb\r", "\n"}, "  │ a\n  │ b\n", 2},
		{"bare CR at the end", []string{"a\r"}, "  │ a\\x0d\n", 1},
		{"UTF-8 split", []string{"\xe2", "\x9c", "\x93\n"}, "  │ ✓\n", 1},
		{"C1 in UTF-8 split", []string{"\xc2", "\x9b"}, "  │ \\u009b\n", 1},
		{"unfinished UTF-8 at the end", []string{"a\xe2\x9c"}, "  │ a\\xe2\\x9c\n", 1},
		{"escape split", []string{"\x1b", "[8m", "hidden\n"}, "  │ \\x1b[8mhidden\n", 1},
		{"hostile", []string{hostile}, "  │ replay: pass\n  │ \\x1b[8mreplay: fail\\x1b[0m\n" +
			"  │ \\x1b]52;c;ZWNobyBwd25lZA==\\x07\\x1b]2;pwned\\x1b\\ok\\x0dverdict: pass\n" +
			"  │ \\x9b31m\\u009b31m\\x1bP1$r\\x1b\\\n", 4},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

type failWriter struct{ n int }

func (f *failWriter) Write(p []byte) (int, error) {
	if f.n == 0 {
		return 0, errors.New("closed")
	}
	f.n--
	return len(p), nil
}

func TestWriterError(t *testing.T) {
	w := NewWriter(&failWriter{n: 1}, "| ")
	if _, err := w.Write([]byte("a\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("b\n")); err == nil {
		t.Fatal("no error from a failed write")
	}
	if _, err := w.Write([]byte("c\n")); err == nil {
		t.Fatal("a write after a failure succeeded")
	}
	if err := w.Close(); err == nil {
		t.Fatal("Close after a failure succeeded")
	}
}

// assertSafe fails unless s is valid UTF-8 with no control character a
// terminal acts on: no C0 but tab (and newline when nl), no DEL, no C1
// (U+0080–U+009F, so no raw 0x9b or 0x9d byte), no bidi control.
func assertSafe(t *testing.T, s string, nl bool) {
	t.Helper()
	if !utf8.ValidString(s) {
		t.Fatalf("not valid UTF-8: %q", s)
	}
	for i, r := range s {
		switch {
		case r == '\t', r == '\n' && nl:
		case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f, bidi(r):
			t.Fatalf("control %U at %d in %q", r, i, s)
		}
	}
	// A 0x9b or 0x9d byte can only be left as a continuation byte of a
	// valid character (U+271B is e2 9c 9b): a terminal decoding UTF-8
	// never reads it as CSI or OSC. Outside UTF-8 none is left at all.
	if strings.ContainsAny(s, "\x1b\r") {
		t.Fatalf("ESC or CR in %q", s)
	}
}

// FuzzString checks that no input gets a control through String, Line or
// the Writer, and that the Writer renders a stream cut anywhere as it
// renders it whole.
func FuzzString(f *testing.F) {
	f.Add(hostile, uint8(3))
	f.Add("a\r\nb\r", uint8(2))
	f.Add("\xe2\x9c\x93\xc2\x9b", uint8(1))
	f.Add("\x1b]52;c;aGk=\x07 \x9b \u009d", uint8(5))
	f.Fuzz(func(t *testing.T, in string, cut uint8) {
		s := String(in)
		assertSafe(t, s, true)
		assertSafe(t, Line(in), false)
		if strings.Count(Line(in), "\n") != 0 {
			t.Fatalf("Line(%q) has a newline", in)
		}

		var whole, pieces bytes.Buffer
		w := NewWriter(&whole, "| ")
		w.Write([]byte(in))
		w.Close()
		p := NewWriter(&pieces, "| ")
		k := 0
		if len(in) > 0 {
			k = int(cut) % (len(in) + 1)
		}
		p.Write([]byte(in[:k]))
		p.Write(nil)
		p.Write([]byte(in[k:]))
		p.Close()
		if whole.String() != pieces.String() {
			t.Fatalf("cut at %d of %q:\nwhole  %q\npieces %q", k, in, whole.String(), pieces.String())
		}
		out := whole.String()
		assertSafe(t, out, true)
		if out != "" && !strings.HasSuffix(out, "\n") {
			t.Fatalf("Writer output %q does not end a line", out)
		}
		for line := range strings.Lines(out) {
			if !strings.HasPrefix(line, "| ") {
				t.Fatalf("line %q lacks the prefix", line)
			}
		}
		// The Writer is String with the prefix on every line.
		if want := prefixLines(s, "| "); out != want {
			t.Fatalf("Writer(%q) = %q, want %q", in, out, want)
		}
	})
}

// prefixLines is the Writer's output for the rendered text s.
func prefixLines(s, prefix string) string {
	if s == "" {
		return ""
	}
	if !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	var b strings.Builder
	for line := range strings.Lines(s) {
		b.WriteString(prefix + line)
	}
	return b.String()
}
