package flakegate

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxRecordBytes bounds one record; a larger input is INCOMPLETE.
const MaxRecordBytes = 16 << 20

// maxIntDigits is CPython's default int_max_str_digits: json.loads refuses
// a longer integer, so no listing-compatible hash exists for it.
const maxIntDigits = 4300

// MaxDepth bounds nesting of arrays and objects in a record.
const MaxDepth = 256

// ReadError says why bytes are not exactly one acceptable JSON value. When
// NotJSON is false the bytes are JSON that flakegate refuses (a duplicate
// key, a lone surrogate, a number out of float64 range); the hash is still
// undefined for them.
type ReadError struct {
	Offset int
	Msg    string
}

func (e *ReadError) Error() string { return fmt.Sprintf("%s (at byte %d)", e.Msg, e.Offset) }

// ReadValue reads exactly one JSON value from raw, strictly: valid UTF-8, no
// byte order mark, no NaN or Infinity, no duplicate keys, no lone
// surrogates, no number beyond float64, nothing after the value but
// whitespace, nesting at most MaxDepth.
func ReadValue(raw []byte) (Value, error) {
	if len(raw) > MaxRecordBytes {
		return Value{}, precheck(string(raw[:MaxRecordBytes+1]))
	}
	p := parser{s: string(raw)}
	if err := precheck(p.s); err != nil {
		return Value{}, err
	}
	return p.read()
}

// precheck refuses oversized input, a byte order mark and invalid UTF-8.
func precheck(s string) error {
	if len(s) > MaxRecordBytes {
		return &ReadError{0, fmt.Sprintf("record is %d bytes, more than the %d MiB limit", len(s), MaxRecordBytes>>20)}
	}
	if strings.HasPrefix(s, "\xEF\xBB\xBF") {
		return &ReadError{0, "starts with a UTF-8 byte order mark"}
	}
	if !utf8.ValidString(s) {
		off := 0
		for off < len(s) {
			r, n := utf8.DecodeRuneInString(s[off:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			off += n
		}
		return &ReadError{off, "invalid UTF-8"}
	}
	return nil
}

// read parses p.s, which holds the whole input.
func (p *parser) read() (Value, error) {
	p.i = 0
	p.skipSpace()
	if p.i == len(p.s) {
		return Value{}, &ReadError{0, "empty input, want one JSON object"}
	}
	v, err := p.value(0)
	if err != nil {
		return Value{}, err
	}
	p.skipSpace()
	if p.i != len(p.s) {
		return Value{}, p.fail("trailing data after the JSON value")
	}
	return v, nil
}

// parser reads one JSON text. Members and elements are collected on
// stacks and copied into arenas when their object or array closes, so a
// parser reused across records allocates almost nothing.
type parser struct {
	s      string
	i      int
	mstack []Member
	marena []Member
	hash   hasher
	rec    Record
	// seen holds one reusable key set per nesting depth, for objects too
	// large for a linear duplicate scan.
	seen []map[string]struct{}
}

// reset drops the arenas' contents for the next record. Values read before
// must no longer be used.
func (p *parser) reset(s string) {
	p.s, p.i = s, 0
	p.mstack, p.marena = p.mstack[:0], p.marena[:0]
}

func (p *parser) fail(msg string) error { return &ReadError{p.i, msg} }

func (p *parser) skipSpace() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) value(depth int) (Value, error) {
	if p.i >= len(p.s) {
		return Value{}, p.fail("unexpected end of input")
	}
	switch c := p.s[p.i]; c {
	case '{':
		return p.object(depth + 1)
	case '[':
		return p.array(depth + 1)
	case '"':
		s, err := p.str()
		return Value{Kind: KindString, Str: s}, err
	case 't':
		return p.literal("true", Value{Kind: KindBool, Bool: true})
	case 'f':
		return p.literal("false", Value{Kind: KindBool})
	case 'n':
		return p.literal("null", Value{Kind: KindNull})
	case 'N':
		return Value{}, p.fail("NaN is not JSON")
	case 'I':
		return Value{}, p.fail("Infinity is not JSON")
	default:
		if c == '-' || (c >= '0' && c <= '9') {
			return p.number()
		}
		return Value{}, p.fail(fmt.Sprintf("unexpected character %q", c))
	}
}

func (p *parser) literal(word string, v Value) (Value, error) {
	if len(p.s)-p.i >= len(word) && p.s[p.i:p.i+len(word)] == word {
		p.i += len(word)
		return v, nil
	}
	return Value{}, p.fail("invalid literal")
}

func (p *parser) object(depth int) (Value, error) {
	if depth > MaxDepth {
		return Value{}, p.fail(fmt.Sprintf("nesting deeper than %d", MaxDepth))
	}
	p.i++ // {
	v := Value{Kind: KindObject}
	p.skipSpace()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		v.Members = []Member{}
		return v, nil
	}
	var seen map[string]struct{}
	base := len(p.mstack)
	defer func() { p.mstack = p.mstack[:base] }()
	for {
		members := p.mstack[base:]
		p.skipSpace()
		if p.i >= len(p.s) || p.s[p.i] != '"' {
			return Value{}, p.fail("want a string key")
		}
		keyAt := p.i
		key, err := p.str()
		if err != nil {
			return Value{}, err
		}
		// Python keeps the last of duplicate keys; a record that says two
		// things about one key says nothing we can trust.
		if len(members) < 16 {
			for i := range members {
				if members[i].Key == key {
					return Value{}, &ReadError{keyAt, fmt.Sprintf("duplicate key %q", key)}
				}
			}
		} else {
			if seen == nil {
				seen = p.keySet(depth)
				for i := range members {
					seen[members[i].Key] = struct{}{}
				}
			}
			if _, dup := seen[key]; dup {
				return Value{}, &ReadError{keyAt, fmt.Sprintf("duplicate key %q", key)}
			}
			seen[key] = struct{}{}
		}
		p.skipSpace()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return Value{}, p.fail("want ':' after key")
		}
		p.i++
		p.skipSpace()
		val, err := p.value(depth)
		if err != nil {
			return Value{}, err
		}
		p.mstack = append(p.mstack, Member{Key: key, Value: val})
		p.skipSpace()
		if p.i >= len(p.s) {
			return Value{}, p.fail("unexpected end of input in object")
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			start := len(p.marena)
			p.marena = append(p.marena, p.mstack[base:]...)
			v.Members = p.marena[start:len(p.marena):len(p.marena)]
			return v, nil
		default:
			return Value{}, p.fail("want ',' or '}' in object")
		}
	}
}

// keySet returns the empty key set for depth, reusing an earlier one.
func (p *parser) keySet(depth int) map[string]struct{} {
	for len(p.seen) <= depth {
		p.seen = append(p.seen, nil)
	}
	if p.seen[depth] == nil {
		p.seen[depth] = make(map[string]struct{}, 64)
	} else {
		clear(p.seen[depth])
	}
	return p.seen[depth]
}

func (p *parser) array(depth int) (Value, error) {
	if depth > MaxDepth {
		return Value{}, p.fail(fmt.Sprintf("nesting deeper than %d", MaxDepth))
	}
	p.i++ // [
	v := Value{Kind: KindArray, Members: []Member{}}
	p.skipSpace()
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.i++
		return v, nil
	}
	base := len(p.mstack)
	defer func() { p.mstack = p.mstack[:base] }()
	for {
		p.skipSpace()
		e, err := p.value(depth)
		if err != nil {
			return Value{}, err
		}
		p.mstack = append(p.mstack, Member{Value: e})
		p.skipSpace()
		if p.i >= len(p.s) {
			return Value{}, p.fail("unexpected end of input in array")
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			start := len(p.marena)
			p.marena = append(p.marena, p.mstack[base:]...)
			v.Members = p.marena[start:len(p.marena):len(p.marena)]
			return v, nil
		default:
			return Value{}, p.fail("want ',' or ']' in array")
		}
	}
}

func (p *parser) number() (Value, error) {
	start := p.i
	s := p.s
	i := p.i
	if s[i] == '-' {
		i++
		if i < len(s) && s[i] == 'I' {
			p.i = i
			return Value{}, p.fail("-Infinity is not JSON")
		}
	}
	if i >= len(s) {
		p.i = i
		return Value{}, p.fail("truncated number")
	}
	if s[i] == '0' {
		i++
	} else if s[i] >= '1' && s[i] <= '9' {
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	} else {
		p.i = i
		return Value{}, p.fail("invalid number")
	}
	float := false
	if i < len(s) && s[i] == '.' {
		float = true
		i++
		d := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == d {
			p.i = i
			return Value{}, p.fail("invalid number: no digits after '.'")
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		float = true
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		d := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == d {
			p.i = i
			return Value{}, p.fail("invalid number: no digits in exponent")
		}
	}
	p.i = i
	text := s[start:i]
	if digits := len(strings.TrimPrefix(text, "-")); !float && digits > maxIntDigits {
		p.i = start
		return Value{}, p.fail(fmt.Sprintf("integer with %d digits: Python's json refuses more than %d, so the listing could not read or hash this record", digits, maxIntDigits))
	}
	if float {
		if _, err := strconv.ParseFloat(text, 64); err != nil {
			p.i = start
			return Value{}, p.fail(fmt.Sprintf("number %.40s is too large for a float64", text))
		}
	}
	return Value{Kind: KindNumber, Str: text, Float: float}, nil
}

// str reads a JSON string at p.i and returns it decoded.
func (p *parser) str() (string, error) {
	p.i++ // opening quote
	start := p.i
	s := p.s
	// Fast path: no escapes.
	for i := start; i < len(s); i++ {
		for i+8 <= len(s) && noStop8(s[i:i+8]) {
			i += 8
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c == '"' {
			p.i = i + 1
			return s[start:i], nil
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			p.i = i
			return "", p.fail("control character in string")
		}
	}
	buf := make([]byte, 0, 64)
	i := start
	for {
		if i >= len(s) {
			p.i = i
			return "", p.fail("unterminated string")
		}
		c := s[i]
		switch {
		case c == '"':
			p.i = i + 1
			return string(buf), nil
		case c < 0x20:
			p.i = i
			return "", p.fail("control character in string")
		case c != '\\':
			buf = append(buf, c)
			i++
			continue
		}
		if i+1 >= len(s) {
			p.i = i
			return "", p.fail("unterminated string")
		}
		e := s[i+1]
		i += 2
		switch e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, ok := hex4(s, i)
			if !ok {
				p.i = i
				return "", p.fail("invalid \\u escape")
			}
			i += 4
			if r >= 0xD800 && r < 0xDC00 {
				if i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
					if r2, ok := hex4(s, i+2); ok && r2 >= 0xDC00 && r2 < 0xE000 {
						r = 0x10000 + (r-0xD800)<<10 + (r2 - 0xDC00)
						i += 6
						buf = utf8.AppendRune(buf, r)
						continue
					}
				}
				p.i = i - 6
				return "", p.fail("lone surrogate escape in string")
			}
			if r >= 0xDC00 && r < 0xE000 {
				p.i = i - 6
				return "", p.fail("lone surrogate escape in string")
			}
			buf = utf8.AppendRune(buf, r)
		default:
			p.i = i - 2
			return "", p.fail(fmt.Sprintf("invalid escape \\%c", e))
		}
	}
}

// noStop8 reports whether 8 bytes hold no '"', no '\\' and no control
// character: bytes a string scan can pass over.
func noStop8(s string) bool {
	x := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	below := (x - ones*0x20) & ^x & highs
	quote := x ^ (ones * '"')
	slash := x ^ (ones * '\\')
	return (below | (quote-ones)&^quote&highs | (slash-ones)&^slash&highs) == 0
}

func hex4(s string, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, c := range []byte(s[i : i+4]) {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	return r, true
}
