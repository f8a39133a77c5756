package canonjson

import (
	"crypto/sha256"
	"encoding/hex"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Append appends v in canonical form: the bytes of Python's
// json.dumps(v, sort_keys=True, separators=(",", ":")). Keys are sorted by
// code point at every depth (UTF-8 byte order is code point order), every
// non-ASCII character is escaped as \uXXXX (surrogate pairs above U+FFFF),
// integers keep their digits and floats follow Python's repr.
func Append(b []byte, v *Value) []byte {
	var e encoder
	return e.append(b, v)
}

// Sum is the sha256 of a canonical form.
type Sum [sha256.Size]byte

// String returns the sum in lowercase hex.
func (s Sum) String() string {
	var buf [2 * sha256.Size]byte
	hex.Encode(buf[:], s[:])
	return string(buf[:])
}

// SHA256 returns the sha256 of v's canonical form.
func SHA256(v *Value) Sum {
	return sha256.Sum256(Append(nil, v))
}

// encoder keeps scratch space for sorting keys between values, and
// remembers the key order of the last few key sequences it sorted: records
// from one producer repeat their keys in the same order, so the sort is
// usually a comparison of the keys against a remembered sequence.
type encoder struct {
	// reader, when set, is the Reader that read the values: their hints
	// are true and their seqs name its known sequences.
	reader *Reader
	idx    []sortKey
	orders [8]keyOrder
	next   int // the order to replace next
	last   int // the order that matched last, tried first
}

// keyOrder is a remembered key sequence and its sorted permutation.
type keyOrder struct {
	keys []string
	perm []sortKey
}

// sortInto appends the member indexes of ms to e.idx in key order.
func (e *encoder) sortInto(ms []Member) {
	if len(ms) >= 4 {
	search:
		for n := range e.orders {
			k := (e.last + n) % len(e.orders)
			o := &e.orders[k]
			if len(o.keys) != len(ms) {
				continue
			}
			// From the end: sequences of one producer differ in their
			// optional keys, which come last.
			for i := len(ms) - 1; i >= 0; i-- {
				if o.keys[i] != ms[i].Key {
					continue search
				}
			}
			e.idx = append(e.idx, o.perm...)
			e.last = k
			return
		}
	}
	base := len(e.idx)
	e.idx = sortMembers(e.idx, ms)
	if len(ms) >= 4 {
		o := &e.orders[e.next]
		e.next = (e.next + 1) % len(e.orders)
		o.keys = o.keys[:0]
		for i := range ms {
			o.keys = append(o.keys, strings.Clone(ms[i].Key))
		}
		o.perm = append(o.perm[:0], e.idx[base:]...)
	}
}

// sortKey orders a member by the first 8 bytes of its key as an integer,
// falling back to the whole key only on a tie.
type sortKey struct {
	prefix uint64
	i      int
}

func keyPrefix(k string) uint64 {
	if len(k) >= 8 {
		return uint64(k[0])<<56 | uint64(k[1])<<48 | uint64(k[2])<<40 | uint64(k[3])<<32 |
			uint64(k[4])<<24 | uint64(k[5])<<16 | uint64(k[6])<<8 | uint64(k[7])
	}
	var p uint64
	for i := 0; i < len(k); i++ {
		p |= uint64(k[i]) << (56 - 8*i)
	}
	return p
}

func (e *encoder) append(b []byte, v *Value) []byte {
	switch v.Kind {
	case KindNull:
		return append(b, "null"...)
	case KindBool:
		if v.Bool {
			return append(b, "true"...)
		}
		return append(b, "false"...)
	case KindNumber:
		if v.Float {
			if e.reader != nil && v.hint&(hintFloat|hintReprFloat) != 0 {
				if v.hint&hintReprFloat != 0 {
					return append(b, v.Str...)
				}
				return AppendPythonFloat(b, v.f)
			}
			f, _ := strconv.ParseFloat(v.Str, 64)
			return AppendPythonFloat(b, f)
		}
		if v.Str == "-0" {
			return append(b, '0')
		}
		return append(b, v.Str...)
	case KindString:
		if e.reader != nil && v.hint&hintPlain != 0 {
			b = append(b, '"')
			b = append(b, v.Str...)
			return append(b, '"')
		}
		return AppendPythonString(b, v.Str)
	case KindArray:
		b = append(b, '[')
		for i := range v.Members {
			if i > 0 {
				b = append(b, ',')
			}
			b = e.append(b, &v.Members[i].Value)
		}
		return append(b, ']')
	default:
		if e.reader != nil {
			if ks := e.reader.knownOf(v.seq); ks != nil && len(ks.perm) == len(v.Members) {
				// The keys' canonical text, with the separators, is known.
				for n, k := range ks.perm {
					b = append(b, ks.text[n]...)
					b = e.append(b, &v.Members[k.i].Value)
				}
				return append(b, '}')
			}
		}
		b = append(b, '{')
		base := len(e.idx)
		e.sortInto(v.Members)
		for n := base; n < len(e.idx); n++ {
			if n > base {
				b = append(b, ',')
			}
			m := &v.Members[e.idx[n].i]
			if e.reader != nil && m.Value.hint&hintKeyPlain != 0 {
				b = append(b, '"')
				b = append(b, m.Key...)
				b = append(b, '"')
			} else {
				b = AppendPythonString(b, m.Key)
			}
			b = append(b, ':')
			b = e.append(b, &m.Value)
		}
		e.idx = e.idx[:base]
		return append(b, '}')
	}
}

// sortMembers appends the member indexes of ms to stack in key order
// (byte order of UTF-8 is code point order, as Python sorts).
func sortMembers(stack []sortKey, ms []Member) []sortKey {
	base := len(stack)
	for i := range ms {
		stack = append(stack, sortKey{keyPrefix(ms[i].Key), i})
	}
	idx := stack[base:]
	less := func(a, b sortKey) bool {
		if a.prefix != b.prefix {
			return a.prefix < b.prefix
		}
		return ms[a.i].Key < ms[b.i].Key
	}
	// Insertion sort: records have a few dozen keys, often nearly sorted.
	if len(idx) <= 48 {
		for i := 1; i < len(idx); i++ {
			for j := i; j > 0 && less(idx[j], idx[j-1]); j-- {
				idx[j], idx[j-1] = idx[j-1], idx[j]
			}
		}
		return stack
	}
	slices.SortFunc(idx, func(a, b sortKey) int {
		if less(a, b) {
			return -1
		}
		if less(b, a) {
			return 1
		}
		return 0
	})
	return stack
}

// AppendPythonFloat appends f as Python's repr(float) writes it: the
// shortest digits that round-trip, fixed notation for exponents from -4 to
// 15 with at least one digit after the point, scientific notation with a
// signed, two-digit-minimum exponent otherwise.
func AppendPythonFloat(b []byte, f float64) []byte {
	// From 1e-4 up to 1e16 the shortest digits are written in fixed
	// notation, which strconv writes directly; only a missing fraction
	// needs adding.
	if a := math.Abs(f); a >= 1e-4 && a < 1e16 {
		start := len(b)
		b = strconv.AppendFloat(b, f, 'f', -1, 64)
		if !slices.Contains(b[start:], '.') {
			b = append(b, ".0"...)
		}
		return b
	}
	return appendPythonFloatDigits(b, f)
}

// appendPythonFloatDigits is AppendPythonFloat for every float, built from
// the shortest digits and the exponent.
func appendPythonFloatDigits(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, "NaN"...)
	case math.IsInf(f, 1):
		return append(b, "Infinity"...)
	case math.IsInf(f, -1):
		return append(b, "-Infinity"...)
	}
	if math.Signbit(f) {
		b = append(b, '-')
		f = -f
	}
	if f == 0 {
		return append(b, "0.0"...)
	}
	var tmp, dig [32]byte
	e := strconv.AppendFloat(tmp[:0], f, 'e', -1, 64) // d[.ddd]e±XX
	digits := dig[:0]
	exp, expSign, inExp := 0, 1, false
	for _, c := range e {
		switch {
		case c == 'e':
			inExp = true
		case inExp && c == '-':
			expSign = -1
		case inExp && c == '+':
		case inExp:
			exp = exp*10 + int(c-'0')
		case c != '.':
			digits = append(digits, c)
		}
	}
	exp *= expSign
	if exp < -4 || exp >= 16 {
		b = append(b, digits[0])
		if len(digits) > 1 {
			b = append(b, '.')
			b = append(b, digits[1:]...)
		}
		b = append(b, 'e')
		if exp < 0 {
			b = append(b, '-')
			exp = -exp
		} else {
			b = append(b, '+')
		}
		if exp < 10 {
			b = append(b, '0')
		}
		return strconv.AppendInt(b, int64(exp), 10)
	}
	if exp < 0 {
		b = append(b, "0."...)
		for i := 0; i < -exp-1; i++ {
			b = append(b, '0')
		}
		return append(b, digits...)
	}
	if len(digits) <= exp+1 {
		b = append(b, digits...)
		for i := len(digits); i < exp+1; i++ {
			b = append(b, '0')
		}
		return append(b, ".0"...)
	}
	b = append(b, digits[:exp+1]...)
	b = append(b, '.')
	return append(b, digits[exp+1:]...)
}
