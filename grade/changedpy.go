package grade

import (
	"strings"

	"github.com/flakegate/flakegate/internal/pysrc"
)

// pyGlobalNames are module-level names pytest or unittest reads for
// every test of the file.
var pyGlobalNames = map[string]bool{
	"pytestmark": true, "pytest_plugins": true, "setup_module": true, "teardown_module": true,
	"setup_function": true, "teardown_function": true, "setUpModule": true, "tearDownModule": true,
}

// ChangedPy reports which of the tests names (pytest's names after
// "file::": "test_x", "test_x[case]", "TestC::test_m") of one test file
// the patch changes, from the file's source in each tree. Units are the
// file's top-level statements (a def, a class, an import, an assignment,
// by the names they bind); a method test is its own source and its
// classes' other members (fixtures, setup methods, helpers, attributes).
// Module code that binds no name, an autouse fixture, pytestmark and
// pytest_plugins run for every test. A test whose name no unit has is
// changed (it is made some way this reader does not follow).
func ChangedPy(base, cand []byte, names []string) map[string]bool {
	bu := pyUnits(string(base))
	cu := pyUnits(string(cand))
	start := map[string]string{}
	for _, n := range names {
		key := n
		if i := strings.IndexByte(key, '['); i >= 0 {
			key = key[:i]
		}
		start[n] = key
	}
	out := changedNames(bu, cu, start)
	for n, key := range start {
		if bu.text[key] == "" && cu.text[key] == "" {
			out[n] = true
		}
	}
	return out
}

// pyStmt is one statement of a block: its logical lines [first, end)
// (decorators included) and its last physical line.
type pyStmt struct {
	first, def, end int // def: the logical line after the decorators
	lastLine        int
}

// pyUnits reads the units of a Python test file.
func pyUnits(src string) *units {
	u := newUnits()
	ls := pysrc.LogicalLines(src)
	phys := strings.SplitAfter(src, "\n")
	text := func(s pyStmt, ls []pysrc.Line) string {
		from, to := ls[s.first].Number-1, s.lastLine
		for to > from {
			l := strings.TrimSpace(phys[to-1])
			if l != "" && !strings.HasPrefix(l, "#") {
				break
			}
			to--
		}
		if to > len(phys) {
			to = len(phys)
		}
		return strings.Join(phys[from:to], "")
	}
	var global []string
	for _, s := range pyStmts(ls, 0, len(ls), len(phys)) {
		t := text(s, ls)
		refs := pyNames(ls[s.first:s.end])
		names, kind := pyBinds(ls[s.def], ls[s.first:s.def])
		switch {
		case kind == "global":
			global = append(global, t)
		case kind == "class":
			u.add(names[0], t, refs)
			pyClass(u, ls, s, names[0], text)
		default:
			for _, n := range names {
				u.add(n, t, refs)
			}
		}
	}
	u.global = strings.Join(global, "\x00")
	return u
}

// pyClass adds the units of class name (statement s): "name::" is its
// header and every member that is not a test method, "name::m" each
// test method (its own source, and the class's "name::"); a nested class
// the same way, under "name::Inner".
func pyClass(u *units, ls []pysrc.Line, s pyStmt, name string, text func(pyStmt, []pysrc.Line) string) {
	var ctx []string
	ctxRefs := classHeaderRefs(ls[s.first : s.def+1])
	ctx = append(ctx, pyLineText(ls[s.first:s.def+1]))
	if s.def+1 < s.end {
		for _, m := range pyStmts(ls, s.def+1, s.end, s.lastLine) {
			names, kind := pyBinds(ls[m.def], ls[m.first:m.def])
			mt := text(m, ls)
			refs := pyNames(ls[m.first:m.end])
			switch {
			case kind == "def" && strings.HasPrefix(names[0], "test"):
				u.add(name+"::"+names[0], mt, append(refs, name+"::"))
			case kind == "class":
				ctxRefs = append(ctxRefs, classHeaderRefs(ls[m.first:m.def+1])...)
				ctx = append(ctx, pyLineText(ls[m.first:m.def+1]))
				u.add(name+"::"+names[0]+"::", "", []string{name + "::"})
				pyClass(u, ls, m, name+"::"+names[0], text)
			default:
				ctx = append(ctx, mt)
				ctxRefs = append(ctxRefs, refs...)
			}
		}
	}
	u.add(name+"::", strings.Join(ctx, "\x00"), ctxRefs)
}

// classHeaderRefs are the names a class header (decorators, then
// "class NAME(...)") uses, but for the class's own name: its tests do
// not reach the whole class through it.
func classHeaderRefs(ls []pysrc.Line) []string {
	last := len(ls) - 1
	out := pyNames(ls[:last])
	toks := ls[last].Tokens
	for i, t := range toks {
		if t.Kind == pysrc.Name && i >= 2 {
			out = append(out, t.Text)
		}
	}
	return out
}

// pyLineText is the tokens of logical lines, as text (a class header
// with its decorators).
func pyLineText(ls []pysrc.Line) string {
	var b strings.Builder
	for _, l := range ls {
		for _, t := range l.Tokens {
			b.WriteString(string(t.Kind) + t.Text + " ")
		}
		b.WriteString("\n")
	}
	return b.String()
}

// pyStmts splits the logical lines [from, to) of one block (the indent
// of ls[from]) into statements; lastLine is the block's last physical
// line.
func pyStmts(ls []pysrc.Line, from, to, lastLine int) []pyStmt {
	var out []pyStmt
	if from >= to {
		return nil
	}
	ind := ls[from].Indent
	for i := from; i < to; {
		def := i
		for def < to-1 && len(ls[def].Tokens) > 0 && ls[def].Tokens[0].Is(pysrc.Op, "@") && ls[def].Indent == ind {
			def++
		}
		end := def + 1
		for end < to && ls[end].Indent > ind {
			end++
		}
		last := lastLine
		if end < to {
			last = ls[end].Number - 1
		}
		out = append(out, pyStmt{first: i, def: def, end: end, lastLine: last})
		i = end
	}
	return out
}

// pyNames are the names used in logical lines.
func pyNames(ls []pysrc.Line) []string {
	var out []string
	for _, l := range ls {
		for _, t := range l.Tokens {
			if t.Kind == pysrc.Name {
				out = append(out, t.Text)
			}
		}
	}
	return out
}

// pyBinds is what statement line l (after its decorators) binds, and
// its kind: "def" or "class" (one name), "bind" (an import's or an
// assignment's names), "global" (code that runs for every test: no name,
// a star import, a name pytest reads for every test, an autouse
// fixture).
func pyBinds(l pysrc.Line, decorators []pysrc.Line) ([]string, string) {
	toks := l.Tokens
	if len(toks) > 1 && toks[0].Is(pysrc.Name, "async") {
		toks = toks[1:]
	}
	for _, d := range decorators {
		for _, t := range d.Tokens {
			if t.Is(pysrc.Name, "autouse") {
				return nil, "global"
			}
		}
	}
	if len(toks) >= 2 && toks[1].Kind == pysrc.Name && (toks[0].Is(pysrc.Name, "def") || toks[0].Is(pysrc.Name, "class")) {
		if pyGlobalNames[toks[1].Text] {
			return nil, "global"
		}
		return []string{toks[1].Text}, toks[0].Text
	}
	if len(toks) > 0 && (toks[0].Is(pysrc.Name, "import") || toks[0].Is(pysrc.Name, "from")) {
		return pyImportBinds(toks)
	}
	return pyAssignBinds(toks)
}

// pyImportBinds is what an import statement binds.
func pyImportBinds(toks []pysrc.Token) ([]string, string) {
	var names []string
	if toks[0].Text == "import" {
		for _, part := range pysrc.Split(toks[1:], ",") {
			if len(part) >= 3 && part[len(part)-2].Is(pysrc.Name, "as") {
				names = append(names, part[len(part)-1].Text)
			} else if len(part) > 0 && part[0].Kind == pysrc.Name {
				names = append(names, part[0].Text)
			}
		}
		return names, "bind"
	}
	i := 0
	for i < len(toks) && !toks[i].Is(pysrc.Name, "import") {
		i++
	}
	var rest []pysrc.Token
	for _, t := range toks[min(i+1, len(toks)):] {
		if !t.Is(pysrc.Op, "(") && !t.Is(pysrc.Op, ")") {
			rest = append(rest, t)
		}
	}
	for _, part := range pysrc.Split(rest, ",") {
		switch {
		case len(part) == 1 && part[0].Is(pysrc.Op, "*"):
			return nil, "global"
		case len(part) >= 3 && part[len(part)-2].Is(pysrc.Name, "as"):
			names = append(names, part[len(part)-1].Text)
		case len(part) > 0 && part[0].Kind == pysrc.Name:
			names = append(names, part[0].Text)
		}
	}
	if len(names) == 0 {
		return nil, "global"
	}
	return names, "bind"
}

// pyAssignBinds is what an assignment binds (the names before its first
// "=" that is no comparison), "global" for any other statement or a name
// pytest reads for every test.
func pyAssignBinds(toks []pysrc.Token) ([]string, string) {
	depth := 0
	for i, t := range toks {
		if t.Kind != pysrc.Op {
			continue
		}
		switch t.Text {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
		case "=":
			if depth != 0 || i+1 < len(toks) && toks[i+1].Is(pysrc.Op, "=") || i > 0 && toks[i-1].Kind == pysrc.Op && strings.Contains("=<>!", toks[i-1].Text) {
				continue
			}
			var names []string
			for k, x := range toks[:i] {
				if x.Kind == pysrc.Name && (k == 0 || !toks[k-1].Is(pysrc.Op, ".")) {
					if pyGlobalNames[x.Text] {
						return nil, "global"
					}
					names = append(names, x.Text)
				}
			}
			if len(names) == 0 {
				return nil, "global"
			}
			return names, "bind"
		}
	}
	return nil, "global"
}
