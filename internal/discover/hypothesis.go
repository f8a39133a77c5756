package discover

import (
	"strings"

	"github.com/flakegate/flakegate/internal/pysrc"
)

// pyNames are the names a Python file binds to Hypothesis's given, to the
// hypothesis and hypothesis.stateful modules, and to state machine classes.
type pyNames struct {
	given    map[string]bool // from hypothesis import given [as g]
	modules  map[string]bool // import hypothesis [as h]: h.given, h.stateful.X
	stateful map[string]bool // from hypothesis import stateful [as s]; import hypothesis.stateful as s
	machines map[string]bool // RuleBasedStateMachine, its aliases and subclasses in this file
}

// pythonTests returns the pytest tests of one file that are decorated with
// Hypothesis's @given (top-level functions and methods of Test* classes)
// and the state machines exposed as "TestX = Machine.TestCase".
func pythonTests(p, src string) []Test {
	lines := pysrc.LogicalLines(src)
	n := pyNames{given: map[string]bool{}, modules: map[string]bool{}, stateful: map[string]bool{}, machines: map[string]bool{}}
	for _, l := range lines {
		n.imports(l.Tokens)
	}
	if len(n.given) == 0 && len(n.modules) == 0 && len(n.stateful) == 0 && len(n.machines) == 0 {
		return nil
	}
	type scope struct {
		indent int
		class  string // "" for a function body
	}
	var stack []scope
	var pendingGiven bool
	pendingIndent := -1
	var tests []Test
	seen := map[string]bool{}
	add := func(name, kind string, line int) {
		if seen[name] {
			return // a redefinition: pytest runs the last one, under the same id
		}
		seen[name] = true
		tests = append(tests, Test{Framework: PytestHypothesis, Path: p, Name: name, Kind: kind, Line: line})
	}
	for _, l := range lines {
		toks := l.Tokens
		for len(stack) > 0 && l.Indent <= stack[len(stack)-1].indent {
			stack = stack[:len(stack)-1]
		}
		// A test is reachable by pytest when every enclosing scope is a
		// Test* class.
		classPath, reachable := "", true
		for _, s := range stack {
			if s.class == "" || !strings.HasPrefix(s.class, "Test") {
				reachable = false
				break
			}
			classPath += s.class + "::"
		}
		if toks[0].Is(pysrc.Op, "@") {
			if pendingIndent != l.Indent {
				pendingGiven = false
			}
			pendingIndent = l.Indent
			if name, _ := pysrc.Dotted(toks[1:]); n.isGiven(name) {
				pendingGiven = true
			}
			continue
		}
		k := 0
		if toks[0].Is(pysrc.Name, "async") {
			k = 1
		}
		decorated := pendingGiven && pendingIndent == l.Indent
		pendingGiven, pendingIndent = false, -1
		switch {
		case k+1 < len(toks) && toks[k].Is(pysrc.Name, "def") && toks[k+1].Kind == pysrc.Name:
			fn := toks[k+1].Text
			if decorated && reachable && strings.HasPrefix(fn, "test") {
				add(classPath+fn, "@given", l.Number)
			}
			stack = append(stack, scope{indent: l.Indent})
		case len(toks) > 1 && toks[0].Is(pysrc.Name, "class") && toks[1].Kind == pysrc.Name:
			cls := toks[1].Text
			if n.subclassesMachine(toks[2:]) {
				n.machines[cls] = true
			}
			stack = append(stack, scope{indent: l.Indent, class: cls})
		case len(stack) == 0 && len(toks) == 5 && toks[0].Kind == pysrc.Name && toks[1].Is(pysrc.Op, "=") &&
			toks[2].Kind == pysrc.Name && toks[3].Is(pysrc.Op, ".") && toks[4].Is(pysrc.Name, "TestCase"):
			// TestX = Machine.TestCase
			if strings.HasPrefix(toks[0].Text, "Test") && n.machines[toks[2].Text] {
				add(toks[0].Text, "state machine", l.Number)
			}
		}
	}
	return tests
}

// imports records the names an import statement binds.
func (n *pyNames) imports(toks []pysrc.Token) {
	if len(toks) < 2 || toks[0].Kind != pysrc.Name {
		return
	}
	switch toks[0].Text {
	case "import":
		for _, part := range pysrc.Split(toks[1:], ",") {
			mod, k := pysrc.Dotted(part)
			alias := ""
			if k+1 < len(part) && part[k].Is(pysrc.Name, "as") && part[k+1].Kind == pysrc.Name {
				alias = part[k+1].Text
			}
			switch {
			case mod == "hypothesis" && alias != "":
				n.modules[alias] = true
			case mod == "hypothesis" || mod == "hypothesis.stateful" && alias == "":
				n.modules["hypothesis"] = true
			case mod == "hypothesis.stateful":
				n.stateful[alias] = true
			}
		}
	case "from":
		mod, k := pysrc.Dotted(toks[1:])
		k++
		if k >= len(toks) || !toks[k].Is(pysrc.Name, "import") {
			return
		}
		for _, part := range pysrc.Split(toks[k+1:], ",") {
			for len(part) > 0 && part[0].Is(pysrc.Op, "(") {
				part = part[1:]
			}
			for len(part) > 0 && part[len(part)-1].Is(pysrc.Op, ")") {
				part = part[:len(part)-1]
			}
			if len(part) == 0 || part[0].Kind != pysrc.Name {
				continue
			}
			name, alias := part[0].Text, part[0].Text
			if len(part) == 3 && part[1].Is(pysrc.Name, "as") && part[2].Kind == pysrc.Name {
				alias = part[2].Text
			}
			switch {
			case mod == "hypothesis" && name == "given":
				n.given[alias] = true
			case mod == "hypothesis" && name == "stateful":
				n.stateful[alias] = true
			case mod == "hypothesis.stateful" && name == "RuleBasedStateMachine":
				n.machines[alias] = true
			}
		}
	}
}

// isGiven reports whether a decorator's dotted name is Hypothesis's given.
func (n *pyNames) isGiven(name string) bool {
	if n.given[name] {
		return true
	}
	mod, fn, ok := cutLast(name)
	return ok && fn == "given" && n.modules[mod]
}

// isMachine reports whether a dotted name is a state machine class.
func (n *pyNames) isMachine(name string) bool {
	if n.machines[name] {
		return true
	}
	mod, cls, ok := cutLast(name)
	if !ok || cls != "RuleBasedStateMachine" {
		return false
	}
	if n.stateful[mod] {
		return true
	}
	pkg, sub, ok := cutLast(mod)
	return ok && sub == "stateful" && n.modules[pkg]
}

// subclassesMachine reads a class statement's "(Base, ...)" after its name.
func (n *pyNames) subclassesMachine(toks []pysrc.Token) bool {
	if len(toks) == 0 || !toks[0].Is(pysrc.Op, "(") {
		return false
	}
	for _, part := range pysrc.Split(toks[1:], ",") {
		if name, k := pysrc.Dotted(part); k > 0 && n.isMachine(name) {
			return true
		}
	}
	return false
}

func cutLast(dotted string) (string, string, bool) {
	i := strings.LastIndexByte(dotted, '.')
	if i < 0 {
		return "", "", false
	}
	return dotted[:i], dotted[i+1:], true
}
