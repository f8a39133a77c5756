// Static import analysis of Python files: which modules a file imports,
// read with the tokenizer (strings, comments, brackets and continuation
// lines are understood), never run. infra follows a property's helpers
// with it, impact a test file's import closure.

package pysrc

import "strings"

// Import is one module an import statement names.
type Import struct {
	// Level is the number of leading dots of a relative import (0 for an
	// absolute one).
	Level int
	// Module is the dotted module path after the dots ("" for "from . import x").
	Module string
	// Names are the names of "from M import a, b" ("*" kept); nil for
	// "import M".
	Names []string
}

// Imports lists the modules src imports: every "import a.b [as c], d"
// and "from [.]a.b import x, (y, z)" statement, at any indentation (an
// import inside a function or a try block counts too).
func Imports(src string) []Import {
	var out []Import
	for _, l := range LogicalLines(src) {
		line := l.Tokens
		if len(line) < 2 || line[0].Kind != Name {
			continue
		}
		switch line[0].Text {
		case "import":
			for _, part := range Split(line[1:], ",") {
				if mod, ok := dottedName(part); ok {
					out = append(out, Import{Module: mod})
				}
			}
		case "from":
			k := 1
			level := 0
			for k < len(line) && line[k].Is(Op, ".") {
				level++
				k++
			}
			var modToks []Token
			for k < len(line) && !(line[k].Is(Name, "import")) {
				modToks = append(modToks, line[k])
				k++
			}
			if k == len(line) {
				continue
			}
			mod := ""
			if len(modToks) > 0 {
				m, ok := dottedName(modToks)
				if !ok {
					continue
				}
				mod = m
			}
			if level == 0 && mod == "" {
				continue
			}
			var names []string
			for _, part := range Split(line[k+1:], ",") {
				for len(part) > 0 && part[0].Is(Op, "(") {
					part = part[1:]
				}
				for len(part) > 0 && part[len(part)-1].Is(Op, ")") {
					part = part[:len(part)-1]
				}
				if len(part) > 0 && (part[0].Kind == Name || part[0].Text == "*") {
					names = append(names, part[0].Text)
				}
			}
			out = append(out, Import{Level: level, Module: mod, Names: names})
		}
	}
	return out
}

// dottedName reads "a.b.c" (optionally followed by "as x") from toks.
func dottedName(toks []Token) (string, bool) {
	var parts []string
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if t.Is(Name, "as") && len(parts) > 0 {
			break
		}
		if i%2 == 0 {
			if t.Kind != Name {
				return "", false
			}
			parts = append(parts, t.Text)
		} else if !t.Is(Op, ".") {
			return "", false
		}
	}
	if len(parts) == 0 {
		return "", false
	}
	return strings.Join(parts, "."), true
}
