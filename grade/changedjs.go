package grade

import (
	"strings"

	"github.com/flakegate/flakegate/internal/discover"
)

// ChangedJS reports which of the tests names (full names: the describe
// titles and the test's title joined by spaces) of one vitest or jest
// test file the patch changes, from the file's source in each tree. A
// test is its test() or it() call, by its full name, compared line by
// line with the source; what lies outside every test call (describe
// headers, hooks, helpers, module code) runs for every test, but for the
// file's top-level imports, each of which changes only the tests that
// use a name it binds. A test this reader cannot find in a version (a
// title that is not a literal, test.each) makes every test changed.
func ChangedJS(base, cand []byte, names []string) map[string]bool {
	b, okB := jsUnits(string(base))
	c, okC := jsUnits(string(cand))
	if !okB || !okC {
		return allChanged(names)
	}
	start := map[string]string{}
	for _, n := range names {
		if _, ok := b.text[n]; !ok {
			return allChanged(names)
		}
		if _, ok := c.text[n]; !ok {
			return allChanged(names)
		}
		start[n] = n
	}
	return changedNames(b, c, start)
}

// jsUnits reads the units of a js test file: each test's lines by full
// name, each top-level import binding ("import:NAME"), and everything
// else as the global text. ok is false for a file whose calls do not
// balance.
func jsUnits(src string) (*units, bool) {
	u := newUnits()
	toks := discover.JSTokenize(src)
	lines := strings.SplitAfter(src, "\n")
	owned := make([]bool, len(lines)+2) // lines a test or an import holds
	span := func(from, to int) string {
		var b strings.Builder
		for l := from; l <= to && l <= len(lines); l++ {
			b.WriteString(lines[l-1])
		}
		return b.String()
	}
	type frame struct {
		title string
		end   int // the token that closes the describe call
	}
	var stack []frame
	depth := 0 // brace depth, for top-level imports
	for i := 0; i < len(toks); i++ {
		for len(stack) > 0 && i > stack[len(stack)-1].end {
			stack = stack[:len(stack)-1]
		}
		t := toks[i]
		if t.Kind == 'o' {
			switch t.Text {
			case "{":
				depth++
			case "}":
				depth--
			}
			continue
		}
		if t.Kind != 'n' || i > 0 && toks[i-1].Kind == 'o' && toks[i-1].Text == "." {
			continue
		}
		if t.Text == "import" && depth == 0 && len(stack) == 0 && (i+1 >= len(toks) || toks[i+1].Text != "(" && toks[i+1].Text != ".") {
			end, binds := jsImport(toks, i)
			for _, n := range binds {
				u.add("import:"+n, toks[end].Text, nil)
			}
			if len(binds) == 0 {
				u.global += "import " + toks[end].Text + "\x00" // a side-effect import
			}
			for l := t.Line; l <= toks[end].Line && l < len(owned); l++ {
				owned[l] = true
			}
			i = end
			continue
		}
		kind, open, end, state := jsCall(toks, i)
		switch state {
		case jsEach:
			return newUnits(), true // test.each: titles this reader cannot name; ChangedJS finds no test and says all changed
		case jsUnbalanced:
			return nil, false
		case jsNoCall:
			continue
		}
		title := toks[open+1].Text
		if kind == "describe" {
			stack = append(stack, frame{title: title, end: end})
			continue
		}
		full := title
		for k := len(stack) - 1; k >= 0; k-- {
			full = stack[k].title + " " + full
		}
		var refs []string
		for _, x := range toks[i:end] {
			if x.Kind == 'n' {
				refs = append(refs, "import:"+x.Text)
			}
		}
		u.add(full, span(t.Line, toks[end].Line), refs)
		for l := t.Line; l <= toks[end].Line && l < len(owned); l++ {
			owned[l] = true
		}
		i = end
	}
	var rest strings.Builder
	for l, text := range lines {
		if !owned[l+1] && strings.TrimSpace(text) != "" {
			rest.WriteString(strings.TrimRight(text, " \t\r\n") + "\n")
		}
	}
	u.global += rest.String()
	return u, true
}

// What jsCall found at a token.
const (
	jsNoCall = iota
	jsFound
	jsEach       // test.each or describe.each
	jsUnbalanced // a call whose parentheses do not close
)

// jsCall reads a test() or describe() call (it(), suite(), with
// modifiers: test.only, test.skipIf(c)) whose title is a string literal
// at token i: its kind ("test" or "describe"), the index of its "(" and
// of the ")" that closes it.
func jsCall(toks []discover.JSToken, i int) (kind string, open, end, state int) {
	switch toks[i].Text {
	case "test", "it":
		kind = "test"
	case "describe", "suite":
		kind = "describe"
	default:
		return "", 0, 0, jsNoCall
	}
	open = i + 1
	for open+1 < len(toks) && toks[open].Text == "." && toks[open].Kind == 'o' && toks[open+1].Kind == 'n' {
		if toks[open+1].Text == "each" || toks[open+1].Text == "for" {
			return "", 0, 0, jsEach
		}
		open += 2
		if open < len(toks) && toks[open].Text == "(" && toks[open].Kind == 'o' && (toks[open-1].Text == "skipIf" || toks[open-1].Text == "runIf") {
			c := jsClose(toks, open)
			if c < 0 {
				return "", 0, 0, jsUnbalanced
			}
			open = c + 1
		}
	}
	if open+1 >= len(toks) || toks[open].Text != "(" || toks[open].Kind != 'o' || toks[open+1].Kind != 's' {
		return "", 0, 0, jsNoCall
	}
	if end = jsClose(toks, open); end < 0 {
		return "", 0, 0, jsUnbalanced
	}
	return kind, open, end, jsFound
}

// jsClose is the index of the ")" that closes the "(" at open, -1 when
// none does.
func jsClose(toks []discover.JSToken, open int) int {
	depth := 0
	for j := open; j < len(toks); j++ {
		if toks[j].Kind != 'o' {
			continue
		}
		switch toks[j].Text {
		case "(":
			depth++
		case ")":
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

// jsImport reads the top-level import at i: the index of its module
// string (its last token) and the names it binds.
func jsImport(toks []discover.JSToken, i int) (int, []string) {
	var binds []string
	for j := i + 1; j < len(toks); j++ {
		t := toks[j]
		if t.Kind == 's' {
			return j, binds
		}
		if t.Kind == 'n' && t.Text != "from" && t.Text != "as" && t.Text != "type" && t.Text != "typeof" {
			if j+1 < len(toks) && toks[j+1].Kind == 'n' && toks[j+1].Text == "as" {
				continue // the exported name; the local one follows "as"
			}
			binds = append(binds, t.Text)
		}
	}
	return len(toks) - 1, binds
}
