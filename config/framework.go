// The framework of a property (framework:), known at load: from the key,
// else from the argv through the wrappers whose meaning is certain, else
// from the property file. Watching and evidence follow it, never the
// spelling of the command.

package config

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"

	"github.com/goccy/go-yaml/ast"
)

// Frameworks a property can name (framework:).
const (
	FrameworkGo     = "go"
	FrameworkPytest = "pytest"
	FrameworkVitest = "vitest"
	FrameworkJest   = "jest"
	FrameworkNone   = "none"
)

// Frameworks lists the values framework: takes.
var Frameworks = []string{FrameworkGo, FrameworkPytest, FrameworkVitest, FrameworkJest, FrameworkNone}

// FrameworkOfArgv names the framework an argv runs, "" when it is not
// recognized. It sees through the wrappers whose meaning is certain:
//
//   - env [-i] [-u NAME] [NAME=VALUE ...] CMD
//   - sh|bash|dash -c SCRIPT, where SCRIPT is one simple command
//     ([exec] [NAME=VALUE ...] CMD ...), optionally after "cd DIR &&" or
//     "export NAME=VALUE;" steps; pipes, other sequences, substitutions and
//     redirections are not followed;
//   - uv run, poetry run, pipenv run, pdm run, hatch run (their options skipped);
//   - npx, npm exec, pnpm exec, yarn, bunx and node FILE;
//   - python[3[.N]] [options] -m pytest.
//
// make, tox, nox, npm test and npm run are not: what they run is in a file
// the patch may change, so the property says framework: itself.
func FrameworkOfArgv(argv []string) string {
	return frameworkOf(argv, 0)
}

func frameworkOf(argv []string, depth int) string {
	if len(argv) == 0 || depth > 6 {
		return ""
	}
	prog := path.Base(argv[0])
	rest := argv[1:]
	switch {
	case prog == "go":
		if len(rest) > 0 && rest[0] == "test" {
			return FrameworkGo
		}
		return ""
	case prog == "pytest" || prog == "py.test" || strings.HasPrefix(prog, "pytest-"):
		return FrameworkPytest
	case isPython(prog):
		for i := 0; i < len(rest); i++ {
			a := rest[i]
			switch {
			case a == "-m":
				if i+1 < len(rest) && (rest[i+1] == "pytest" || rest[i+1] == "py.test") {
					return FrameworkPytest
				}
				return ""
			case a == "-W" || a == "-X":
				i++ // takes a value
			case strings.HasPrefix(a, "-") && a != "-" && a != "-c":
			default:
				return "" // a script, -c CODE or stdin
			}
		}
		return ""
	case prog == "env":
		for i := 0; i < len(rest); i++ {
			a := rest[i]
			switch {
			case a == "-i" || a == "--ignore-environment" || a == "-0" || a == "--null" || a == "-v" || a == "--debug":
			case a == "-u" || a == "--unset" || a == "-C" || a == "--chdir":
				i++
			case strings.HasPrefix(a, "--unset=") || strings.HasPrefix(a, "--chdir="):
			case a == "--":
				return frameworkOf(rest[i+1:], depth+1)
			case strings.HasPrefix(a, "-"):
				return "" // -S and others change how the rest is read
			case strings.Contains(a, "=") && !strings.Contains(a, "/"):
			default:
				return frameworkOf(rest[i:], depth+1)
			}
		}
		return ""
	case prog == "sh" || prog == "bash" || prog == "dash":
		if len(rest) >= 2 && rest[0] == "-c" {
			if words := shellCommand(rest[1]); words != nil {
				return frameworkOf(words, depth+1)
			}
		}
		return ""
	case prog == "uv" || prog == "poetry" || prog == "pipenv" || prog == "pdm" || prog == "hatch":
		if len(rest) == 0 || rest[0] != "run" {
			return ""
		}
		valued := map[string]bool{"--with": true, "--with-editable": true, "--with-requirements": true, "--python": true, "-p": true,
			"--project": true, "--directory": true, "-C": true, "-P": true, "--extra": true, "--group": true, "--env-file": true,
			"--package": true, "--index": true, "--index-url": true, "-e": true, "--env": true}
		return frameworkOf(skipOptions(rest[1:], valued), depth+1)
	case prog == "npx" || prog == "bunx" || prog == "yarn":
		return frameworkOf(skipOptions(rest, map[string]bool{"-p": true, "--package": true, "-c": true, "--call": true}), depth+1)
	case prog == "npm" || prog == "pnpm":
		if len(rest) == 0 || rest[0] != "exec" {
			return ""
		}
		return frameworkOf(skipOptions(rest[1:], map[string]bool{"-p": true, "--package": true, "-c": true, "--call": true}), depth+1)
	case prog == "node":
		for i, a := range rest {
			if !strings.HasPrefix(a, "-") {
				return jsRunner(path.Base(a), rest[i+1:])
			}
			if strings.HasPrefix(a, "--require") || a == "-r" || a == "--import" || a == "--loader" || a == "-e" || a == "--eval" || a == "-p" || a == "--print" {
				return "" // runs other code first, or instead
			}
		}
		return ""
	}
	return jsRunner(prog, rest)
}

// jsRunner names vitest or jest from the program's base name (vitest,
// vitest.mjs, jest, jest.js, ...).
func jsRunner(base string, _ []string) string {
	for _, ext := range []string{".mjs", ".cjs", ".js"} {
		base = strings.TrimSuffix(base, ext)
	}
	switch base {
	case "vitest":
		return FrameworkVitest
	case "jest":
		return FrameworkJest
	}
	return ""
}

func isPython(prog string) bool {
	v, ok := strings.CutPrefix(prog, "python")
	if !ok {
		return false
	}
	return strings.Trim(v, "0123456789.") == ""
}

// skipOptions drops the leading options of a wrapper (and the value of
// those in valued) and a "--" that ends them.
func skipOptions(args []string, valued map[string]bool) []string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return args[i+1:]
		case valued[a]:
			i++
		case strings.HasPrefix(a, "-"):
		default:
			return args[i:]
		}
	}
	return nil
}

// shellCommand reads a shell script that is one simple command, optionally
// after "cd DIR &&" or "export NAME=VALUE;" steps, and returns the
// command's words without "exec" and leading NAME=VALUE assignments; nil
// for anything else (a pipe, an "||", a second command, a substitution, a
// redirection, a glob or an unterminated quote). {placeholders} are words.
func shellCommand(script string) []string {
	var cmds [][]string
	var words []string
	var w strings.Builder
	inWord := false
	flush := func() {
		if inWord {
			words = append(words, w.String())
			w.Reset()
			inWord = false
		}
	}
	for i := 0; i < len(script); i++ {
		ch := script[i]
		switch {
		case ch == ' ' || ch == '\t':
			flush()
		case ch == '\'':
			j := strings.IndexByte(script[i+1:], '\'')
			if j < 0 {
				return nil
			}
			w.WriteString(script[i+1 : i+1+j])
			inWord = true
			i += j + 1
		case ch == '"':
			j := i + 1
			for ; j < len(script) && script[j] != '"'; j++ {
				if strings.IndexByte("$`\\", script[j]) >= 0 {
					return nil
				}
			}
			if j == len(script) {
				return nil
			}
			w.WriteString(script[i+1 : j])
			inWord = true
			i = j
		case ch == ';' || ch == '\n':
			flush()
			cmds = append(cmds, words)
			words = nil
		case ch == '&' && i+1 < len(script) && script[i+1] == '&':
			flush()
			cmds = append(cmds, words)
			words = nil
			i++
		case strings.IndexByte("|&<>()`$\\*?[]#~", ch) >= 0:
			return nil
		default:
			w.WriteByte(ch)
			inWord = true
		}
	}
	flush()
	cmds = append(cmds, words)
	var last []string
	for i, c := range cmds {
		if len(c) == 0 {
			continue
		}
		if i < len(cmds)-1 {
			if c[0] == "cd" && len(c) == 2 || c[0] == "export" && len(c) > 1 && allAssignments(c[1:]) || allAssignments(c) {
				continue
			}
			return nil
		}
		last = c
	}
	for len(last) > 0 && (last[0] == "exec" || isAssignment(last[0])) {
		last = last[1:]
	}
	if len(last) == 0 {
		return nil
	}
	return last
}

func isAssignment(w string) bool {
	name, _, ok := strings.Cut(w, "=")
	if !ok || name == "" {
		return false
	}
	for i, r := range name {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

func allAssignments(ws []string) bool {
	for _, w := range ws {
		if !isAssignment(w) {
			return false
		}
	}
	return len(ws) > 0
}

// FrameworkOfFile names the framework a property file says: go for
// *_test.go, pytest for test_*.py and *_test.py, vitest or jest for a
// *.test.* or *.spec.* JavaScript or TypeScript file when the project's
// nearest package.json (read with read; nil reads nothing) depends on
// exactly one of them; "" when the file says nothing certain.
func FrameworkOfFile(p string, read func(string) ([]byte, bool)) string {
	base := path.Base(p)
	switch {
	case strings.HasSuffix(base, "_test.go"):
		return FrameworkGo
	case strings.HasSuffix(base, ".py") && (strings.HasPrefix(base, "test_") || strings.HasSuffix(base, "_test.py")):
		return FrameworkPytest
	case IsJSTestFile(base):
		if read == nil {
			return ""
		}
		for d := path.Dir(p); ; d = path.Dir(d) {
			if b, ok := read(path.Join(d, "package.json")); ok {
				return jsProjectRunner(b)
			}
			if d == "." {
				return ""
			}
		}
	}
	return ""
}

// IsJSTestFile reports whether a base name is a JavaScript or TypeScript
// test file (x.test.ts, x.spec.js, ...).
func IsJSTestFile(base string) bool {
	ext := path.Ext(base)
	switch ext {
	case ".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".jsx", ".tsx":
	default:
		return false
	}
	stem := strings.TrimSuffix(base, ext)
	return strings.HasSuffix(stem, ".test") || strings.HasSuffix(stem, ".spec")
}

// jsProjectRunner names the runner a package.json depends on, "" when it
// names both or neither.
func jsProjectRunner(b []byte) string {
	var pkg struct {
		Dependencies    map[string]any `json:"dependencies"`
		DevDependencies map[string]any `json:"devDependencies"`
		Jest            any            `json:"jest"`
	}
	if json.Unmarshal(b, &pkg) != nil {
		return ""
	}
	has := func(name string) bool {
		_, a := pkg.Dependencies[name]
		_, b := pkg.DevDependencies[name]
		return a || b
	}
	vitest, jest := has("vitest"), has("jest") || pkg.Jest != nil
	switch {
	case vitest && !jest:
		return FrameworkVitest
	case jest && !vitest:
		return FrameworkJest
	}
	return ""
}

// framework resolves p.Framework and p.Batch (see FrameworkOfArgv and
// FrameworkOfFile) and checks the listed seeds against the framework
// (SeedRange); it runs after run, seeds and the markers are read.
func (l *loader) framework(key string, f map[string]ast.Node, p *Property) error {
	fromArgv := FrameworkOfArgv(p.Run)
	fromFile := FrameworkOfFile(p.Path, l.read)
	if v, ok := f["framework"]; ok {
		s, err := l.str(join(key, "framework"), v)
		if err != nil {
			return err
		}
		if !contains(Frameworks, s) {
			return l.errf(join(key, "framework"), v, "%q is not a framework; want one of %s", s, strings.Join(Frameworks, ", "))
		}
		if fromArgv != "" && s != fromArgv {
			return l.errf(join(key, "framework"), v, "says %s, but run runs %s; remove framework: or make it %s", s, fromArgv, fromArgv)
		}
		if s == FrameworkNone && (fromFile == FrameworkGo || fromFile == FrameworkPytest) && (p.PassMarker == nil || p.FailMarker == nil) {
			return l.errf(join(key, "framework"), v, "none on %s, a %s test file, reads nothing of its output: add a pass_marker and a fail_marker, or say framework: %s if the command runs it", p.Path, fromFile, fromFile)
		}
		p.Framework, p.FrameworkSet = s, true
	} else {
		switch {
		case fromArgv != "":
			p.Framework = fromArgv
		case (fromFile == FrameworkGo || fromFile == FrameworkPytest) && p.PassMarker != nil && p.FailMarker != nil:
			p.Framework = FrameworkNone // the markers are the evidence
		case fromFile == FrameworkGo || fromFile == FrameworkPytest:
			what := map[string]string{FrameworkGo: "a Go test file", FrameworkPytest: "a pytest test file"}[fromFile]
			runs := map[string]string{FrameworkGo: "go test", FrameworkPytest: "pytest"}[fromFile]
			return l.errf(join(key, "run"), f["run"], "%s is %s, but flakegate does not recognize what %q runs, so it cannot tell which files decide the test or read its output; "+
				"add framework: %s to this entry if the command runs %s, or framework: none with a pass_marker and a fail_marker",
				p.Path, what, strings.Join(p.Run, " "), fromFile, runs)
		case fromFile != "":
			p.Framework = fromFile
		default:
			p.Framework = FrameworkNone
		}
	}
	p.Batch = p.Framework != FrameworkNone
	if v, ok := f["seeds"]; ok {
		for i, s := range p.Seeds {
			if why := seedFits(p.Framework, string(s)); why != "" {
				sn := v
				if seq, ok := v.(*ast.SequenceNode); ok && i < len(seq.Values) {
					sn = seq.Values[i]
				}
				return l.errf(fmt.Sprintf("%s[%d]", join(key, "seeds"), i), sn, "%s", why)
			}
		}
	}
	if v, ok := f["batch"]; ok {
		b, err := l.boolean(join(key, "batch"), v)
		if err != nil {
			return err
		}
		p.Batch = b
	}
	return nil
}
