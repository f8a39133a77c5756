package canonjson

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
)

// echo is a LineFunc that writes each line quoted, or "too long".
func echo() LineFunc {
	return func(out []byte, line string, err error) []byte {
		if err != nil {
			return append(out, err.Error()+"\n"...)
		}
		return append(strconv.AppendQuote(out, line), '\n')
	}
}

// splitLines is what Lines must hand its LineFunc for in: the lines
// without "\n", a final newline starting none, a "\r" before "\n" dropped.
func splitLines(in string) string {
	var b strings.Builder
	lines := strings.Split(in, "\n")
	if in == "" || strings.HasSuffix(in, "\n") {
		lines = lines[:len(lines)-1]
	}
	for _, l := range lines {
		b.WriteString(strconv.Quote(strings.TrimSuffix(l, "\r")))
		b.WriteByte('\n')
	}
	return b.String()
}

// FuzzLines: the batches Lines cuts, over any number of workers, give the
// lines of the input in input order.
func FuzzLines(f *testing.F) {
	f.Add("a\nb\r\n\nc", uint8(2))
	f.Add("\n\n\n", uint8(1))
	f.Add("no newline", uint8(3))
	f.Fuzz(func(t *testing.T, in string, workers uint8) {
		var out bytes.Buffer
		if err := Lines(context.Background(), strings.NewReader(in), &out, int(workers%5), echo); err != nil {
			t.Fatal(err)
		}
		if want := splitLines(in); out.String() != want {
			t.Fatalf("input %q:\nLines %q\nwant  %q", in, out.String(), want)
		}
	})
}

// TestLinesLarge: many batches, and lines over MaxBytes in the middle and
// at the end, in order.
func TestLinesLarge(t *testing.T) {
	var in strings.Builder
	for i := range 200000 {
		in.WriteString("line " + strconv.Itoa(i) + "\n")
	}
	small := in.String()
	huge := strings.Repeat("x", MaxBytes+3)
	input := small + huge + "\n" + "after\r\n" + huge
	var out bytes.Buffer
	if err := Lines(context.Background(), strings.NewReader(input), &out, 3, echo); err != nil {
		t.Fatal(err)
	}
	want := splitLines(small) + ErrLineTooLong.Error() + "\n" + strconv.Quote("after") + "\n" + ErrLineTooLong.Error() + "\n"
	if out.String() != want {
		t.Fatalf("got %d bytes of output, want %d; tail %q", out.Len(), len(want), out.String()[max(0, out.Len()-200):])
	}
}
