package discover

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// JavaScript token kinds.
const (
	jsName   byte = 'n' // identifier or keyword
	jsPunct  byte = 'o' // punctuation or operator (one character)
	jsString byte = 's' // '...', "..." or a template literal without ${}
	jsOther  byte = 'x' // number, regular expression, template with ${}
)

// jsToken is one token; a string's Text is its value (escapes kept as
// written), so a test's name can be read.
type jsToken struct {
	kind byte
	text string
	line int
}

func (t jsToken) is(kind byte, s string) bool { return t.kind == kind && t.text == s }

// jsKeywordsBeforeExpr are the keywords after which a '/' starts a
// regular expression, not a division.
var jsKeywordsBeforeExpr = map[string]bool{
	"return": true, "typeof": true, "instanceof": true, "in": true, "of": true, "new": true,
	"delete": true, "void": true, "throw": true, "case": true, "do": true, "else": true,
	"yield": true, "await": true,
}

// jsTokenize reads JavaScript or TypeScript well enough to find calls:
// comments are dropped; strings, template literals (with their ${}
// expressions) and regular expression literals are single tokens, so
// nothing inside them reads as code. An unterminated literal runs to the
// end of the file. Expressions inside a template literal's ${} are
// tokenized too, after the template's token.
func jsTokenize(src string) []jsToken {
	t := &jsTokenizer{src: src, line: 1}
	t.run(false)
	return t.out
}

type jsTokenizer struct {
	src  string
	i    int
	line int
	out  []jsToken
}

// regexAllowed reports whether a '/' here starts a regular expression.
func (t *jsTokenizer) regexAllowed() bool {
	if len(t.out) == 0 {
		return true
	}
	last := t.out[len(t.out)-1]
	switch last.kind {
	case jsName:
		return jsKeywordsBeforeExpr[last.text]
	case jsString, jsOther:
		return false
	}
	return last.text != ")" && last.text != "]" && last.text != "}"
}

// run tokenizes until the end, or, inside a template's ${, until the
// brace that closes it.
func (t *jsTokenizer) run(inTemplate bool) {
	depth := 0
	src := t.src
	for t.i < len(src) {
		c := src[t.i]
		switch {
		case c == '\n':
			t.line++
			t.i++
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			t.i++
		case strings.HasPrefix(src[t.i:], "//"):
			for t.i < len(src) && src[t.i] != '\n' {
				t.i++
			}
		case strings.HasPrefix(src[t.i:], "/*"):
			end := strings.Index(src[t.i+2:], "*/")
			stop := len(src)
			if end >= 0 {
				stop = t.i + 2 + end + 2
			}
			t.line += strings.Count(src[t.i:stop], "\n")
			t.i = stop
		case c == '"' || c == '\'':
			t.quoted(c)
		case c == '`':
			t.template()
		case c == '/' && t.regexAllowed():
			t.regex()
		case c == '{':
			depth++
			t.emit(jsPunct, "{")
			t.i++
		case c == '}':
			if inTemplate && depth == 0 {
				t.i++
				return
			}
			depth--
			t.emit(jsPunct, "}")
			t.i++
		case c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= utf8.RuneSelf:
			j := t.i
			for j < len(src) {
				r, n := utf8.DecodeRuneInString(src[j:])
				if r == '_' || r == '$' || unicode.IsLetter(r) || unicode.IsDigit(r) {
					j += n
					continue
				}
				break
			}
			if j == t.i {
				_, n := utf8.DecodeRuneInString(src[t.i:])
				t.i += n
				continue
			}
			t.emit(jsName, src[t.i:j])
			t.i = j
		case c >= '0' && c <= '9':
			j := t.i
			for j < len(src) && (isJSIdentByte(src[j]) || src[j] == '.') {
				j++
			}
			t.emit(jsOther, src[t.i:j])
			t.i = j
		default:
			t.emit(jsPunct, string(c))
			t.i++
		}
	}
}

func isJSIdentByte(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func (t *jsTokenizer) emit(kind byte, text string) {
	t.out = append(t.out, jsToken{kind: kind, text: text, line: t.line})
}

// quoted reads a '...' or "..." string.
func (t *jsTokenizer) quoted(q byte) {
	line := t.line
	var b strings.Builder
	j := t.i + 1
	for j < len(t.src) {
		c := t.src[j]
		if c == '\\' && j+1 < len(t.src) {
			if t.src[j+1] == '\n' {
				t.line++
			}
			b.WriteByte(c)
			b.WriteByte(t.src[j+1])
			j += 2
			continue
		}
		if c == q || c == '\n' {
			break
		}
		b.WriteByte(c)
		j++
	}
	t.i = min(j+1, len(t.src))
	t.out = append(t.out, jsToken{kind: jsString, text: b.String(), line: line})
}

// template reads a template literal; its ${...} expressions are
// tokenized after it.
func (t *jsTokenizer) template() {
	line := t.line
	var b strings.Builder
	idx := len(t.out)
	t.out = append(t.out, jsToken{kind: jsString, line: line})
	plain := true
	j := t.i + 1
	for j < len(t.src) {
		c := t.src[j]
		switch {
		case c == '\\' && j+1 < len(t.src):
			b.WriteByte(c)
			b.WriteByte(t.src[j+1])
			if t.src[j+1] == '\n' {
				t.line++
			}
			j += 2
			continue
		case c == '`':
			t.i = j + 1
			t.finishTemplate(idx, plain, b.String())
			return
		case c == '$' && j+1 < len(t.src) && t.src[j+1] == '{':
			plain = false
			t.i = j + 2
			t.run(true)
			j = t.i
			continue
		case c == '\n':
			t.line++
		}
		b.WriteByte(c)
		j++
	}
	t.i = len(t.src)
	t.finishTemplate(idx, plain, b.String())
}

func (t *jsTokenizer) finishTemplate(idx int, plain bool, text string) {
	if plain {
		t.out[idx].text = text
	} else {
		t.out[idx].kind = jsOther
	}
}

// regex reads a regular expression literal and its flags.
func (t *jsTokenizer) regex() {
	j := t.i + 1
	inClass := false
	for j < len(t.src) {
		c := t.src[j]
		if c == '\\' {
			j += 2
			continue
		}
		if c == '\n' {
			break // not a regex after all; give up at the line's end
		}
		if c == '[' {
			inClass = true
		} else if c == ']' {
			inClass = false
		} else if c == '/' && !inClass {
			j++
			break
		}
		j++
	}
	for j < len(t.src) && isJSIdentByte(t.src[j]) {
		j++
	}
	j = min(j, len(t.src))
	t.emit(jsOther, t.src[t.i:j])
	t.i = j
}
