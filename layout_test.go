package flakegate_test

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/token"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"testing"
)

var updateLayout = flag.Bool("update-layout", false, "rewrite the package diagram of docs/layout.md from go list")

// The package diagram of docs/layout.md lies between these two lines.
const (
	layoutBegin = "<!-- imports: begin (written by go test -run TestLayoutDrawsTheImportGraph -update-layout .) -->"
	layoutEnd   = "<!-- imports: end -->"
)

// TestLayoutDrawsTheImportGraph: the package diagram of docs/layout.md is
// the import graph between the project's own packages as go list reads
// it (test files left out), floor by floor: a package stands on a higher
// floor than every package it imports. Whatever packages exist are
// drawn, so a package added, moved or given a new import fails this test
// until the diagram says so (-update-layout rewrites it).
func TestLayoutDrawsTheImportGraph(t *testing.T) {
	want := layoutDiagram(t)
	doc, err := os.ReadFile("docs/layout.md")
	if err != nil {
		t.Fatal(err)
	}
	begin, end := bytes.Index(doc, []byte(layoutBegin)), bytes.Index(doc, []byte(layoutEnd))
	if begin < 0 || end < begin {
		t.Fatalf("docs/layout.md has no package diagram between %q and %q", layoutBegin, layoutEnd)
	}
	got := string(doc[begin+len(layoutBegin) : end])
	if got == want {
		return
	}
	if *updateLayout {
		out := append(append(append([]byte(nil), doc[:begin+len(layoutBegin)]...), want...), doc[end:]...)
		if err := os.WriteFile("docs/layout.md", out, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("docs/layout.md's package diagram is not the import graph (go test -run TestLayoutDrawsTheImportGraph -update-layout . rewrites it); it should read:%s", want)
}

// layoutDiagram draws the import graph of the module's packages that
// have non-test Go files: one line per package, from the top floor down,
// with the project's packages it imports ("(root)" is the module's own).
func layoutDiagram(t *testing.T) string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}} {{len .GoFiles}} {{join .Imports \" \"}}", "./...")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const module = "github.com/flakegate/flakegate"
	name := func(p string) string {
		if p == module {
			return "(root)"
		}
		return strings.TrimPrefix(p, module+"/")
	}
	imports := map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 || f[1] == "0" {
			continue // no code: only tests or scripts
		}
		var own []string
		for _, imp := range f[2:] {
			if imp == module || strings.HasPrefix(imp, module+"/") {
				own = append(own, name(imp))
			}
		}
		sort.Strings(own)
		imports[name(f[0])] = own
	}
	floor := map[string]int{}
	var floorOf func(p string, seen map[string]bool) int
	floorOf = func(p string, seen map[string]bool) int {
		if f, ok := floor[p]; ok {
			return f
		}
		if seen[p] {
			t.Fatalf("import cycle through %s", p)
		}
		seen[p] = true
		f := 1
		for _, imp := range imports[p] {
			f = max(f, floorOf(imp, seen)+1)
		}
		floor[p] = f
		return f
	}
	var pkgs []string
	width := 0
	for p := range imports {
		floorOf(p, map[string]bool{})
		pkgs = append(pkgs, p)
		width = max(width, len(p))
	}
	sort.Slice(pkgs, func(i, j int) bool {
		if floor[pkgs[i]] != floor[pkgs[j]] {
			return floor[pkgs[i]] > floor[pkgs[j]]
		}
		return pkgs[i] < pkgs[j]
	})
	var b strings.Builder
	b.WriteString("\n```\nfloor package" + strings.Repeat(" ", width-len("package")) + "  imports\n")
	for _, p := range pkgs {
		lead := fmt.Sprintf("%5d %-*s  ", floor[p], width, p)
		b.WriteString(wrapWords(lead, imports[p], 96))
	}
	b.WriteString("```\n")
	return b.String()
}

// wrapWords writes lead and words, breaking lines past width, each
// continuation indented under the first word.
func wrapWords(lead string, words []string, width int) string {
	var b strings.Builder
	line := lead
	indent := strings.Repeat(" ", len(lead))
	for i, w := range words {
		if i > 0 && len(line)+1+len(w) > width {
			b.WriteString(strings.TrimRight(line, " ") + "\n")
			line = indent
		} else if i > 0 {
			line += " "
		}
		line += w
	}
	if len(words) == 0 {
		line += "-"
	}
	b.WriteString(strings.TrimRight(line, " ") + "\n")
	return b.String()
}

// TestLayoutCallsNoImporterALeaf: a package docs/layout.md calls a leaf
// imports none of the project's packages.
func TestLayoutCallsNoImporterALeaf(t *testing.T) {
	doc, err := os.ReadFile("docs/layout.md")
	if err != nil {
		t.Fatal(err)
	}
	diagram := layoutDiagram(t)
	for _, m := range regexp.MustCompile(`(?m)^([a-z][a-z/]*)/?\s.*\(a leaf\)`).FindAllStringSubmatch(string(doc), -1) {
		pkg := strings.TrimSuffix(m[1], "/")
		if !regexp.MustCompile(`(?m)^\s+\d+ ` + regexp.QuoteMeta(pkg) + ` +-$`).MatchString(diagram) {
			t.Errorf("docs/layout.md calls %s a leaf, but it imports the project's packages:%s", pkg, diagram)
		}
	}
}

// TestLayoutBuildsNoPartialChecker: only the checker's own constructor
// (newChecker, check/check.go) makes a check's checker. Another command
// that needs some of a check's steps (doctor's Site: the sandbox, the
// Go caches, the base side's prepares, the suites' listings) uses the
// small type those steps belong to (check's site, which the checker
// embeds), never a checker with a few fields filled in. It holds the
// non-test files of the module: a checker literal, new(checker) and a
// variable of type checker are refused anywhere else. Unit tests of a
// single checker method may still fill in the fields it reads.
func TestLayoutBuildsNoPartialChecker(t *testing.T) {
	inConstructor := 0
	eachGoFile(t, nil, func(path string, fset *token.FileSet, f *ast.File) {
		for _, decl := range f.Decls {
			fn, _ := decl.(*ast.FuncDecl)
			constructor := path == "check/check.go" && fn != nil && fn.Recv == nil && fn.Name.Name == "newChecker"
			ast.Inspect(decl, func(n ast.Node) bool {
				what := ""
				switch n := n.(type) {
				case *ast.CompositeLit:
					if isIdent(n.Type, "checker") {
						what = "a checker literal"
					}
				case *ast.CallExpr:
					if isIdent(n.Fun, "new") && len(n.Args) == 1 && isIdent(n.Args[0], "checker") {
						what = "new(checker)"
					}
				case *ast.ValueSpec:
					if isIdent(n.Type, "checker") {
						what = "a variable of type checker"
					}
				}
				switch {
				case what == "":
				case constructor:
					inConstructor++
				default:
					t.Errorf("%s: %s outside newChecker: a command that needs a check's set-up steps uses check's site (which the checker embeds), not a partial checker", fset.Position(n.Pos()), what)
				}
				return true
			})
		}
	})
	if inConstructor == 0 {
		t.Error("check/check.go: newChecker builds no checker literal: where is the checker made now? Update this test")
	}
}

// isIdent reports whether e is the bare identifier name.
func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}
