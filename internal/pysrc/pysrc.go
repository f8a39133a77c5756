// Package pysrc reads Python source without running it: a tokenizer that
// understands strings (triple-quoted and prefixed ones included), comments,
// brackets and continuation lines, and returns logical lines of tokens with
// their indentation. check reads a property's imports with it and init
// finds Hypothesis tests with it; a decorator or an import inside a string
// or a comment is never a token.
package pysrc

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Token kinds.
const (
	Name    byte = 'n' // an identifier or keyword
	Op      byte = 'o' // an operator or punctuation character
	Literal byte = 's' // a string or number literal
)

// Token is one token of a logical line: a name, an operator or punctuation
// character, or a string/number literal (a string's Text is empty: its
// contents never count as code).
type Token struct {
	Kind byte
	Text string
}

// Is reports whether t is the token kind with text s.
func (t Token) Is(kind byte, s string) bool { return t.Kind == kind && t.Text == s }

// Line is one logical line: its indentation (columns of the physical line
// it starts on, a tab advancing to the next multiple of 8, as Python
// counts) and its tokens.
type Line struct {
	Indent int
	Tokens []Token
	// Number is the 1-based physical line the logical line starts on.
	Number int
}

// LogicalLines tokenizes src and returns its logical lines (physical lines
// joined inside brackets and after a backslash, split at ';'). Comments
// are dropped; string literals, triple-quoted ones included, become one
// token and never contribute a name.
func LogicalLines(src string) []Line {
	var lines []Line
	var cur Line
	depth := 0
	lineNo := 1
	lineStart := 0
	flush := func() {
		if len(cur.Tokens) > 0 {
			lines = append(lines, cur)
		}
		cur = Line{}
	}
	add := func(t Token, at int) {
		if len(cur.Tokens) == 0 {
			cur.Indent = indentOf(src[lineStart:at])
			cur.Number = lineNo
		}
		cur.Tokens = append(cur.Tokens, t)
	}
	newline := func(next int) {
		lineNo++
		lineStart = next
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
			newline(i)
		case c == '\n' || c == '\r':
			i++
			if c == '\r' && i < len(src) && src[i] == '\n' {
				i++
			}
			newline(i)
			if depth == 0 {
				flush()
			}
		case c == ' ' || c == '\t' || c == '\f':
			i++
		case c == ';' && depth == 0:
			i++
			flush()
		case c == '"' || c == '\'':
			at := i
			j := skipString(src, i)
			lineNo += strings.Count(src[i:j], "\n")
			add(Token{Literal, ""}, at)
			i = j
		case isNameStart(c) || c >= utf8.RuneSelf:
			j, k := nameAt(src, i)
			switch {
			case j == i: // a character that is no part of a name
				_, n := utf8.DecodeRuneInString(src[i:])
				i += n
			case k > 0: // a prefixed string
				lineNo += strings.Count(src[j:k], "\n")
				add(Token{Literal, ""}, i)
				i = k
			default:
				add(Token{Name, src[i:j]}, i)
				i = j
			}
		case c >= '0' && c <= '9':
			j := i
			for j < len(src) && (isNameStart(src[j]) || (src[j] >= '0' && src[j] <= '9') || src[j] == '.') {
				j++
			}
			add(Token{Literal, src[i:j]}, i)
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
			add(Token{Op, string(c)}, i)
			i++
		}
	}
	flush()
	return lines
}

// nameAt reads the name that starts at src[i]: end is where it ends (i
// when src[i] is no part of a name). A string prefix (r, b, f, u, rb, br,
// fr, rf in any case) before a quote is no name: strEnd is then where
// that string ends (0 otherwise).
func nameAt(src string, i int) (end, strEnd int) {
	j := i
	for j < len(src) {
		r, n := utf8.DecodeRuneInString(src[j:])
		if r != '_' && !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			break
		}
		j += n
	}
	word := src[i:j]
	if j > i && j < len(src) && (src[j] == '"' || src[j] == '\'') && len(word) <= 2 && strings.Trim(strings.ToLower(word), "rbfu") == "" {
		return j, skipString(src, j)
	}
	return j, 0
}

// indentOf measures the leading whitespace of a physical line's start.
func indentOf(s string) int {
	col := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ':
			col++
		case '\t':
			col = (col/8 + 1) * 8
		case '\f':
			col = 0
		default:
			return col
		}
	}
	return col
}

func isNameStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

// skipString returns the index just past the string literal starting with
// the quote at src[i] (single or triple quoted); an unterminated one runs
// to the end of its line (single) or of the file (triple).
func skipString(src string, i int) int {
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
	return min(j, len(src))
}

// Split splits toks at the operator sep.
func Split(toks []Token, sep string) [][]Token {
	var out [][]Token
	start := 0
	for i, t := range toks {
		if t.Is(Op, sep) {
			out = append(out, toks[start:i])
			start = i + 1
		}
	}
	return append(out, toks[start:])
}

// Dotted reads a dotted name "a.b.c" at the start of toks and returns it
// and the number of tokens it took ("", 0 when toks does not start with a
// name).
func Dotted(toks []Token) (string, int) {
	if len(toks) == 0 || toks[0].Kind != Name {
		return "", 0
	}
	parts := []string{toks[0].Text}
	n := 1
	for n+1 < len(toks) && toks[n].Is(Op, ".") && toks[n+1].Kind == Name {
		parts = append(parts, toks[n+1].Text)
		n += 2
	}
	return strings.Join(parts, "."), n
}
