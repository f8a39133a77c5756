package template

import (
	"strconv"
	"strings"

	"github.com/flakegate/flakegate"
)

// Vars are the values an argv template may name: {path} is the property
// path, {name} the test's name, {seed} the seed as a user writes it, {samples} the sample count and
// {fixture} the fixture path.
type Vars struct {
	Path    string
	Name    string
	Seed    string
	Samples string
	Fixture string
}

func (v Vars) lookup(name string) (string, bool) {
	switch name {
	case "path":
		return v.Path, true
	case "name":
		return v.Name, true
	case "seed":
		return v.Seed, true
	case "samples":
		return v.Samples, true
	case "fixture":
		return v.Fixture, true
	}
	return "", false
}

const placeholderHint = "the placeholders are {path}, {name}, {seed}, {samples} and {fixture}"

// Expand fills the placeholders of an argv template. A placeholder is a
// brace pair around a name that starts with a letter ({seed}, and also
// --hypothesis-seed={seed}); other braces ({}, {"a":1}, [0-9]{3}) are kept
// as they are. Values are substituted once and never re-expanded.
//
// Expand returns an EINVALID error for an empty argv, an empty command
// name, an unknown placeholder, a placeholder whose value is empty, or a
// NUL byte in the template or a value (a NUL cannot cross exec).
func Expand(tmpl []string, v Vars) ([]string, error) {
	if len(tmpl) == 0 {
		return nil, expandErr("the command is empty", "give the command as a list, e.g. [\"pytest\", \"{path}\"]")
	}
	out := make([]string, len(tmpl))
	for i, arg := range tmpl {
		if strings.IndexByte(arg, 0) >= 0 {
			return nil, expandErr("argument "+strconv.Itoa(i)+" contains a NUL byte", "")
		}
		s, err := expandArg(arg, v)
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	if out[0] == "" {
		return nil, expandErr("the command name is empty", "")
	}
	return out, nil
}

func expandArg(arg string, v Vars) (string, error) {
	orig := arg
	var b strings.Builder
	for {
		open := strings.IndexByte(arg, '{')
		if open < 0 {
			b.WriteString(arg)
			return b.String(), nil
		}
		n := placeholderLen(arg[open+1:])
		if n == 0 {
			b.WriteString(arg[:open+1])
			arg = arg[open+1:]
			continue
		}
		name := arg[open+1 : open+1+n]
		val, ok := v.lookup(name)
		if !ok {
			return "", expandErr("unknown placeholder {"+name+"} in "+strconv.Quote(orig), placeholderHint)
		}
		if val == "" {
			return "", expandErr("placeholder {"+name+"} has no value", "")
		}
		if strings.IndexByte(val, 0) >= 0 {
			return "", expandErr("the value of {"+name+"} contains a NUL byte", "")
		}
		b.WriteString(arg[:open])
		b.WriteString(val)
		arg = arg[open+1+n+1:]
	}
}

// placeholderLen returns the length of the name in s if s starts with
// name + "}", where a name is a letter followed by letters, digits or
// underscores; otherwise 0.
func placeholderLen(s string) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '_'):
		case i > 0 && c == '}':
			return i
		default:
			return 0
		}
	}
	return 0
}

func expandErr(msg, hint string) error {
	return &flakegate.Error{Code: flakegate.EINVALID, Op: "expand command", Message: msg, Hint: hint}
}
