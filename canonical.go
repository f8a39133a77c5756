package flakegate

import (
	"crypto/sha256"
	"encoding/hex"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// AppendCanonical appends v in the listing's canonical form: the bytes of
// Python's json.dumps(v, sort_keys=True, separators=(",", ":")). Keys are
// sorted by code point at every depth (UTF-8 byte order is code point
// order), every non-ASCII character is escaped as \uXXXX (surrogate pairs
// above U+FFFF), integers keep their digits and floats follow Python's repr.
func AppendCanonical(b []byte, v *Value) []byte {
	var e canonEncoder
	return e.append(b, v)
}

// canonEncoder keeps scratch space for sorting keys between records.
type canonEncoder struct {
	idx []int
}

func (e *canonEncoder) append(b []byte, v *Value) []byte {
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
			f, _ := strconv.ParseFloat(v.Str, 64)
			return AppendPythonFloat(b, f)
		}
		if v.Str == "-0" {
			return append(b, '0')
		}
		return append(b, v.Str...)
	case KindString:
		return appendPythonString(b, v.Str)
	case KindArray:
		b = append(b, '[')
		for i := range v.Elems {
			if i > 0 {
				b = append(b, ',')
			}
			b = e.append(b, &v.Elems[i])
		}
		return append(b, ']')
	default:
		b = append(b, '{')
		base := len(e.idx)
		e.idx = sortMembers(e.idx, v.Members)
		for n := base; n < len(e.idx); n++ {
			if n > base {
				b = append(b, ',')
			}
			m := &v.Members[e.idx[n]]
			b = appendPythonString(b, m.Key)
			b = append(b, ':')
			b = e.append(b, &m.Value)
		}
		e.idx = e.idx[:base]
		return append(b, '}')
	}
}

// sortMembers appends the member indexes of ms to stack in key order.
func sortMembers(stack []int, ms []Member) []int {
	base := len(stack)
	for i := range ms {
		stack = append(stack, i)
	}
	idx := stack[base:]
	// Insertion sort: records have a few dozen keys, often nearly sorted.
	if len(idx) <= 32 {
		for i := 1; i < len(idx); i++ {
			for j := i; j > 0 && ms[idx[j]].Key < ms[idx[j-1]].Key; j-- {
				idx[j], idx[j-1] = idx[j-1], idx[j]
			}
		}
		return stack
	}
	slices.SortFunc(idx, func(a, b int) int { return strings.Compare(ms[a].Key, ms[b].Key) })
	return stack
}

const hexDigits = "0123456789abcdef"

// appendPythonString writes s as json.dumps does with ensure_ascii=True.
func appendPythonString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
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

func appendU(b []byte, r rune) []byte {
	return append(b, '\\', 'u', hexDigits[r>>12&0xF], hexDigits[r>>8&0xF], hexDigits[r>>4&0xF], hexDigits[r&0xF])
}

// AppendPythonFloat appends f as Python's repr(float) writes it: the
// shortest digits that round-trip, fixed notation for exponents from -4 to
// 15 with at least one digit after the point, scientific notation with a
// signed, two-digit-minimum exponent otherwise.
func AppendPythonFloat(b []byte, f float64) []byte {
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
	var tmp [32]byte
	e := strconv.AppendFloat(tmp[:0], f, 'e', -1, 64) // d[.ddd]e±XX
	mant, exps, _ := strings.Cut(string(e), "e")
	exp, _ := strconv.Atoi(exps)
	digits := strings.Replace(mant, ".", "", 1)
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

// CanonicalSHA256 returns the hex sha256 of v's canonical form.
func CanonicalSHA256(v *Value) string {
	var h hasher
	return h.sum(v)
}

// hasher keeps the canonical bytes' buffer between records.
type hasher struct {
	enc canonEncoder
	buf []byte
}

func (h *hasher) sum(v *Value) string {
	h.buf = h.enc.append(h.buf[:0], v)
	sum := sha256.Sum256(h.buf)
	return hex.EncodeToString(sum[:])
}

// RecordSHA256 reads raw strictly and returns its record_sha256, the
// digest the spec's listing prints for the same record.
func RecordSHA256(raw []byte) (string, error) {
	v, err := ReadValue(raw)
	if err != nil {
		return "", err
	}
	return CanonicalSHA256(&v), nil
}
