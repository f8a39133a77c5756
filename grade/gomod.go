package grade

import (
	"bytes"
	"strings"
)

// goModVerbs are the go.mod directives that decide how the tests of the
// module compile and run rather than what they depend on: the language
// version (loop variables, what the compiler accepts, the GODEBUG
// defaults), the toolchain and the GODEBUG settings.
var goModVerbs = map[string]bool{"go": true, "toolchain": true, "godebug": true}

// goModDirectives splits a go.mod into the lines of its go, toolchain
// and godebug directives (a godebug block whole) and the other lines,
// each with its line ending. ok is false when the file cannot be read
// with certainty: a block that never closes, or a directive of those
// verbs written in a way this reader does not know.
func goModDirectives(src []byte) (directives, rest []string, ok bool) {
	lines := splitLines(src)
	inBlock, blockVerb := false, ""
	for _, l := range lines {
		code := goModCode(l)
		if inBlock {
			if goModVerbs[blockVerb] {
				directives = append(directives, l)
			} else {
				rest = append(rest, l)
			}
			if code == ")" {
				inBlock = false
			} else if strings.HasSuffix(code, "(") {
				return nil, nil, false // a block inside a block: not go.mod
			}
			continue
		}
		fields := strings.Fields(code)
		if len(fields) == 0 {
			rest = append(rest, l)
			continue
		}
		verb := fields[0]
		if i := strings.IndexAny(verb, "(\"`"); i >= 0 {
			verb = verb[:i] // "require(" or "godebug(": a block without a space
		}
		opens := strings.TrimSpace(strings.TrimPrefix(code, verb)) == "("
		if goModVerbs[verb] {
			if strings.Contains(code, "(") && !opens {
				return nil, nil, false // not a form of the directive this reader knows
			}
			directives = append(directives, l)
		} else {
			rest = append(rest, l)
		}
		if opens {
			inBlock, blockVerb = true, verb
		}
	}
	if inBlock {
		return nil, nil, false
	}
	return directives, rest, true
}

// goModCode is line l without its comment and surrounding white space.
func goModCode(l string) string {
	if i := strings.Index(l, "//"); i >= 0 {
		l = l[:i]
	}
	return strings.TrimSpace(l)
}

// splitLines splits src after each "\n"; the last line may have none.
func splitLines(src []byte) []string {
	var out []string
	for len(src) > 0 {
		i := bytes.IndexByte(src, '\n')
		if i < 0 {
			out = append(out, string(src))
			break
		}
		out = append(out, string(src[:i+1]))
		src = src[i+1:]
	}
	return out
}

// GradedGoMod is the go.mod the graded tree holds: the candidate's (its
// module, require, replace, exclude and retract lines are its
// dependencies) with the base's go, toolchain and godebug directives in
// place of its own. changed says the candidate's directives differ from
// the base's (so the graded file is not the candidate's); ok is false
// when either file cannot be read with certainty (then the caller leaves
// the candidate's go.mod and watches it).
func GradedGoMod(base, cand []byte) (graded []byte, changed, ok bool) {
	bd, _, okB := goModDirectives(base)
	cd, rest, okC := goModDirectives(cand)
	if !okB || !okC {
		return nil, false, false
	}
	if normDirectives(bd) == normDirectives(cd) {
		return cand, false, true
	}
	var out strings.Builder
	placed := false
	for _, l := range rest {
		out.WriteString(l)
		if !placed && strings.HasPrefix(goModCode(l), "module") {
			if !strings.HasSuffix(l, "\n") {
				out.WriteString("\n")
			}
			writeDirectives(&out, bd)
			placed = true
		}
	}
	if !placed {
		if s := out.String(); s != "" && !strings.HasSuffix(s, "\n") {
			out.WriteString("\n")
		}
		writeDirectives(&out, bd)
	}
	return []byte(out.String()), true, true
}

// writeDirectives writes the base's directive lines, each ending in a
// newline.
func writeDirectives(out *strings.Builder, lines []string) {
	for _, l := range lines {
		out.WriteString(l)
		if !strings.HasSuffix(l, "\n") {
			out.WriteString("\n")
		}
	}
}

// normDirectives is what the directives say: their code, comments and
// blank lines left out.
func normDirectives(lines []string) string {
	var b strings.Builder
	for _, l := range lines {
		if c := strings.Join(strings.Fields(goModCode(l)), " "); c != "" {
			b.WriteString(c + "\n")
		}
	}
	return b.String()
}
