package canonjson

import (
	"crypto/sha256"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxBytes bounds one value's text; a longer input is refused.
const MaxBytes = 16 << 20

// MaxIntDigits is CPython's default int_max_str_digits: json.loads refuses
// a longer integer, so no listing-compatible hash exists for it, and Read
// refuses it too.
const MaxIntDigits = 4300

// MaxDepth bounds nesting of arrays and objects.
const MaxDepth = 256

// ReadError says why bytes are not exactly one acceptable JSON value:
// either not JSON at all, or JSON that this package refuses (a duplicate
// key, a lone surrogate, a number out of float64 range).
type ReadError struct {
	Offset int
	Msg    string
}

func (e *ReadError) Error() string { return fmt.Sprintf("%s (at byte %d)", e.Msg, e.Offset) }

// Read reads exactly one JSON value from raw, strictly: valid UTF-8, no
// byte order mark, no NaN or Infinity, no duplicate keys, no lone
// surrogates, no number beyond float64, no integer of more than
// MaxIntDigits digits, nothing after the value but whitespace, nesting at
// most MaxDepth, at most MaxBytes bytes.
func Read(raw []byte) (Value, error) {
	if len(raw) > MaxBytes {
		return Value{}, tooLarge(len(raw))
	}
	var r Reader
	v, err := r.Read(string(raw))
	if err != nil {
		return Value{}, err
	}
	return *v, nil
}

func tooLarge(n int) error {
	return &ReadError{0, fmt.Sprintf("record is %d bytes, more than the %d MiB limit", n, MaxBytes>>20)}
}

// precheck refuses oversized input, a byte order mark and invalid UTF-8.
func precheck(s string) error {
	if len(s) > MaxBytes {
		return tooLarge(len(s))
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

// A Reader reads JSON values one after another, as Read does, reusing its
// memory: a value it returns holds until its next Read. Members and
// elements are collected on a stack and copied into an arena when their
// object or array closes, so a Reader allocates almost nothing per value.
// It also remembers the key sequences of objects (records from one
// producer repeat them) in a trie (keyTrie): an object whose keys follow
// one needs no duplicate check, and its sorted key order and its members'
// slots for Find are known already. The zero Reader is ready to use; a
// Reader is not safe for concurrent use.
type Reader struct {
	s      string
	i      int
	mstack []Member
	marena []Member
	top    Value
	// seen holds one reusable key set per nesting depth, for objects too
	// large for a linear duplicate scan.
	seen []map[string]struct{}
	// keys are the key sequences of objects read before.
	keys keyTrie
	// sawHigh is set when a string read since reset may hold a byte of
	// 0x7F or more.
	sawHigh bool
	enc     encoder
	buf     []byte
}

// Read reads exactly one JSON value from s, as the package's Read does.
// The value lives in r and holds until r's next Read.
func (rd *Reader) Read(s string) (*Value, error) {
	if len(s) > MaxBytes || strings.HasPrefix(s, "\xEF\xBB\xBF") {
		return nil, precheck(s)
	}
	rd.reset(s)
	v, err := rd.read()
	// Outside strings the reader takes ASCII only, so a value read whole
	// without a byte over 0x7E in a string is valid UTF-8. Otherwise
	// invalid UTF-8 is the reason, wherever it is.
	if err != nil || rd.sawHigh {
		if perr := precheck(s); perr != nil {
			return nil, perr
		}
	}
	if err != nil {
		return nil, err
	}
	rd.top = v
	return &rd.top, nil
}

// ReadSum is Read, and the sha256 of the value's canonical form (Append).
// It hashes with what the read learnt (plain strings, floats already in
// Python's form, known key orders), which an edited Value could no longer
// be trusted with.
func (rd *Reader) ReadSum(s string) (*Value, Sum, error) {
	v, err := rd.Read(s)
	if err != nil {
		return nil, Sum{}, err
	}
	rd.enc.reader = rd
	rd.buf = rd.enc.append(rd.buf[:0], v)
	return v, sha256.Sum256(rd.buf), nil
}

// read parses rd.s, which holds the whole input.
func (rd *Reader) read() (Value, error) {
	rd.i = 0
	rd.skipSpace()
	if rd.i == len(rd.s) {
		return Value{}, &ReadError{0, "empty input, want one JSON value"}
	}
	var v Value
	if err := rd.value(&v, 0); err != nil {
		return Value{}, err
	}
	rd.skipSpace()
	if rd.i != len(rd.s) {
		return Value{}, rd.fail("trailing data after the JSON value")
	}
	return v, nil
}

// reset drops the arenas' contents for the next value. Values read before
// must no longer be used.
func (rd *Reader) reset(s string) {
	rd.s, rd.i, rd.sawHigh = s, 0, false
	rd.mstack, rd.marena = rd.mstack[:0], rd.marena[:0]
	rd.keys.begin()
}

func (rd *Reader) fail(msg string) error { return &ReadError{rd.i, msg} }

func (rd *Reader) skipSpace() {
	s, i := rd.s, rd.i
	if i < len(s) && s[i] > ' ' {
		return // records are mostly compact
	}
	if i+1 < len(s) && s[i] == ' ' && s[i+1] > ' ' {
		rd.i = i + 1 // or written with json.dumps's ", " and ": "
		return
	}
	rd.skipSpaceSlow()
}

func (rd *Reader) skipSpaceSlow() {
	for rd.i < len(rd.s) {
		switch rd.s[rd.i] {
		case ' ', '\t', '\n', '\r':
			rd.i++
		default:
			return
		}
	}
}

// value reads one value into *dst, which must be zero. dst may point into
// rd.mstack: it is written only before or after nested values are read.
func (rd *Reader) value(dst *Value, depth int) error {
	if rd.i >= len(rd.s) {
		return rd.fail("unexpected end of input")
	}
	switch c := rd.s[rd.i]; c {
	case '{':
		dst.Kind = KindObject
		ms, seq, err := rd.object(depth + 1)
		dst.Members, dst.seq = ms, seq
		return err
	case '[':
		dst.Kind = KindArray
		ms, err := rd.array(depth + 1)
		dst.Members = ms
		return err
	}
	return rd.scalar(dst)
}

// scalar reads a value that is not an object or array into *dst.
func (rd *Reader) scalar(dst *Value) error {
	switch c := rd.s[rd.i]; c {
	case '"':
		s, plain, err := rd.str()
		dst.Kind, dst.Str = KindString, s
		if plain {
			dst.hint |= hintPlain
		}
		return err
	case 't':
		dst.Kind, dst.Bool = KindBool, true
		return rd.literal("true")
	case 'f':
		dst.Kind = KindBool
		return rd.literal("false")
	case 'n':
		return rd.literal("null")
	case 'N':
		return rd.fail("NaN is not JSON")
	case 'I':
		return rd.fail("Infinity is not JSON")
	default:
		if c == '-' || (c >= '0' && c <= '9') {
			return rd.number(dst)
		}
		return rd.fail(fmt.Sprintf("unexpected character %q", c))
	}
}

func (rd *Reader) literal(word string) error {
	if len(rd.s)-rd.i >= len(word) && rd.s[rd.i:rd.i+len(word)] == word {
		rd.i += len(word)
		return nil
	}
	return rd.fail("invalid literal")
}

// bigObject is the member count from which duplicate keys are found with
// a key set rather than a linear scan.
const bigObject = 16

// rememberObject is the member count from which an object's key sequence
// is added to the trie: records have a dozen keys or more, the objects
// nested in them (envs, attempts) fewer. A smaller object whose keys
// follow the trie (the first keys of a record) is known all the same.
const rememberObject = 10

// object reads an object's members, and the seq its Value gets; the
// returned slice lives in rd.marena.
func (rd *Reader) object(depth int) ([]Member, uint32, error) {
	if depth > MaxDepth {
		return nil, 0, rd.fail(fmt.Sprintf("nesting deeper than %d", MaxDepth))
	}
	rd.i++ // {
	rd.skipSpace()
	if rd.i < len(rd.s) && rd.s[rd.i] == '}' {
		rd.i++
		return []Member{}, 0, nil
	}
	var seen map[string]struct{}
	// node is the trie node of the keys read so far while they follow the
	// trie: a path of the trie holds no duplicate, so there is nothing to
	// check. Once a key leaves the trie, node stays where it left.
	node, follows := int32(0), true
	base := len(rd.mstack)
	for {
		rd.skipSpace()
		if rd.i >= len(rd.s) || rd.s[rd.i] != '"' {
			return nil, 0, rd.fail("want a string key")
		}
		var key string
		plain := true
		c, n := int32(0), 0
		if follows {
			c, n = rd.keys.next(node, rd.s[rd.i:])
		}
		if c != 0 {
			// The key the last object with these keys had next.
			rd.i += n
			key, node = rd.keys.nodes[c].key, c
		} else {
			keyAt := rd.i
			var err error
			if key, plain, err = rd.str(); err != nil {
				return nil, 0, err
			}
			if follows {
				if c := rd.keys.child(node, key); c != 0 {
					node = c
				} else {
					follows = false
				}
			}
			// Python keeps the last of duplicate keys; a record that
			// says two things about one key says nothing we can trust.
			if !follows {
				if err := rd.duplicate(base, depth, &seen, keyAt, key); err != nil {
					return nil, 0, err
				}
			}
		}
		rd.skipSpace()
		if rd.i >= len(rd.s) || rd.s[rd.i] != ':' {
			return nil, 0, rd.fail("want ':' after key")
		}
		rd.i++
		rd.skipSpace()
		at := rd.push()
		m := &rd.mstack[at]
		m.Key = key
		if plain {
			m.Value.hint = hintKeyPlain
		}
		if err := rd.memberValue(at, depth); err != nil {
			return nil, 0, err
		}
		rd.skipSpace()
		if rd.i >= len(rd.s) {
			return nil, 0, rd.fail("unexpected end of input in object")
		}
		switch rd.s[rd.i] {
		case ',':
			rd.i++
		case '}':
			rd.i++
			ms := rd.closeMembers(base)
			if !follows {
				if len(ms) < rememberObject {
					return ms, 0, nil
				}
				// The keys past node passed the duplicate check.
				if node = rd.keys.extend(node, ms[rd.keys.nodes[node].depth:]); node == 0 {
					return ms, 0, nil
				}
			}
			rd.keys.sortedAt(node, ms)
			return ms, uint32(node), nil
		default:
			return nil, 0, rd.fail("want ',' or '}' in object")
		}
	}
}

// duplicate returns the error for key, read at keyAt, when the members
// of the object open since base hold it already. From bigObject members
// on it keeps them in a key set, *seen.
func (rd *Reader) duplicate(base, depth int, seen *map[string]struct{}, keyAt int, key string) error {
	members := rd.mstack[base:]
	if len(members) < bigObject {
		for i := range members {
			if members[i].Key == key {
				return &ReadError{keyAt, fmt.Sprintf("duplicate key %q", key)}
			}
		}
		return nil
	}
	if *seen == nil {
		*seen = rd.keySet(depth)
		for i := range members {
			(*seen)[members[i].Key] = struct{}{}
		}
	}
	if _, dup := (*seen)[key]; dup {
		return &ReadError{keyAt, fmt.Sprintf("duplicate key %q", key)}
	}
	(*seen)[key] = struct{}{}
	return nil
}

// knownOf returns the sorted keys of the trie node that seq (of a Value
// this Reader read last) names, or nil when it names none.
func (rd *Reader) knownOf(seq uint32) *sortedKeys {
	if seq == 0 || int(seq) >= len(rd.keys.nodes) {
		return nil
	}
	return rd.keys.nodes[seq].sorted
}

// memberValue reads the value of the member in stack slot at. A scalar is
// read in place; an object or array is read aside, since reading its own
// members may grow (and move) the stack, then stored with the slot's hint.
func (rd *Reader) memberValue(at, depth int) error {
	if rd.i < len(rd.s) {
		// The slot's fields are set one by one once the members are read:
		// a whole Value copied into the slot is a slow store forward.
		switch rd.s[rd.i] {
		case '{':
			ms, seq, err := rd.object(depth + 1)
			if err != nil {
				return err
			}
			v := &rd.mstack[at].Value
			v.Kind, v.Members, v.seq = KindObject, ms, seq
			return nil
		case '[':
			ms, err := rd.array(depth + 1)
			if err != nil {
				return err
			}
			v := &rd.mstack[at].Value
			v.Kind, v.Members = KindArray, ms
			return nil
		}
	}
	return rd.value(&rd.mstack[at].Value, depth)
}

// push adds a zero member to the stack and returns its slot. The member
// is zeroed in place and filled field by field: building it whole and
// copying it in is a slow store forward on every key.
func (rd *Reader) push() int {
	n := len(rd.mstack)
	if n == cap(rd.mstack) {
		rd.mstack = append(rd.mstack, Member{})
		return n
	}
	rd.mstack = rd.mstack[:n+1]
	rd.mstack[n] = Member{}
	return n
}

// closeMembers moves the members above base from the stack into the arena
// and returns them.
func (rd *Reader) closeMembers(base int) []Member {
	start := len(rd.marena)
	rd.marena = append(rd.marena, rd.mstack[base:]...)
	rd.mstack = rd.mstack[:base]
	return rd.marena[start:len(rd.marena):len(rd.marena)]
}

// keySet returns the empty key set for depth, reusing an earlier one.
func (rd *Reader) keySet(depth int) map[string]struct{} {
	for len(rd.seen) <= depth {
		rd.seen = append(rd.seen, nil)
	}
	if rd.seen[depth] == nil {
		rd.seen[depth] = make(map[string]struct{}, 64)
	} else {
		clear(rd.seen[depth])
	}
	return rd.seen[depth]
}

// array reads an array's elements; the returned slice lives in rd.marena.
func (rd *Reader) array(depth int) ([]Member, error) {
	if depth > MaxDepth {
		return nil, rd.fail(fmt.Sprintf("nesting deeper than %d", MaxDepth))
	}
	rd.i++ // [
	rd.skipSpace()
	if rd.i < len(rd.s) && rd.s[rd.i] == ']' {
		rd.i++
		return []Member{}, nil
	}
	base := len(rd.mstack)
	for {
		rd.skipSpace()
		at := rd.push()
		if err := rd.memberValue(at, depth); err != nil {
			return nil, err
		}
		rd.skipSpace()
		if rd.i >= len(rd.s) {
			return nil, rd.fail("unexpected end of input in array")
		}
		switch rd.s[rd.i] {
		case ',':
			rd.i++
		case ']':
			rd.i++
			return rd.closeMembers(base), nil
		default:
			return nil, rd.fail("want ',' or ']' in array")
		}
	}
}

func (rd *Reader) number(dst *Value) error {
	start := rd.i
	s := rd.s
	i := rd.i
	if s[i] == '-' {
		i++
		if i < len(s) && s[i] == 'I' {
			rd.i = i
			return rd.fail("-Infinity is not JSON")
		}
	}
	if i >= len(s) {
		rd.i = i
		return rd.fail("truncated number")
	}
	intAt := i
	if s[i] == '0' {
		i++
	} else if s[i] >= '1' && s[i] <= '9' {
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	} else {
		rd.i = i
		return rd.fail("invalid number")
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
			rd.i = i
			return rd.fail("invalid number: no digits after '.'")
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
			rd.i = i
			return rd.fail("invalid number: no digits in exponent")
		}
	}
	rd.i = i
	text := s[start:i]
	if digits := len(strings.TrimPrefix(text, "-")); !float && digits > MaxIntDigits {
		rd.i = start
		return rd.fail(fmt.Sprintf("integer with %d digits: Python's json refuses more than %d, so the listing could not read or hash this record", digits, MaxIntDigits))
	}
	dst.Kind, dst.Str, dst.Float = KindNumber, text, float
	if float && !exp && reprFixed(s[intAt:intEnd], s[fracAt:i]) {
		dst.hint |= hintReprFloat
		return nil
	}
	if float {
		f, err := strconv.ParseFloat(text, 64)
		if err != nil {
			rd.i = start
			return rd.fail(fmt.Sprintf("number %.40s is too large for a float64", text))
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

// str reads a JSON string at rd.i and returns it decoded, and whether it
// is plain: printable ASCII without '"' and '\\', as read.
func (rd *Reader) str() (string, bool, error) {
	rd.i++ // opening quote
	start := rd.i
	s := rd.s
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
			rd.i = i + 1
			plain := high&0x8080808080808080 == 0
			rd.sawHigh = rd.sawHigh || !plain
			return s[start:i], plain, nil
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			rd.i = i
			return "", false, rd.fail("control character in string")
		}
		high |= uint64(c) | uint64(c+1)
	}
	buf := make([]byte, 0, 64)
	i := start
	for {
		if i >= len(s) {
			rd.i = i
			return "", false, rd.fail("unterminated string")
		}
		c := s[i]
		switch {
		case c == '"':
			rd.i = i + 1
			return string(buf), false, nil
		case c < 0x20:
			rd.i = i
			return "", false, rd.fail("control character in string")
		case c != '\\':
			if c >= 0x80 {
				rd.sawHigh = true
			}
			buf = append(buf, c)
			i++
			continue
		}
		if i+1 >= len(s) {
			rd.i = i
			return "", false, rd.fail("unterminated string")
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
				rd.i = i
				return "", false, rd.fail("invalid \\u escape")
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
				rd.i = i - 6
				return "", false, rd.fail("lone surrogate escape in string")
			}
			if r >= 0xDC00 && r < 0xE000 {
				rd.i = i - 6
				return "", false, rd.fail("lone surrogate escape in string")
			}
			buf = utf8.AppendRune(buf, r)
		default:
			rd.i = i - 2
			return "", false, rd.fail(fmt.Sprintf("invalid escape \\%c", e))
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
