package grade

import (
	"bytes"
	"encoding/json"
	"path"
	"strings"
)

// A file that holds pytest's configuration beside other tools'
// (pyproject.toml, setup.cfg, tox.ini) cannot be taken from the base
// without rewriting it: its packaging part is the candidate's. It is
// watched instead, and a change counts only when it changes pytest's
// part (or when that part cannot be read with certainty).

// MixedPytestFile reports whether f is a file whose pytest part
// PytestPart reads.
func MixedPytestFile(f string) bool {
	switch path.Base(f) {
	case "pyproject.toml", "setup.cfg", "tox.ini":
		return true
	}
	return false
}

// PytestPartChanged reports whether the pytest part of the mixed file f
// differs between base and cand, or cannot be read in either.
func PytestPartChanged(f string, base, cand []byte) bool {
	b, okB := PytestPart(f, base)
	c, okC := PytestPart(f, cand)
	return !okB || !okC || b != c
}

// PytestPart is the text of pytest's part of the mixed file f (src):
// setup.cfg's [tool:pytest] section, tox.ini's [pytest] section, every
// key of pyproject.toml under tool.pytest (a [tool.pytest...] table or a
// dotted key), each line trimmed. ok is false when it cannot be read
// with certainty: a pyproject.toml whose multi-line values do not end, or
// that gives "tool" a value inline (where pytest's keys could hide).
func PytestPart(f string, src []byte) (string, bool) {
	if path.Base(f) == "pyproject.toml" {
		return tomlPytest(src)
	}
	want := map[string]bool{"pytest": true}
	if path.Base(f) == "setup.cfg" {
		want = map[string]bool{"tool:pytest": true, "pytest": true}
	}
	var out strings.Builder
	in := false
	for _, l := range strings.Split(string(src), "\n") {
		l = strings.TrimRight(l, " \t\r")
		if strings.HasPrefix(l, "[") {
			if end := strings.IndexByte(l, ']'); end > 0 {
				in = want[strings.TrimSpace(l[1:end])]
			}
		}
		if in && strings.TrimSpace(l) != "" {
			out.WriteString(l + "\n")
		}
	}
	return out.String(), true
}

// tomlPytest reads pyproject.toml's tool.pytest part, line by line,
// with the state of multi-line strings and brackets.
func tomlPytest(src []byte) (string, bool) {
	var out strings.Builder
	table := ""
	depth, str := 0, "" // bracket depth of a multi-line value; the open multi-line string's quotes
	inPytest := false   // the statement being read is pytest's
	for _, l := range strings.Split(string(src), "\n") {
		line := strings.TrimRight(l, " \t\r")
		startsFree := depth == 0 && str == ""
		if startsFree {
			t := strings.TrimSpace(line)
			switch {
			case t == "" || strings.HasPrefix(t, "#"):
				continue
			case strings.HasPrefix(t, "["):
				name := strings.Trim(t, "[] \t")
				if i := strings.IndexByte(name, '#'); i >= 0 {
					name = strings.TrimRight(name[:i], "] \t")
				}
				table = tomlKey(name)
				inPytest = hasKeyPrefix(table, "tool.pytest")
				if inPytest {
					out.WriteString(t + "\n")
				}
				continue
			default:
				eq := strings.IndexByte(t, '=')
				if eq < 0 {
					return "", false
				}
				key := tomlKey(t[:eq])
				if table != "" {
					key = table + "." + key
				}
				if key == "tool" {
					return "", false // an inline value of tool: pytest's keys could be inside
				}
				inPytest = hasKeyPrefix(key, "tool.pytest")
				if inPytest && !hasKeyPrefix(table, "tool.pytest") {
					out.WriteString("@" + key + "\n")
				}
			}
		}
		if inPytest {
			out.WriteString(strings.TrimSpace(line) + "\n")
		}
		var ok bool
		if depth, str, ok = tomlScan(line, depth, str); !ok {
			return "", false
		}
	}
	if depth != 0 || str != "" {
		return "", false
	}
	return out.String(), true
}

// tomlScan follows one line's strings and brackets: depth is the bracket
// depth, str the quotes of a multi-line string left open.
func tomlScan(l string, depth int, str string) (int, string, bool) {
	for i := 0; i < len(l); i++ {
		if str != "" {
			if str == `"""` && l[i] == '\\' {
				i++
				continue
			}
			if strings.HasPrefix(l[i:], str) {
				i += len(str) - 1
				str = ""
			}
			continue
		}
		switch c := l[i]; c {
		case '#':
			return depth, str, true
		case '"', '\'':
			q := string([]byte{c, c, c})
			if strings.HasPrefix(l[i:], q) {
				str = q
				i += 2
				continue
			}
			end := i + 1
			for end < len(l) && l[end] != c {
				if c == '"' && l[end] == '\\' {
					end++
				}
				end++
			}
			if end >= len(l) {
				return 0, "", false // a one-line string that does not end
			}
			i = end
		case '[', '{':
			depth++
		case ']', '}':
			depth--
			if depth < 0 {
				return 0, "", false
			}
		}
	}
	return depth, str, true
}

// tomlKey normalizes a dotted key: no space around the dots, no quotes.
func tomlKey(k string) string {
	parts := strings.Split(k, ".")
	for i, p := range parts {
		parts[i] = strings.Trim(strings.TrimSpace(p), `"'`)
	}
	return strings.Join(parts, ".")
}

// hasKeyPrefix reports whether the dotted key k is prefix or under it.
func hasKeyPrefix(k, prefix string) bool {
	return k == prefix || strings.HasPrefix(k, prefix+".")
}

// JestKeyChanged reports whether package.json's "jest" value differs
// between base and cand, or either is not JSON.
func JestKeyChanged(base, cand []byte) bool {
	b, okB := jestKey(base)
	c, okC := jestKey(cand)
	return !okB || !okC || !bytes.Equal(b, c)
}

// jestKey is package.json's "jest" value, re-encoded (keys sorted).
func jestKey(src []byte) ([]byte, bool) {
	var pkg map[string]any
	if err := json.Unmarshal(src, &pkg); err != nil {
		return nil, false
	}
	b, err := json.Marshal(pkg["jest"])
	return b, err == nil
}
