package discover

// JSToken is one token of JSTokenize.
type JSToken struct {
	// Kind is 'n' (identifier or keyword), 'o' (one punctuation
	// character), 's' (a string, or a template literal without ${}) or 'x'
	// (a number, a regular expression, a template literal with ${}).
	Kind byte
	// Text is the token; a string's value with its escapes as written.
	Text string
	Line int
}

// JSTokenize is the tokenizer discover reads JavaScript and TypeScript
// with (comments dropped; strings, templates and regular expressions
// single tokens), for the other readers of JavaScript (check reads
// vitest and jest configs with it).
func JSTokenize(src string) []JSToken {
	toks := jsTokenize(src)
	out := make([]JSToken, len(toks))
	for i, t := range toks {
		out[i] = JSToken{Kind: t.kind, Text: t.text, Line: t.line}
	}
	return out
}
