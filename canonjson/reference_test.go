package canonjson

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// referenceCanonical is the plain reader the fast one is fuzzed against:
// jsontext reads the tokens (it refuses invalid UTF-8, duplicate names,
// lone surrogate escapes, NaN, trailing data) and this function adds the
// deliberate strictness documented on Read (no byte order mark, at most
// MaxBytes, nesting at most MaxDepth, integers of at most MaxIntDigits
// digits, floats within float64), then writes Python's canonical form the
// slow and obvious way: members sorted with slices.SortFunc, strings
// escaped rune by rune. It returns an error exactly when Read must.
func referenceCanonical(raw []byte) ([]byte, error) {
	if len(raw) > MaxBytes {
		return nil, errors.New("too large")
	}
	if bytes.HasPrefix(raw, []byte("\xEF\xBB\xBF")) {
		return nil, errors.New("byte order mark")
	}
	dec := jsontext.NewDecoder(bytes.NewReader(raw))
	out, err := referenceValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return nil, fmt.Errorf("trailing data: %v", err)
	}
	return out, nil
}

// referenceValue reads one value from dec at nesting depth and returns its
// canonical form.
func referenceValue(dec *jsontext.Decoder, depth int) ([]byte, error) {
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, err
	}
	switch tok.Kind() {
	case 'n':
		return []byte("null"), nil
	case 't':
		return []byte("true"), nil
	case 'f':
		return []byte("false"), nil
	case '"':
		return referenceString(tok.String()), nil
	case '0':
		return referenceNumber(tok.String())
	case '[':
		if depth+1 > MaxDepth {
			return nil, errors.New("too deep")
		}
		out := []byte{'['}
		for dec.PeekKind() != ']' {
			v, err := referenceValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			if len(out) > 1 {
				out = append(out, ',')
			}
			out = append(out, v...)
		}
		if _, err := dec.ReadToken(); err != nil {
			return nil, err
		}
		return append(out, ']'), nil
	case '{':
		if depth+1 > MaxDepth {
			return nil, errors.New("too deep")
		}
		type member struct {
			key   string
			value []byte
		}
		var ms []member
		for dec.PeekKind() != '}' {
			k, err := dec.ReadToken()
			if err != nil {
				return nil, err
			}
			key := k.String() // a token holds until the next read
			v, err := referenceValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			ms = append(ms, member{key, v})
		}
		if _, err := dec.ReadToken(); err != nil {
			return nil, err
		}
		// Go compares strings by UTF-8 bytes, which is code point order:
		// Python's sort_keys order.
		slices.SortFunc(ms, func(a, b member) int { return strings.Compare(a.key, b.key) })
		out := []byte{'{'}
		for i, m := range ms {
			if i > 0 {
				out = append(out, ',')
			}
			out = append(out, referenceString(m.key)...)
			out = append(out, ':')
			out = append(out, m.value...)
		}
		return append(out, '}'), nil
	}
	return nil, fmt.Errorf("unexpected token %v", tok)
}

// referenceString writes s as json.dumps does: ASCII only, the short
// escapes, \uXXXX for everything else outside printable ASCII, surrogate
// pairs above U+FFFF.
func referenceString(s string) []byte {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r >= 0x20 && r < 0x7F:
			b.WriteRune(r)
		case r > 0xFFFF:
			r -= 0x10000
			fmt.Fprintf(&b, `\u%04x\u%04x`, 0xD800+(r>>10), 0xDC00+(r&0x3FF))
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	b.WriteByte('"')
	return []byte(b.String())
}

// referenceNumber writes a JSON number as Python reads and writes it: an
// integer keeps its digits (-0 is 0), anything with a fraction or exponent
// is a float written as repr writes it.
func referenceNumber(text string) ([]byte, error) {
	if !strings.ContainsAny(text, ".eE") {
		digits := strings.TrimPrefix(text, "-")
		if len(digits) > MaxIntDigits {
			return nil, errors.New("integer too long for Python")
		}
		if digits == "0" {
			return []byte("0"), nil
		}
		return []byte(text), nil
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return nil, fmt.Errorf("float out of range: %v", err)
	}
	return []byte(pythonRepr(f)), nil
}

// pythonRepr is repr(float): the shortest round-trip digits, in fixed
// notation when the decimal exponent is from -4 to 15 (with ".0" when
// there is no fraction), else d.ddde±XX.
func pythonRepr(f float64) string {
	if f == 0 {
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	sci := strconv.FormatFloat(f, 'e', -1, 64) // -d.ddde±XX
	mant, expText, _ := strings.Cut(sci, "e")
	exp, _ := strconv.Atoi(expText)
	if exp < -4 || exp >= 16 {
		sign := "+"
		if exp < 0 {
			sign, exp = "-", -exp
		}
		return fmt.Sprintf("%se%s%02d", mant, sign, exp)
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// fuzzKeys are keys that the vectors and short fuzz inputs hold.
var fuzzKeys = NewKeys("seed", "run_id", "a", "k00", "k17", "")

// checkAgainstReference reads raw with Read, with a Reader that has read
// it once before, and with the reference, and wants one answer.
func checkAgainstReference(t *testing.T, raw []byte) {
	t.Helper()
	want, refErr := referenceCanonical(raw)
	v, err := Read(raw)
	if (err == nil) != (refErr == nil) {
		t.Fatalf("%q:\nRead: %v\nreference: %v", raw, err, refErr)
	}
	if err != nil {
		if err.Error() == "" {
			t.Fatalf("refused %q without a message", raw)
		}
		return
	}
	if got := Append(nil, &v); !bytes.Equal(got, want) {
		t.Fatalf("%q:\nAppend    %s\nreference %s", raw, got, want)
	}
	var rd Reader
	for round := range 2 {
		rv, sum, err := rd.ReadSum(string(raw))
		if err != nil {
			t.Fatalf("%q: Reader round %d: %v", raw, round, err)
		}
		if sum != Sum(sha256Sum(want)) {
			t.Fatalf("%q: Reader round %d hashes other bytes than %s", raw, round, want)
		}
		if got := Append(nil, rv); !bytes.Equal(got, want) {
			t.Fatalf("%q: Reader round %d:\nAppend    %s\nreference %s", raw, round, got, want)
		}
		got, plain := make([]int32, fuzzKeys.Len()), make([]int32, fuzzKeys.Len())
		rd.Find(fuzzKeys, rv, got)
		fuzzKeys.Find(rv, plain)
		if !slices.Equal(got, plain) {
			t.Fatalf("%q: Reader round %d: Find %v, Keys.Find %v", raw, round, got, plain)
		}
	}
	if !utf8.Valid(want) {
		t.Fatalf("canonical form %q is not UTF-8", want)
	}
}

// addSeeds seeds a fuzz target with every conformance vector's bytes
// (testdata/fuzz/<target>/ holds the corpus found by earlier runs).
func addSeeds(f *testing.F) {
	data, err := os.ReadFile(filepath.Join("..", "testdata", "vectors", "vectors.jsonl"))
	if err != nil {
		f.Fatal(err)
	}
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var v struct {
			Input       *string `json:"input"`
			InputBase64 []byte  `json:"input_base64"`
		}
		if err := jsonUnmarshal(line, &v); err != nil {
			f.Fatal(err)
		}
		if v.Input != nil {
			f.Add([]byte(*v.Input))
		} else {
			f.Add(v.InputBase64)
		}
	}
	for _, s := range []string{`1.50`, `-0`, `-0.0`, `1e400`, `1e-400`, `"\ud800"`, `"\ud83d\ude00"`, "\"\x7f\"",
		`{"a":1,"a":2}`, `{"a":1,"\u0061":2}`, strings.Repeat("[", 257) + strings.Repeat("]", 257),
		strings.Repeat("9", 4301), `[9007199254740993.0, 1e16, 0.0001, 0.00001]`, "\xEF\xBB\xBF{}", `{} {}`} {
		f.Add([]byte(s))
	}
}

// FuzzRead: Read accepts exactly what the reference reader accepts, and
// writes the reference's canonical bytes; so does a Reader reading the
// input for the second time (its remembered key sequences in play).
func FuzzRead(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, raw []byte) { checkAgainstReference(t, raw) })
}

// TestReadMatchesReference runs the reference comparison over the
// conformance vectors and random values, outside fuzzing.
func TestReadMatchesReference(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "testdata", "vectors", "vectors.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var v struct {
			Input       *string `json:"input"`
			InputBase64 []byte  `json:"input_base64"`
		}
		if err := jsonUnmarshal(line, &v); err != nil {
			t.Fatal(err)
		}
		raw := v.InputBase64
		if v.Input != nil {
			raw = []byte(*v.Input)
		}
		checkAgainstReference(t, raw)
		n++
	}
	if n < 80 {
		t.Fatalf("only %d vectors", n)
	}
}
