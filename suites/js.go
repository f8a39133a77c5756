// vitest and jest suites: the list from the framework itself, run in the
// sandbox on a tree, and the order flags of a seed.
//
//   - vitest: `node node_modules/vitest/vitest.mjs list --json=F [PATH]`
//     writes the collected tests (skipped and todo ones left out) to F,
//     each with its file and its name, the describe titles and its title
//     joined by " > "; the name flakegate gives it is those titles joined
//     by spaces, the full name vitest's -t and its JSON report use. A
//     title that holds " > " cannot be told from two titles there: it
//     loses the " > " in the name, and the batch's -t and the report's
//     reader take either at each space (batch/js.go, evidence's JSReport).
//   - jest: `node node_modules/jest/bin/jest.js --ci --json -t '(?!)'
//     [PATH] --outputFile=F` collects every test file (jest's own test
//     match) and runs none of their tests: the name pattern matches no
//     test, so the report names each one (its fullName) as pending, and
//     todo tests as todo (left out).
//
// Both files are report files outside the tree (check's reportFile, check/batch.go):
// what the test files print while they are collected is never read as
// the list. A suite runs as one process per seed holding every test
// file, shuffled by the framework with that seed:
//
//	vitest: --sequence.shuffle --sequence.seed=S
//	jest:   --randomize --seed=S

package suites

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/evidence"
	"github.com/flakegate/flakegate/internal/discover"
)

// JSRunner is the script node runs for a js suite's framework, relative
// to the repository root.
func JSRunner(framework string) string {
	if framework == config.FrameworkJest {
		return "node_modules/jest/bin/jest.js"
	}
	return "node_modules/vitest/vitest.mjs"
}

// JSSuiteLead is the argv of a js suite's runs before the test files:
// the runner and the order flags of seed ("{seed}" in a run template).
func JSSuiteLead(framework, seed string) []string {
	if framework == config.FrameworkJest {
		return []string{"node", JSRunner(framework), "--ci", "--randomize", "--seed=" + seed}
	}
	return []string{"node", JSRunner(framework), "run", "--sequence.shuffle", "--sequence.seed=" + seed}
}

// JSOrderFlags are the flags of JSSuiteLead that set the order.
func JSOrderFlags(framework string, seed flakegate.Seed) []string {
	lead := JSSuiteLead(framework, seed.String())
	return lead[len(lead)-2:]
}

// jsTestExts are the extensions of a js test file.
var jsTestExts = []string{".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".jsx", ".tsx"}

// IsJSTestFile reports whether rel is a test file by the frameworks'
// default patterns: NAME.test.EXT and NAME.spec.EXT (vitest and jest),
// and any EXT file under a __tests__ folder (jest).
func IsJSTestFile(rel string) bool {
	ext := path.Ext(rel)
	if !slices.Contains(jsTestExts, ext) {
		return false
	}
	stem := strings.TrimSuffix(path.Base(rel), ext)
	if strings.HasSuffix(stem, ".test") || strings.HasSuffix(stem, ".spec") {
		return true
	}
	return strings.HasPrefix(rel, "__tests__/") || strings.Contains(rel, "/__tests__/")
}

// listJS lists a vitest or jest suite.
func (l *Lister) listJS(ctx context.Context, s *config.Suite) (*List, error) {
	if l.RunReport == nil {
		return nil, l.Fail("a %s suite cannot be listed here yet", s.Framework)
	}
	runner := JSRunner(s.Framework)
	layer := ""
	if l.Prepared != nil {
		var err error
		if layer, err = l.Prepared(ctx); err != nil {
			return nil, err
		}
	}
	if !jsRunnerIn(l.Dir, layer, runner) {
		if layer != "" {
			return nil, l.Fail("a %s suite runs node %s at the repository root, and neither the tree nor what the top-level prepare installed holds it: make the prepare install %s (npm ci of a lock file that names it)", s.Framework, runner, s.Framework)
		}
		return nil, l.Fail("a %s suite runs node %s at the repository root, and the tree has none: add a top-level prepare that installs node_modules from the lock file "+
			"(flakegate init writes one: npm ci for package-lock.json), or commit node_modules", s.Framework, runner)
	}
	var argv []string
	flag := "--json="
	if s.Framework == config.FrameworkJest {
		argv, flag = []string{"node", runner, "--ci", "--json", "--passWithNoTests", "-t", "(?!)"}, "--outputFile="
	} else {
		argv = []string{"node", runner, "list"}
	}
	if s.Path != "." {
		argv = append(argv, s.Path)
	}
	o, out, report, root, err := l.RunReport(ctx, argv, flag)
	if err != nil {
		return nil, err
	}
	var tests []Test
	if s.Framework == config.FrameworkJest {
		tests, err = parseJestList(report, root, func(file string) string {
			b, _ := attempt.ReadBounded(filepath.Join(l.Dir, filepath.FromSlash(file)), 16<<20)
			return string(b)
		})
	} else {
		tests, err = parseVitestList(report, root)
	}
	if err != nil || o.Result != attempt.Pass {
		why := "exit " + fmt.Sprint(o.ExitCode)
		if err != nil {
			why = err.Error()
		}
		return nil, l.Fail("%s failed to list the tests in the base tree (%s; %s): %s", s.Framework, why, strings.TrimSpace(o.Result+" "+o.Reason), LastLines(out, 8))
	}
	list := &List{}
	for _, st := range tests {
		if s.Path == "." || st.File == s.Path || strings.HasPrefix(st.File, s.Path+"/") {
			list.Tests = append(list.Tests, st)
		}
	}
	return list, nil
}

// jsRunnerIn reports whether the runner script (relative to the
// repository root) is a regular file in the tree dir or in the tree of
// the prepared layer ("" for none) laid over it.
func jsRunnerIn(dir, layer, runner string) bool {
	roots := []string{dir}
	if layer != "" {
		roots = append(roots, filepath.Join(layer, "tree"))
	}
	for _, root := range roots {
		if fi, err := os.Stat(filepath.Join(root, filepath.FromSlash(runner))); err == nil && fi.Mode().IsRegular() {
			return true
		}
	}
	return false
}

// jsRelFile is a report's absolute test file as a path relative to root.
func jsRelFile(abs, root string) (string, bool) {
	rel, ok := strings.CutPrefix(path.Clean(abs), strings.TrimSuffix(root, "/")+"/")
	if !ok {
		return "", false
	}
	c, err := config.CleanRepoPath(rel)
	return c, err == nil && c == rel
}

// jsNameOK accepts a full test name as a suite test's name.
func jsNameOK(name string) bool {
	return name != "" && len(name) <= config.MaxNameLength && !strings.ContainsAny(name, "\x00\n\r")
}

// appendJSTest adds a test to tests unless it is there already.
func appendJSTest(tests []Test, file, name string) []Test {
	if !jsNameOK(name) || slices.ContainsFunc(tests, func(x Test) bool { return x.File == file && x.Name == name }) {
		return tests
	}
	return append(tests, Test{File: file, Name: name})
}

// parseVitestList reads the file `vitest list --json=F` writes: an array
// of {name, file}, the name's titles joined by " > ". root is the folder
// vitest ran in, as it saw it.
func parseVitestList(data []byte, root string) ([]Test, error) {
	var items []struct {
		Name        string  `json:"name"`
		File        *string `json:"file"`
		ProjectName string  `json:"projectName"`
	}
	if len(data) == 0 {
		return nil, fmt.Errorf("vitest wrote no list")
	}
	if err := json.Unmarshal(data, &items); err != nil {
		return nil, fmt.Errorf("vitest's list does not parse: %v", err)
	}
	var tests []Test
	for _, it := range items {
		if it.File == nil {
			return nil, fmt.Errorf("vitest's list names a test without its file: %q", it.Name)
		}
		if it.ProjectName != "" {
			return nil, fmt.Errorf("vitest's list names the project %q: a suite of a vitest workspace is not gated; gate one project's folder", it.ProjectName)
		}
		file, ok := jsRelFile(*it.File, root)
		if !ok {
			return nil, fmt.Errorf("vitest's list names a file outside the tree: %s", *it.File)
		}
		tests = appendJSTest(tests, file, strings.ReplaceAll(it.Name, " > ", " "))
	}
	return tests, nil
}

// parseJestList reads the JSON report of a jest run whose name pattern
// matches no test: every test file jest collected, and in it each test's
// full name. The report says pending of every test, skipped or not (the
// pattern skips them all), so a test the file's source skips or leaves
// todo is left out by its title (jestSkips of source(file)). A test file
// that failed to run is an error: its tests cannot be listed.
func parseJestList(data []byte, root string, source func(file string) string) ([]Test, error) {
	var r struct {
		NumTotalTests *int `json:"numTotalTests"`
		TestResults   []struct {
			Name             string `json:"name"`
			Status           string `json:"status"`
			Message          string `json:"message"`
			AssertionResults []struct {
				FullName       string   `json:"fullName"`
				Title          string   `json:"title"`
				AncestorTitles []string `json:"ancestorTitles"`
				Status         string   `json:"status"`
			} `json:"assertionResults"`
		} `json:"testResults"`
	}
	if len(data) == 0 {
		return nil, fmt.Errorf("jest wrote no JSON report")
	}
	if err := json.Unmarshal(data, &r); err != nil || r.NumTotalTests == nil {
		return nil, fmt.Errorf("jest's JSON report does not parse (%v)", err)
	}
	var tests []Test
	for _, s := range r.TestResults {
		file, ok := jsRelFile(s.Name, root)
		if !ok {
			return nil, fmt.Errorf("jest's report names a file outside the tree: %s", s.Name)
		}
		if s.Status == "failed" && len(s.AssertionResults) == 0 {
			return nil, fmt.Errorf("the test file %s failed to run: %s", file, firstLine(evidence.StripANSI(s.Message)))
		}
		skipTests, skipDescribes := jestSkips(source(file))
		for _, a := range s.AssertionResults {
			if a.Status == "todo" || skipTests[a.Title] || slices.ContainsFunc(a.AncestorTitles, func(d string) bool { return skipDescribes[d] }) {
				continue
			}
			name := a.FullName
			if name == "" {
				name = strings.Join(append(append([]string{}, a.AncestorTitles...), a.Title), " ")
			}
			tests = appendJSTest(tests, file, name)
		}
	}
	return tests, nil
}

// firstLine is the first non-empty line of s.
func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}

// jestSkips reads a jest test file for the titles of the tests it skips
// or leaves todo (test.skip, it.skip, xit, xtest, test.todo, it.todo) and
// of the describe blocks it skips (describe.skip, xdescribe), each called
// with a string literal title. The source is the base's, read, never run
// (discover's tokenizer: a call in a comment or a string does not count).
func jestSkips(src string) (tests, describes map[string]bool) {
	tests, describes = map[string]bool{}, map[string]bool{}
	toks := discover.JSTokenize(src)
	at := func(i int, kind byte, text ...string) bool {
		return i < len(toks) && toks[i].Kind == kind && (len(text) == 0 || slices.Contains(text, toks[i].Text))
	}
	for i := range toks {
		if i > 0 && at(i-1, 'o', ".") || !at(i, 'n') {
			continue // a member, not a call of a global
		}
		k := i + 1
		name := toks[i].Text
		switch {
		case (name == "test" || name == "it") && at(k, 'o', ".") && at(k+1, 'n', "skip", "todo"):
			k += 2
		case name == "describe" && at(k, 'o', ".") && at(k+1, 'n', "skip"):
			k += 2
		case name == "xit" || name == "xtest" || name == "xdescribe":
		default:
			continue
		}
		if !at(k, 'o', "(") || !at(k+1, 's') {
			continue
		}
		if name == "describe" || name == "xdescribe" {
			describes[toks[k+1].Text] = true
		} else {
			tests[toks[k+1].Text] = true
		}
	}
	return tests, describes
}
