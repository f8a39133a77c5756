package canonjson

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"pgregory.net/rapid"
)

// stringAlphabet holds every kind of text the two escaping rules treat
// differently: plain ASCII, the escaped ASCII of each, DEL, non-ASCII
// below and above U+FFFF, U+2028/9 and invalid UTF-8.
var stringAlphabet = []string{"a", "Z", " ", "~", "\"", "\\", "<", ">", "&", "\n", "\r", "\t", "\b", "\f", "\x00", "\x01", "\x1f",
	"\x7f", "é", "中", "😀", "\u2028", "\u2029", "\ufffd", "\xff", "\xc3", "\xed\xa0\x80", "0123456789abcdef"}

func stringGen() *rapid.Generator[string] {
	return rapid.Custom(func(t *rapid.T) string {
		parts := rapid.SliceOfN(rapid.SampledFrom(stringAlphabet), 0, 24).Draw(t, "parts")
		return strings.Join(parts, "")
	})
}

// TestAppendStringMatchesEncodingJSON: the output form is encoding/json's,
// byte for byte, over hand-picked and generated strings.
func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	check := func(t interface{ Fatalf(string, ...any) }, s string) {
		want, _ := json.Marshal(s)
		if got := AppendString([]byte("x"), s); string(got) != "x"+string(want) {
			t.Fatalf("%q: got %s, want %s", s, got[1:], want)
		}
	}
	for _, s := range []string{"", "plain", `say "hi"`, `back\slash`, "<a href='x'>&</a>", "tab\tnl\ncr\r\x00\x1f\x7f",
		"café 中 😀", "\u2028\u2029", "bad \xff utf-8 \xe2\x82", "\xed\xa0\x80", "\b\f", strings.Repeat("a", 64),
		strings.Repeat("abcdefg<", 9), "0123456\u2028"} {
		check(t, s)
	}
	rapid.Check(t, func(t *rapid.T) { check(t, stringGen().Draw(t, "s")) })
}

// TestAppendPythonStringMatchesReference: the canonical form is
// json.dumps's with ensure_ascii=True (referenceString), over valid UTF-8.
func TestAppendPythonStringMatchesReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := strings.ToValidUTF8(stringGen().Draw(t, "s"), "\ufffd")
		if got, want := AppendPythonString(nil, s), referenceString(s); string(got) != string(want) {
			t.Fatalf("%q: got %s, want %s", s, got, want)
		}
	})
}

// TestStringFormsDiffer pins down where the canonical (hash) form and the
// output form part ways, so neither is taken for the other.
func TestStringFormsDiffer(t *testing.T) {
	type testCase struct {
		in, canonical, output string
	}
	tests := []testCase{
		{"plain", `"plain"`, `"plain"`},
		{`"\`, `"\"\\"`, `"\"\\"`},
		{"\n\x01", `"\n\u0001"`, `"\n\u0001"`},
		{"<&>", `"<&>"`, `"\u003c\u0026\u003e"`},
		{"\x7f", `"\u007f"`, "\"\x7f\""},
		{"é", `"\u00e9"`, `"é"`},
		{"😀", `"\ud83d\ude00"`, `"😀"`},
		{"\u2028", `"\u2028"`, `"\u2028"`},
	}
	for _, tc := range tests {
		if got := string(AppendPythonString(nil, tc.in)); got != tc.canonical {
			t.Errorf("AppendPythonString(%q) = %s, want %s", tc.in, got, tc.canonical)
		}
		if got := string(AppendString(nil, tc.in)); got != tc.output {
			t.Errorf("AppendString(%q) = %s, want %s", tc.in, got, tc.output)
		}
	}
}

func TestAppendStrings(t *testing.T) {
	for _, ss := range [][]string{{}, {"a"}, {"a<b", "é", ""}} {
		want, _ := json.Marshal(ss)
		if got := AppendStrings(nil, ss); string(got) != string(want) {
			t.Errorf("%q: got %s, want %s", ss, got, want)
		}
	}
}

func TestHTMLSafe8(t *testing.T) {
	safe := func(c byte) bool {
		return c >= 0x20 && c < utf8.RuneSelf && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	for c := 0; c < 256; c++ {
		for pos := 0; pos < 8; pos++ {
			b := []byte("abcdefgh")
			b[pos] = byte(c)
			if got, want := htmlSafe8(load8(string(b))), safe(byte(c)); got != want {
				t.Fatalf("byte %#x at %d: htmlSafe8 %v, want %v", c, pos, got, want)
			}
		}
	}
}
