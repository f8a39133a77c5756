package canonjson

import "unicode/utf8"

// Two escaping rules for JSON strings, kept apart on purpose:
//
//   - AppendPythonString is the canonical (hash) form: what Python's
//     json.dumps writes with ensure_ascii=True. Every byte outside printable
//     ASCII is escaped, as \uXXXX (a surrogate pair above U+FFFF), so is
//     DEL (0x7F); '<', '>' and '&' are kept. record_sha256 is computed
//     over this form, so it must match the listing byte for byte.
//   - AppendString is the output form: what encoding/json writes. UTF-8 is
//     kept as it is, DEL too; '<', '>', '&' and U+2028/U+2029 are escaped
//     so the output is safe inside HTML and JavaScript; invalid UTF-8 is
//     written as \ufffd. Decisions and other JSON that flakegate prints use
//     it; nothing is hashed over it.
//
// Both escape '"', '\\' and the control characters, with the short forms
// \n, \r, \t, \b and \f.

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string in the output form, as
// encoding/json writes it (see the rules above).
func AppendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if i+8 <= len(s) && htmlSafe8(load8(s[i:i+8])) {
			i += 8
			continue
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = appendU(b, rune(c))
			}
			i++
			start = i
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += n
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = appendU(b, r)
			i += n
			start = i
			continue
		}
		i += n
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// AppendStrings appends ss as a JSON array of strings in the output form
// (AppendString).
func AppendStrings(b []byte, ss []string) []byte {
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendString(b, s)
	}
	return append(b, ']')
}

// htmlSafe8 reports whether the 8 bytes of x (little-endian) are all
// ASCII from 0x20 up, other than '"', '\\', '<', '>' and '&': bytes that
// AppendString keeps as they are.
func htmlSafe8(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	below := (x - ones*0x20) & ^x // a byte < 0x20
	quote, slash, amp := x^(ones*'"'), x^(ones*'\\'), x^(ones*'&')
	angle := (x | ones*2) ^ (ones * '>') // '<' is '>' with bit 1 clear
	eq := (quote-ones)&^quote | (slash-ones)&^slash | (amp-ones)&^amp | (angle-ones)&^angle
	return (below|x|eq)&highs == 0
}

// AppendPythonString appends s as a JSON string in the canonical (hash)
// form, as Python's json.dumps writes it with ensure_ascii=True (see the
// rules above).
func AppendPythonString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if i+8 <= len(s) && plain8(s[i:i+8]) {
			i += 8
			continue
		}
		c := s[i]
		if c >= 0x20 && c < 0x7F && c != '"' && c != '\\' {
			i++
			continue
		}
		b = append(b, s[start:i]...)
		if c < 0x80 {
			switch c {
			case '"':
				b = append(b, '\\', '"')
			case '\\':
				b = append(b, '\\', '\\')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = appendU(b, rune(c))
			}
			i++
			start = i
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r >= 0x10000 {
			r -= 0x10000
			b = appendU(b, 0xD800+(r>>10))
			b = appendU(b, 0xDC00+(r&0x3FF))
		} else {
			b = appendU(b, r)
		}
		i += n
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// plain8 reports whether 8 bytes are all printable ASCII other than '"'
// and '\\': bytes that a canonical string keeps as they are.
func plain8(s string) bool {
	x := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	below := (x - ones*0x20) & ^x & highs // a byte < 0x20
	above := (x + ones*(0x80-0x7F)) | x   // a byte >= 0x7F sets its high bit
	quote := x ^ (ones * '"')
	slash := x ^ (ones * '\\')
	hasQuote := (quote - ones) & ^quote & highs
	hasSlash := (slash - ones) & ^slash & highs
	return (below | above&highs | hasQuote | hasSlash) == 0
}

func appendU(b []byte, r rune) []byte {
	return append(b, '\\', 'u', hexDigits[r>>12&0xF], hexDigits[r>>8&0xF], hexDigits[r>>4&0xF], hexDigits[r&0xF])
}
