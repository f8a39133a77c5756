package pysrc

import (
	"fmt"
	"strings"
	"testing"
)

// render writes lines as "number:indent: tokens".
func render(lines []Line) string {
	var b strings.Builder
	for _, l := range lines {
		var toks []string
		for _, t := range l.Tokens {
			if t.Kind == Literal && t.Text == "" {
				toks = append(toks, `""`)
				continue
			}
			toks = append(toks, t.Text)
		}
		fmt.Fprintf(&b, "%d:%d: %s\n", l.Number, l.Indent, strings.Join(toks, " "))
	}
	return b.String()
}

func TestLogicalLines(t *testing.T) {
	type testCase struct {
		name, src, want string
	}
	run := func(t *testing.T, tc testCase) {
		if got := render(LogicalLines(tc.src)); got != tc.want {
			t.Errorf("got\n%s\nwant\n%s", got, tc.want)
		}
	}
	for _, tc := range []testCase{
		{"indentation and line numbers", "class A:\n    @given(x)\n    def test_a(self):\n\tpass\n",
			"1:0: class A :\n2:4: @ given ( x )\n3:4: def test_a ( self ) :\n4:8: pass\n"},
		{"a decorator in a string or a comment is no token", "s = '''\n@given(x)\n'''\n# @given(y)\nx = r\"@given\"\n",
			"1:0: s = \"\"\n5:0: x = \"\"\n"},
		{"brackets and backslashes join lines", "f(a,\n  b)\nx = 1 + \\\n  2\n",
			"1:0: f ( a , b )\n3:0: x = 1 + 2\n"},
		{"a semicolon splits a line", "import a; import b\n", "1:0: import a\n1:0: import b\n"},
		{"CRLF", "a = 1\r\nb = 2\r\n", "1:0: a = 1\n2:0: b = 2\n"},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func TestDotted(t *testing.T) {
	toks := LogicalLines("hypothesis.stateful.RuleBasedStateMachine(x)")[0].Tokens
	if name, n := Dotted(toks); name != "hypothesis.stateful.RuleBasedStateMachine" || n != 5 {
		t.Errorf("Dotted = %q, %d", name, n)
	}
	if name, n := Dotted(toks[1:]); name != "" || n != 0 {
		t.Errorf("Dotted from '.' = %q, %d", name, n)
	}
}

// FuzzLogicalLines: any input is tokenized without a panic, and every
// line's number is within the input's lines.
func FuzzLogicalLines(f *testing.F) {
	for _, s := range []string{"'''", "r'\\", "x = (\n", "@given(\n'a'\n)\ndef t(): pass", "\t \f x", "\\\r\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		max := strings.Count(src, "\n") + strings.Count(src, "\r") + 1
		for _, l := range LogicalLines(src) {
			if l.Number < 1 || l.Number > max || len(l.Tokens) == 0 {
				t.Fatalf("line %d of %d, %d tokens", l.Number, max, len(l.Tokens))
			}
		}
	})
}
