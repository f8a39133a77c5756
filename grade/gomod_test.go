package grade

import (
	"strings"
	"testing"
)

// TestGradedGoMod: the graded go.mod is the candidate's with the base's
// go, toolchain and godebug lines (a godebug block whole), placed after
// the module line; the candidate's require and replace lines stay; equal
// directives give the candidate's bytes; a go.mod this reader cannot be
// sure of is refused.
func TestGradedGoMod(t *testing.T) {
	type testCase struct {
		name, base, cand string
		want             string // "" with changed false: the candidate's bytes
		changed, ok      bool
	}
	run := func(t *testing.T, tc testCase) {
		got, changed, ok := GradedGoMod([]byte(tc.base), []byte(tc.cand))
		if ok != tc.ok || changed != tc.changed {
			t.Fatalf("changed %v ok %v, want %v %v", changed, ok, tc.changed, tc.ok)
		}
		if !ok {
			return
		}
		want := tc.want
		if !changed {
			want = tc.cand
		}
		if string(got) != want {
			t.Errorf("got\n%s\nwant\n%s", got, want)
		}
	}
	for _, tc := range []testCase{
		{name: "go line lowered", base: "module m\n\ngo 1.22\n", cand: "module m\n\ngo 1.21\n",
			want: "module m\ngo 1.22\n\n", changed: true, ok: true},
		{name: "same lines, new require", base: "module m\n\ngo 1.22\n", cand: "module m\n\ngo 1.22 // the same\n\nrequire x.org/y v1.0.0\n", ok: true},
		{name: "dependencies stay the candidate's", base: "module m\n\ngo 1.22\n\ntoolchain go1.22.1\n",
			cand: "module m\n\ngo 1.23\n\nrequire (\n\tx.org/y v1.2.0\n)\n\nreplace x.org/y => ../y\n",
			want: "module m\ngo 1.22\ntoolchain go1.22.1\n\n\nrequire (\n\tx.org/y v1.2.0\n)\n\nreplace x.org/y => ../y\n", changed: true, ok: true},
		{name: "godebug block", base: "module m\ngo 1.22\n", cand: "module m\ngo 1.22\ngodebug (\n\tpanicnil=1\n\thttpmuxgo121=1\n)\n",
			want: "module m\ngo 1.22\n", changed: true, ok: true},
		{name: "godebug line added by the base", base: "module m\ngo 1.22\ngodebug panicnil=1\n", cand: "module m\ngo 1.22\n",
			want: "module m\ngo 1.22\ngodebug panicnil=1\n", changed: true, ok: true},
		{name: "base without a go line", base: "module m\n", cand: "module m\n\ngo 1.21\n", want: "module m\n\n", changed: true, ok: true},
		{name: "no newline at the end", base: "module m\ngo 1.22", cand: "module m\ngo 1.21", want: "module m\ngo 1.22\n", changed: true, ok: true},
		{name: "windows line ends", base: "module m\r\ngo 1.22\r\n", cand: "module m\r\ngo 1.21\r\n", want: "module m\r\ngo 1.22\r\n", changed: true, ok: true},
		{name: "a block that never closes", base: "module m\ngo 1.22\n", cand: "module m\nrequire (\n\tx.org/y v1\n", ok: false},
		{name: "a go line in a form not known", base: "module m\ngo 1.22\n", cand: "module m\ngo(1.21)\n", ok: false},
		{name: "a comment that looks like a directive", base: "module m\ngo 1.22\n", cand: "module m\n// go 1.21\ngo 1.22\n", ok: true},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// FuzzGradedGoMod: any pair of files gives an answer, never a panic; a
// graded file keeps every line of the candidate's that is not a go,
// toolchain or godebug directive.
func FuzzGradedGoMod(f *testing.F) {
	f.Add("module m\ngo 1.22\n", "module m\ngo 1.21\nrequire x v1\n")
	f.Add("module m\ngodebug (\na=1\n)\n", "godebug(\n)\n")
	f.Fuzz(func(t *testing.T, base, cand string) {
		got, changed, ok := GradedGoMod([]byte(base), []byte(cand))
		if !ok || !changed {
			return
		}
		_, rest, _ := goModDirectives([]byte(cand))
		for _, l := range rest {
			if !strings.Contains(string(got), strings.TrimRight(l, "\n")) {
				t.Fatalf("the candidate's line %q is gone from\n%s", l, got)
			}
		}
	})
}
