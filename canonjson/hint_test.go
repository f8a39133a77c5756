package canonjson

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// randomJSON writes a random JSON value: strings mix plain ASCII, DEL,
// quotes, backslashes, control characters, non-ASCII and escapes; numbers
// mix integers, short and long floats and exponents; objects are large
// enough now and then for the reader's key sequences.
func randomJSON(rnd *rand.Rand, b *strings.Builder, depth int) {
	str := func() {
		b.WriteByte('"')
		for n := rnd.IntN(12); n > 0; n-- {
			switch rnd.IntN(12) {
			case 0:
				b.WriteString(`\"`)
			case 1:
				b.WriteString(`\\`)
			case 2:
				b.WriteString("\x7f")
			case 3:
				b.WriteString(`\n`)
			case 4:
				b.WriteString("é中😀")
			case 5:
				b.WriteString(`\u00e9`)
			case 6:
				b.WriteString(`\ud83d\ude00`)
			case 7:
				b.WriteString(`\u001f`)
			default:
				b.WriteString("abcdefgh/._-"[rnd.IntN(12):])
			}
		}
		b.WriteByte('"')
	}
	if depth > 3 {
		str()
		return
	}
	switch rnd.IntN(8) {
	case 0:
		str()
	case 1:
		b.WriteString(strconv.Itoa(rnd.IntN(2000) - 1000))
	case 2:
		b.WriteString(strconv.FormatFloat(rnd.NormFloat64()*math.Pow(10, float64(rnd.IntN(40)-20)), 'g', -1, 64))
	case 3:
		b.WriteString([]string{"1.50", "0.0", "-0.0", "1e5", "1E+400"[:4], "123.456e-7", "0.00001", "100.0"}[rnd.IntN(8)])
	case 4:
		b.WriteString([]string{"true", "false", "null"}[rnd.IntN(3)])
	case 5:
		b.WriteByte('[')
		for i := rnd.IntN(5); i > 0; i-- {
			randomJSON(rnd, b, depth+1)
			if i > 1 {
				b.WriteByte(',')
			}
		}
		b.WriteByte(']')
	default:
		b.WriteByte('{')
		n := rnd.IntN(24)
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			if rnd.IntN(6) == 0 {
				str() // a key that may need escapes
			} else {
				fmt.Fprintf(b, `"k%02d"`, i)
			}
			b.WriteByte(':')
			randomJSON(rnd, b, depth+1)
		}
		b.WriteByte('}')
	}
}

// TestReaderHintsKeepCanonicalForm checks that a Reader's own hash, which
// trusts what the read learnt, hashes the same canonical bytes as Append,
// which does not, over many values read by one Reader.
func TestReaderHintsKeepCanonicalForm(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 11))
	var rd Reader
	n := 20000
	if testing.Short() {
		n = 2000
	}
	checked := 0
	for i := 0; i < n; i++ {
		var b strings.Builder
		randomJSON(rnd, &b, 0)
		text := b.String()
		v, sum, err := rd.ReadSum(text)
		fresh, ferr := Read([]byte(text))
		if (err == nil) != (ferr == nil) || (err != nil && err.Error() != ferr.Error()) {
			t.Fatalf("%s: reused parser says %v, fresh one %v", text, err, ferr)
		}
		if err != nil {
			continue
		}
		trusted := encoder{reader: &rd}
		got := string(trusted.append(nil, v))
		want := string(Append(nil, &fresh))
		if got != want {
			t.Fatalf("%s:\ntrusted   %s\nuntrusted %s", text, got, want)
		}
		if sum != SHA256(&fresh) {
			t.Fatalf("%s: ReadSum %s, SHA256 %s", text, sum, SHA256(&fresh))
		}
		checked++
	}
	if checked < n/2 {
		t.Fatalf("only %d of %d values were readable", checked, n)
	}
}

// TestReusedParserFindsDuplicates reads objects whose keys follow a key
// sequence the parser has seen, then break from it, and checks the error
// (or none) is the one a fresh reader gives.
func TestReusedParserFindsDuplicates(t *testing.T) {
	type testCase struct {
		name string
		keys []string
	}
	seq := func(n int) []string {
		ks := make([]string, n)
		for i := range ks {
			ks[i] = fmt.Sprintf("key%02d", i)
		}
		return ks
	}
	long := seq(20)
	tests := []testCase{
		{"same keys", long},
		{"prefix then duplicate", append(seq(18), "key03")},
		{"prefix then duplicate of the last", append(seq(20), "key19")},
		{"duplicate right after the linear scan", append(seq(16), "key00")},
		{"duplicate inside the linear scan", append(seq(10), "key02")},
		{"shorter", seq(17)},
		{"longer", seq(30)},
		{"longer with duplicate", append(seq(30), "key25")},
		{"diverging, then duplicate", append(append(seq(17), "other"), "key01")},
		{"diverging, then duplicate of the new key", append(append(seq(17), "other"), "other")},
	}
	var rd Reader
	warm := func(keys []string) string {
		var b strings.Builder
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "%q:%d", k, i)
		}
		b.WriteByte('}')
		return b.String()
	}
	run := func(t *testing.T, tc testCase) {
		for _, w := range [][]string{long, seq(30), append(seq(17), "other")} {
			if _, err := rd.Read(warm(w)); err != nil {
				t.Fatal(err)
			}
		}
		text := warm(tc.keys)
		// Twice: the second time the parser may know the sequence.
		for round := 0; round < 2; round++ {
			_, err := rd.Read(text)
			_, ferr := Read([]byte(text))
			if fmt.Sprint(err) != fmt.Sprint(ferr) {
				t.Fatalf("round %d: reused parser says %v, fresh one %v", round, err, ferr)
			}
		}
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestPythonFloatFixedNotation checks AppendPythonFloat's fixed-notation
// shortcut against the digits-and-exponent form over random bit patterns,
// random decimals and the edges of the fixed range.
func TestPythonFloatFixedNotation(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 5))
	floats := []float64{0, math.Copysign(0, -1), 1e-4, math.Nextafter(1e-4, 0), math.Nextafter(1e-4, 1),
		1e16, math.Nextafter(1e16, 0), 9999999999999998, 1e15, 0.1, 60, 100, 1.5, -2.5e-3,
		math.MaxFloat64, math.SmallestNonzeroFloat64, math.Inf(1), math.Inf(-1), math.NaN()}
	for i := 0; i < 300000; i++ {
		switch i % 3 {
		case 0:
			floats = append(floats, math.Float64frombits(rnd.Uint64()))
		case 1:
			floats = append(floats, rnd.NormFloat64()*math.Pow(10, float64(rnd.IntN(44)-22)))
		default:
			f, _ := strconv.ParseFloat(strconv.Itoa(rnd.IntN(1e6))+"e"+strconv.Itoa(rnd.IntN(30)-15), 64)
			floats = append(floats, f)
		}
	}
	inFixed := 0
	for _, f := range floats {
		got := string(AppendPythonFloat([]byte("x"), f))
		want := string(appendPythonFloatDigits([]byte("x"), f))
		if got != want {
			t.Fatalf("%v (bits %#x): got %s, want %s", f, math.Float64bits(f), got, want)
		}
		if a := math.Abs(f); a >= 1e-4 && a < 1e16 {
			inFixed++
		}
	}
	if inFixed < len(floats)/4 {
		t.Fatalf("only %d of %d floats took the fixed-notation path", inFixed, len(floats))
	}
}

// TestReaderUTF8Reason: a Reader checks UTF-8 only when a string held a
// high byte or the value did not read; its error must still be the one a
// check of the whole input first gives.
func TestReaderUTF8Reason(t *testing.T) {
	type testCase struct {
		name string
		in   string
	}
	tests := []testCase{
		{"invalid in a string", "{\"a\":\"x\xffy\"}"},
		{"invalid in a key", "{\"a\xc3\":1}"},
		{"invalid outside strings", "{\"a\":1\xff}"},
		{"invalid after a syntax error", "{\"a\":tru \"\xff\"}"},
		{"invalid after an escape", "{\"a\":\"\\n\xe2\x82\"}"},
		{"valid non-ASCII", "{\"a\":\"café\",\"b\":\"\\u00e9中\"}"},
		{"DEL", "{\"a\":\"\x7f\"}"},
		{"byte order mark", "\xEF\xBB\xBF{}"},
		{"syntax error only", "{\"a\":}"},
	}
	run := func(t *testing.T, tc testCase) {
		var rd Reader
		_, err := rd.Read(tc.in)
		want := precheck(tc.in)
		if want == nil {
			var plain Reader
			plain.reset(tc.in)
			_, want = plain.read()
		}
		if fmt.Sprint(err) != fmt.Sprint(want) {
			t.Fatalf("Reader.Read: %v, want %v", err, want)
		}
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}
