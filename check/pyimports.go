// Static import analysis of Python files: which modules a file imports,
// read with a tokenizer (strings, comments, brackets and continuation
// lines are understood), never run.

package check

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// pyImport is one module an import statement names.
type pyImport struct {
	// Level is the number of leading dots of a relative import (0 for an
	// absolute one).
	Level int
	// Module is the dotted module path after the dots ("" for "from . import x").
	Module string
	// Names are the names of "from M import a, b" ("*" kept); nil for
	// "import M".
	Names []string
}

// pyToken is one token of a logical line: a name, an operator or
// punctuation character, or a string/number literal (kind 's').
type pyToken struct {
	kind byte // 'n' name, 'o' operator, 's' literal
	text string
}

// pyLogicalLines tokenizes src and returns its logical lines (physical
// lines joined inside brackets and after a backslash, split at ';'), as
// lists of tokens. Comments are dropped; string literals, triple-quoted
// ones included, become one token and never contribute a name.
func pyLogicalLines(src string) [][]pyToken {
	var lines [][]pyToken
	var cur []pyToken
	depth := 0
	flush := func() {
		if len(cur) > 0 {
			lines = append(lines, cur)
		}
		cur = nil
	}
	i := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == '#':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '\\' && i+1 < len(src) && (src[i+1] == '\n' || src[i+1] == '\r'):
			i += 2
			if i < len(src) && src[i-1] == '\r' && src[i] == '\n' {
				i++
			}
		case c == '\n' || c == '\r':
			i++
			if depth == 0 {
				flush()
			}
		case c == ' ' || c == '\t' || c == '\f':
			i++
		case c == ';' && depth == 0:
			i++
			flush()
		case c == '"' || c == '\'':
			i = pySkipString(src, i)
			cur = append(cur, pyToken{'s', ""})
		case isPyNameStart(c) || c >= utf8.RuneSelf:
			j := i
			for j < len(src) {
				r, n := utf8.DecodeRuneInString(src[j:])
				if r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) {
					j += n
					continue
				}
				break
			}
			if j == i { // a character that is no part of a name
				_, n := utf8.DecodeRuneInString(src[i:])
				i += n
				continue
			}
			word := src[i:j]
			// A string prefix (r, b, f, u, rb, br, fr, rf in any case).
			if j < len(src) && (src[j] == '"' || src[j] == '\'') && len(word) <= 2 && strings.Trim(strings.ToLower(word), "rbfu") == "" {
				i = pySkipString(src, j)
				cur = append(cur, pyToken{'s', ""})
				continue
			}
			cur = append(cur, pyToken{'n', word})
			i = j
		case c >= '0' && c <= '9':
			j := i
			for j < len(src) && (isPyNameStart(src[j]) || (src[j] >= '0' && src[j] <= '9') || src[j] == '.') {
				j++
			}
			cur = append(cur, pyToken{'s', src[i:j]})
			i = j
		default:
			switch c {
			case '(', '[', '{':
				depth++
			case ')', ']', '}':
				if depth > 0 {
					depth--
				}
			}
			cur = append(cur, pyToken{'o', string(c)})
			i++
		}
	}
	flush()
	return lines
}

func isPyNameStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

// pySkipString returns the index just past the string literal starting
// with the quote at src[i] (single or triple quoted); an unterminated one
// runs to the end of its line (single) or of the file (triple).
func pySkipString(src string, i int) int {
	q := src[i]
	triple := strings.HasPrefix(src[i:], strings.Repeat(string(q), 3))
	if triple {
		end := string([]byte{q, q, q})
		j := i + 3
		for j < len(src) {
			if src[j] == '\\' {
				j += 2
				continue
			}
			if strings.HasPrefix(src[j:], end) {
				return j + 3
			}
			j++
		}
		return len(src)
	}
	j := i + 1
	for j < len(src) {
		switch src[j] {
		case '\\':
			j += 2
			continue
		case q:
			return j + 1
		case '\n':
			return j
		}
		j++
	}
	return len(src)
}

// pyImports lists the modules src imports: every "import a.b [as c], d"
// and "from [.]a.b import x, (y, z)" statement, at any indentation (an
// import inside a function or a try block counts too).
func pyImports(src string) []pyImport {
	var out []pyImport
	for _, line := range pyLogicalLines(src) {
		if len(line) < 2 || line[0].kind != 'n' {
			continue
		}
		switch line[0].text {
		case "import":
			for _, part := range splitTokens(line[1:], ",") {
				if mod, ok := dottedName(part); ok {
					out = append(out, pyImport{Module: mod})
				}
			}
		case "from":
			k := 1
			level := 0
			for k < len(line) && line[k].kind == 'o' && line[k].text == "." {
				level++
				k++
			}
			var modToks []pyToken
			for k < len(line) && !(line[k].kind == 'n' && line[k].text == "import") {
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
			for _, part := range splitTokens(line[k+1:], ",") {
				for len(part) > 0 && part[0].kind == 'o' && part[0].text == "(" {
					part = part[1:]
				}
				for len(part) > 0 && part[len(part)-1].kind == 'o' && part[len(part)-1].text == ")" {
					part = part[:len(part)-1]
				}
				if len(part) > 0 && (part[0].kind == 'n' || part[0].text == "*") {
					names = append(names, part[0].text)
				}
			}
			out = append(out, pyImport{Level: level, Module: mod, Names: names})
		}
	}
	return out
}

// splitTokens splits toks at the operator sep.
func splitTokens(toks []pyToken, sep string) [][]pyToken {
	var out [][]pyToken
	start := 0
	for i, t := range toks {
		if t.kind == 'o' && t.text == sep {
			out = append(out, toks[start:i])
			start = i + 1
		}
	}
	return append(out, toks[start:])
}

// dottedName reads "a.b.c" (optionally followed by "as x") from toks.
func dottedName(toks []pyToken) (string, bool) {
	var parts []string
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if t.kind == 'n' && t.text == "as" && len(parts) > 0 {
			break
		}
		if i%2 == 0 {
			if t.kind != 'n' {
				return "", false
			}
			parts = append(parts, t.text)
		} else if t.kind != 'o' || t.text != "." {
			return "", false
		}
	}
	if len(parts) == 0 {
		return "", false
	}
	return strings.Join(parts, "."), true
}
