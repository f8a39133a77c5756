package canonjson

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// TestReprFloatHint checks that a float the reader passes through as
// written (hintReprFloat) is exactly what Python's repr writes for it, for
// hand-picked edges and many short random decimals.
func TestReprFloatHint(t *testing.T) {
	type testCase struct {
		text string
		raw  bool // whether the reader should pass it through
	}
	run := func(t *testing.T, tc testCase) {
		t.Helper()
		var rd Reader
		v, err := rd.Read(tc.text)
		if err != nil {
			t.Fatalf("%s: %v", tc.text, err)
		}
		if raw := v.hint&hintReprFloat != 0; raw != tc.raw {
			t.Fatalf("%s: passed through %v, want %v", tc.text, raw, tc.raw)
		}
		f, err := strconv.ParseFloat(tc.text, 64)
		if err != nil {
			t.Fatal(err)
		}
		want := string(AppendPythonFloat(nil, f))
		trusted := encoder{reader: &rd}
		if got := string(trusted.append(nil, v)); got != want {
			t.Fatalf("%s: canonical %s, want %s", tc.text, got, want)
		}
	}
	cases := []testCase{
		{"60.0", true}, {"-0.0", true}, {"0.0", true}, {"0.5", true},
		{"0.0001", true}, {"0.00001", false}, {"1.50", false}, {"1.0", true},
		{"123456789012345.0", false}, {"12345678901234.0", true},
		{"1234567890.12345", true}, {"1234567890.123456", false},
		{"0.000123456789012345", true}, {"0.0001234567890123456", false},
		{"9999999999999.99", true}, {"1e5", false}, {"-12.25", true},
		{"0.10", false}, {"100.0", true},
	}
	for _, tc := range cases {
		t.Run(tc.text, func(t *testing.T) { run(t, tc) })
	}
	rnd := rand.New(rand.NewPCG(3, 5))
	digits := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteByte(byte('0' + rnd.IntN(10)))
		}
		return b.String()
	}
	n := 20000
	if testing.Short() {
		n = 2000
	}
	for range n {
		intPart := "0"
		if rnd.IntN(3) > 0 {
			intPart = string(byte('1'+rnd.IntN(9))) + digits(rnd.IntN(17))
		}
		frac := strings.Repeat("0", rnd.IntN(6)) + digits(1+rnd.IntN(16))
		if rnd.IntN(4) == 0 {
			frac = strings.TrimRight(frac, "0")
			if frac == "" {
				frac = "0"
			}
		}
		sign := ""
		if rnd.IntN(2) == 0 {
			sign = "-"
		}
		text := sign + intPart + "." + frac
		t.Run(text, func(t *testing.T) { run(t, testCase{text, reprFixed(intPart, frac)}) })
	}
}

func TestPythonFloat(t *testing.T) {
	type testCase struct{ in, want string }
	run := func(t *testing.T, tc testCase) {
		v, err := Read([]byte(tc.in))
		if err != nil {
			t.Fatal(err)
		}
		if got := string(Append(nil, &v)); got != tc.want {
			t.Fatalf("%s: got %s, want %s", tc.in, got, tc.want)
		}
	}
	for _, tc := range []testCase{
		{"1.0", "1.0"}, {"1e-05", "1e-05"}, {"1e16", "1e+16"}, {"-0.0", "-0.0"}, {"5e-324", "5e-324"},
		{"1.7976931348623157e308", "1.7976931348623157e+308"}, {"9007199254740993.0", "9007199254740992.0"},
		{"0.0001", "0.0001"}, {"1e15", "1000000000000000.0"}, {"123.456", "123.456"}, {"-1.5E-7", "-1.5e-07"},
		{"1e-400", "0.0"}, {"-0", "0"}, {"12345678901234567890123", "12345678901234567890123"}, {"2.5e2", "250.0"},
	} {
		t.Run(tc.in, func(t *testing.T) { run(t, tc) })
	}
}
