package flakegate

import (
	"fmt"
	"math/bits"
	"slices"
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
	var v Value
	if err := p.value(&v, 0); err != nil {
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
	// known are key sequences of large objects read before, each free of
	// duplicates: an object whose keys follow one needs no key set.
	known     [8][]string
	knownNext int
	// perms[k] is the sorted member order of known[k] (sortMembers over
	// it), computed when an object first follows known[k] whole.
	perms  [8][]sortKey
	permOK [8]bool
	// slots[k] are the knownKeys' slots in an object holding known[k],
	// found when such an object is first a record.
	slots   [8]knownSlots
	slotsOK [8]bool
	// prefixes[k] caches which known sequence is the first n keys of
	// known[k] (-1 for none); emptied whenever known changes.
	prefixes [8][]knownPrefixOf
	// sortedK is the known sequence of the object the hasher was told of.
	sortedK int
	// sawHigh is set when a string read since reset may hold a byte of
	// 0x7F or more.
	sawHigh bool
}

// reset drops the arenas' contents for the next record. Values read before
// must no longer be used.
func (p *parser) reset(s string) {
	p.s, p.i, p.sawHigh = s, 0, false
	p.mstack, p.marena = p.mstack[:0], p.marena[:0]
	p.hash.enc.sorted, p.hash.enc.sortedPerm = nil, nil
}

func (p *parser) fail(msg string) error { return &ReadError{p.i, msg} }

func (p *parser) skipSpace() {
	if p.i < len(p.s) && p.s[p.i] > ' ' {
		return // records are mostly compact
	}
	p.skipSpaceSlow()
}

func (p *parser) skipSpaceSlow() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// value reads one value into *dst, which must be zero. dst may point into
// p.mstack: it is written only before or after nested values are read.
func (p *parser) value(dst *Value, depth int) error {
	if p.i >= len(p.s) {
		return p.fail("unexpected end of input")
	}
	switch c := p.s[p.i]; c {
	case '{':
		dst.Kind = KindObject
		ms, err := p.object(depth + 1)
		dst.Members = ms
		return err
	case '[':
		dst.Kind = KindArray
		ms, err := p.array(depth + 1)
		dst.Members = ms
		return err
	}
	return p.scalar(dst)
}

// scalar reads a value that is not an object or array into *dst.
func (p *parser) scalar(dst *Value) error {
	switch c := p.s[p.i]; c {
	case '"':
		s, plain, err := p.str()
		dst.Kind, dst.Str = KindString, s
		if plain {
			dst.hint |= hintPlain
		}
		return err
	case 't':
		dst.Kind, dst.Bool = KindBool, true
		return p.literal("true")
	case 'f':
		dst.Kind = KindBool
		return p.literal("false")
	case 'n':
		return p.literal("null")
	case 'N':
		return p.fail("NaN is not JSON")
	case 'I':
		return p.fail("Infinity is not JSON")
	default:
		if c == '-' || (c >= '0' && c <= '9') {
			return p.number(dst)
		}
		return p.fail(fmt.Sprintf("unexpected character %q", c))
	}
}

func (p *parser) literal(word string) error {
	if len(p.s)-p.i >= len(word) && p.s[p.i:p.i+len(word)] == word {
		p.i += len(word)
		return nil
	}
	return p.fail("invalid literal")
}

// bigObject is the member count from which duplicate keys are found with
// a key set rather than a linear scan.
const bigObject = 16

// object reads an object's members; the returned slice lives in p.marena.
func (p *parser) object(depth int) ([]Member, error) {
	if depth > MaxDepth {
		return nil, p.fail(fmt.Sprintf("nesting deeper than %d", MaxDepth))
	}
	p.i++ // {
	p.skipSpace()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		return []Member{}, nil
	}
	var seen map[string]struct{}
	var follow []string // a known key sequence this object's keys follow so far
	followK := -1       // its index in p.known
	base := len(p.mstack)
	for {
		p.skipSpace()
		if p.i >= len(p.s) || p.s[p.i] != '"' {
			return nil, p.fail("want a string key")
		}
		keyAt := p.i
		key, plain, err := p.str()
		if err != nil {
			return nil, err
		}
		// Python keeps the last of duplicate keys; a record that says two
		// things about one key says nothing we can trust.
		members := p.mstack[base:]
		n := len(members)
		// While the keys follow a known duplicate-free sequence there is
		// nothing to check.
		if n == 0 {
			follow, followK = p.knownPrefix(nil, key)
		} else if follow != nil && (n >= len(follow) || follow[n] != key) {
			follow, followK = p.knownPrefix(members, key)
		}
		switch {
		case follow != nil:
		case n < bigObject:
			for i := range members {
				if members[i].Key == key {
					return nil, &ReadError{keyAt, fmt.Sprintf("duplicate key %q", key)}
				}
			}
		default:
			if seen == nil {
				seen = p.keySet(depth)
				for i := range members {
					seen[members[i].Key] = struct{}{}
				}
			}
			if _, dup := seen[key]; dup {
				return nil, &ReadError{keyAt, fmt.Sprintf("duplicate key %q", key)}
			}
			seen[key] = struct{}{}
		}
		p.skipSpace()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return nil, p.fail("want ':' after key")
		}
		p.i++
		p.skipSpace()
		at := p.push()
		m := &p.mstack[at]
		m.Key = key
		if plain {
			m.Value.hint = hintKeyPlain
		}
		if err := p.memberValue(at, depth); err != nil {
			return nil, err
		}
		p.skipSpace()
		if p.i >= len(p.s) {
			return nil, p.fail("unexpected end of input in object")
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			ms := p.closeMembers(base)
			if len(ms) >= bigObject {
				switch {
				case seen != nil:
					p.remember(ms)
				case len(follow) == len(ms):
					p.noteSorted(ms, followK)
				case follow != nil:
					// The keys are a proper prefix of a known sequence:
					// find them whole, or know them from now on.
					if k := p.knownHead(followK, len(ms)); k >= 0 {
						p.noteSorted(ms, k)
					} else {
						p.remember(ms)
					}
				default:
					p.remember(ms)
				}
			}
			return ms, nil
		default:
			return nil, p.fail("want ',' or '}' in object")
		}
	}
}

// knownPrefix returns a known key sequence that starts with the keys of
// members and then key, and its index, or nil and -1.
func (p *parser) knownPrefix(members []Member, key string) ([]string, int) {
search:
	for n, k := range p.known {
		if len(k) <= len(members) || k[len(members)] != key {
			continue
		}
		for i := range members {
			if k[i] != members[i].Key {
				continue search
			}
		}
		return k, n
	}
	return nil, -1
}

// knownPrefixOf says known[k] is the first n keys of another known
// sequence (k is -1 when no known sequence is).
type knownPrefixOf struct{ n, k int }

// knownHead returns the index of the known sequence that is the first n
// keys of known[of], or -1.
func (p *parser) knownHead(of, n int) int {
	for _, c := range p.prefixes[of] {
		if c.n == n {
			return c.k
		}
	}
	k := -1
	for j, keys := range p.known {
		if slices.Equal(keys, p.known[of][:n]) {
			k = j
			break
		}
	}
	p.prefixes[of] = append(p.prefixes[of], knownPrefixOf{n, k})
	return k
}

// noteSorted tells the hasher the key order of ms, whose keys are exactly
// the known sequence k, so that it need not sort or compare them.
func (p *parser) noteSorted(ms []Member, k int) {
	if !p.permOK[k] {
		p.perms[k] = sortMembers(p.perms[k][:0], ms)
		p.permOK[k] = true
	}
	p.hash.enc.sorted, p.hash.enc.sortedPerm = &ms[0], p.perms[k]
	p.sortedK = k
}

// recordSlots returns the knownKeys' slots in v, a record just read, when
// its keys are a known sequence, or nil.
func (p *parser) recordSlots(v *Value) *knownSlots {
	if v.Kind != KindObject || len(v.Members) == 0 || &v.Members[0] != p.hash.enc.sorted {
		return nil
	}
	k := p.sortedK
	if !p.slotsOK[k] {
		findKnown(v.Members, &p.slots[k])
		p.slotsOK[k] = true
	}
	return &p.slots[k]
}

// remember keeps the keys of ms, which hold no duplicates, as a known
// sequence.
func (p *parser) remember(ms []Member) {
	k := p.known[p.knownNext][:0]
	for i := range ms {
		k = append(k, strings.Clone(ms[i].Key))
	}
	p.known[p.knownNext] = k
	p.permOK[p.knownNext] = false
	for i := range p.prefixes {
		p.prefixes[i] = p.prefixes[i][:0]
	}
	p.slotsOK[p.knownNext] = false
	p.knownNext = (p.knownNext + 1) % len(p.known)
}

// memberValue reads the value of the member in stack slot at. A scalar is
// read in place; an object or array is read aside, since reading its own
// members may grow (and move) the stack, then stored with the slot's hint.
func (p *parser) memberValue(at, depth int) error {
	if p.i < len(p.s) {
		// The slot's fields are set one by one once the members are read:
		// a whole Value copied into the slot is a slow store forward.
		switch p.s[p.i] {
		case '{':
			ms, err := p.object(depth + 1)
			if err != nil {
				return err
			}
			v := &p.mstack[at].Value
			v.Kind, v.Members = KindObject, ms
			return nil
		case '[':
			ms, err := p.array(depth + 1)
			if err != nil {
				return err
			}
			v := &p.mstack[at].Value
			v.Kind, v.Members = KindArray, ms
			return nil
		}
	}
	return p.value(&p.mstack[at].Value, depth)
}

// push adds a zero member to the stack and returns its slot. The member
// is zeroed in place and filled field by field: building it whole and
// copying it in is a slow store forward on every key.
func (p *parser) push() int {
	n := len(p.mstack)
	if n == cap(p.mstack) {
		p.mstack = append(p.mstack, Member{})
		return n
	}
	p.mstack = p.mstack[:n+1]
	p.mstack[n] = Member{}
	return n
}

// closeMembers moves the members above base from the stack into the arena
// and returns them.
func (p *parser) closeMembers(base int) []Member {
	start := len(p.marena)
	p.marena = append(p.marena, p.mstack[base:]...)
	p.mstack = p.mstack[:base]
	return p.marena[start:len(p.marena):len(p.marena)]
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

// array reads an array's elements; the returned slice lives in p.marena.
func (p *parser) array(depth int) ([]Member, error) {
	if depth > MaxDepth {
		return nil, p.fail(fmt.Sprintf("nesting deeper than %d", MaxDepth))
	}
	p.i++ // [
	p.skipSpace()
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.i++
		return []Member{}, nil
	}
	base := len(p.mstack)
	for {
		p.skipSpace()
		at := p.push()
		if err := p.memberValue(at, depth); err != nil {
			return nil, err
		}
		p.skipSpace()
		if p.i >= len(p.s) {
			return nil, p.fail("unexpected end of input in array")
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return p.closeMembers(base), nil
		default:
			return nil, p.fail("want ',' or ']' in array")
		}
	}
}

func (p *parser) number(dst *Value) error {
	start := p.i
	s := p.s
	i := p.i
	if s[i] == '-' {
		i++
		if i < len(s) && s[i] == 'I' {
			p.i = i
			return p.fail("-Infinity is not JSON")
		}
	}
	if i >= len(s) {
		p.i = i
		return p.fail("truncated number")
	}
	intAt := i
	if s[i] == '0' {
		i++
	} else if s[i] >= '1' && s[i] <= '9' {
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	} else {
		p.i = i
		return p.fail("invalid number")
	}
	intEnd, fracAt := i, i
	float, exp := false, false
	if i < len(s) && s[i] == '.' {
		float = true
		i++
		fracAt = i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == fracAt {
			p.i = i
			return p.fail("invalid number: no digits after '.'")
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		float, exp = true, true
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
			return p.fail("invalid number: no digits in exponent")
		}
	}
	p.i = i
	text := s[start:i]
	if digits := len(strings.TrimPrefix(text, "-")); !float && digits > maxIntDigits {
		p.i = start
		return p.fail(fmt.Sprintf("integer with %d digits: Python's json refuses more than %d, so the listing could not read or hash this record", digits, maxIntDigits))
	}
	dst.Kind, dst.Str, dst.Float = KindNumber, text, float
	if float && !exp && reprFixed(s[intAt:intEnd], s[fracAt:i]) {
		dst.hint |= hintReprFloat
		return nil
	}
	if float {
		f, err := strconv.ParseFloat(text, 64)
		if err != nil {
			p.i = start
			return p.fail(fmt.Sprintf("number %.40s is too large for a float64", text))
		}
		dst.f = f
		dst.hint |= hintFloat
	}
	return nil
}

// reprFixed reports whether a number written as digits intPart, '.',
// digits frac (no exponent, any sign) is already what Python's repr writes
// for it: at most 15 significant digits (so they are the shortest that
// round-trip), no trailing zero after the first fraction digit, and a
// magnitude of zero or from 1e-4 up to 1e16 (fixed notation).
func reprFixed(intPart, frac string) bool {
	if frac[len(frac)-1] == '0' && len(frac) > 1 {
		return false
	}
	if intPart != "0" {
		return len(intPart)+len(frac) <= 15
	}
	if frac == "0" {
		return true
	}
	zeros := 0
	for zeros < len(frac) && frac[zeros] == '0' {
		zeros++
	}
	return zeros <= 3 && len(frac)-zeros <= 15
}

// str reads a JSON string at p.i and returns it decoded, and whether it
// is plain: printable ASCII without '"' and '\\', as read.
func (p *parser) str() (string, bool, error) {
	p.i++ // opening quote
	start := p.i
	s := p.s
	// Fast path: no escapes. high collects every byte and the byte after
	// it: a high bit means a byte of 0x7F or more.
	var high uint64
	for i := start; i < len(s); i++ {
		for i+8 <= len(s) {
			x := load8(s[i : i+8])
			if st := stops64(x); st != 0 {
				// The lowest marked byte is the first stop: pass over
				// the bytes below it.
				k := bits.TrailingZeros64(st) &^ 7
				high |= (x | (x + 0x0101010101010101)) & (1<<k - 1)
				i += k >> 3
				break
			}
			high |= x | (x + 0x0101010101010101)
			i += 8
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c == '"' {
			p.i = i + 1
			plain := high&0x8080808080808080 == 0
			p.sawHigh = p.sawHigh || !plain
			return s[start:i], plain, nil
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			p.i = i
			return "", false, p.fail("control character in string")
		}
		high |= uint64(c) | uint64(c+1)
	}
	buf := make([]byte, 0, 64)
	i := start
	for {
		if i >= len(s) {
			p.i = i
			return "", false, p.fail("unterminated string")
		}
		c := s[i]
		switch {
		case c == '"':
			p.i = i + 1
			return string(buf), false, nil
		case c < 0x20:
			p.i = i
			return "", false, p.fail("control character in string")
		case c != '\\':
			if c >= 0x80 {
				p.sawHigh = true
			}
			buf = append(buf, c)
			i++
			continue
		}
		if i+1 >= len(s) {
			p.i = i
			return "", false, p.fail("unterminated string")
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
				return "", false, p.fail("invalid \\u escape")
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
				return "", false, p.fail("lone surrogate escape in string")
			}
			if r >= 0xDC00 && r < 0xE000 {
				p.i = i - 6
				return "", false, p.fail("lone surrogate escape in string")
			}
			buf = utf8.AppendRune(buf, r)
		default:
			p.i = i - 2
			return "", false, p.fail(fmt.Sprintf("invalid escape \\%c", e))
		}
	}
}

func load8(s string) uint64 {
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// stops64 returns a high bit for each of the 8 bytes (little-endian in x)
// that is '"', '\\' or a control character: a byte a string scan must
// stop at. Bytes above a stop may be marked too; zero means none.
func stops64(x uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	below := (x - ones*0x20) & ^x & highs
	quote := x ^ (ones * '"')
	slash := x ^ (ones * '\\')
	return below | (quote-ones)&^quote&highs | (slash-ones)&^slash&highs
}

// noStop8 reports whether 8 bytes hold no '"', no '\\' and no control
// character: bytes a string scan can pass over.
func noStop8(s string) bool { return stops64(load8(s)) == 0 }

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
