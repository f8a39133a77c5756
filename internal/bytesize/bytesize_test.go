package bytesize_test

import (
	"testing"

	"github.com/flakegate/flakegate/internal/bytesize"
	"pgregory.net/rapid"
)

func TestParse(t *testing.T) {
	type testCase struct {
		in   string
		want int64
		err  bool
	}
	run := func(t *testing.T, tc testCase) {
		got, err := bytesize.Parse(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Fatalf("Parse(%q) = %d, %v; want %d, error %v", tc.in, got, err, tc.want, tc.err)
		}
	}
	for _, tc := range []testCase{
		{in: "4GiB", want: 4 << 30},
		{in: "512MiB", want: 512 << 20},
		{in: "64 KiB", want: 64 << 10},
		{in: "1048576", want: 1 << 20},
		{in: "7B", want: 7},
		{in: "4GB", err: true},
		{in: "GiB", err: true},
		{in: "-1MiB", err: true},
		{in: "1.5GiB", err: true},
		{in: "99999999999TiB", err: true},
		{in: "", err: true},
	} {
		t.Run(tc.in, func(t *testing.T) { run(t, tc) })
	}
}

// TestFormatParses: every size Format writes, Parse reads back.
func TestFormatParses(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.Int64Range(0, 1<<50).Draw(t, "n")
		got, err := bytesize.Parse(bytesize.Format(n))
		if err != nil || got != n {
			t.Fatalf("Parse(Format(%d)) = %d, %v", n, got, err)
		}
	})
}
