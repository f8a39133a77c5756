package discover

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// RapidImport is the import path of pgregory.net/rapid.
const RapidImport = "pgregory.net/rapid"

// goTests returns the tests of one _test.go file that call rapid.Check or
// rapid.MakeCheck (under the name the file imports rapid as), and a
// Skipped entry when the file has some but its module is not at the
// repository root (go test runs from the root).
func goTests(fsys fs.FS, p, src string) ([]Test, []Skipped) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, p, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, nil // not Go that compiles: go test would refuse it too
	}
	rapidName, testingName := "", ""
	for _, imp := range f.Imports {
		ip, err := strconv.Unquote(imp.Path.Value)
		if err != nil {
			continue
		}
		local := path.Base(ip)
		if imp.Name != nil {
			local = imp.Name.Name
		}
		switch ip {
		case RapidImport:
			rapidName = local
		case "testing":
			testingName = local
		}
	}
	if rapidName == "" || rapidName == "_" || testingName == "" || testingName == "_" {
		return nil, nil
	}
	var tests []Test
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Recv != nil || fn.Body == nil || !isGoTestName(fn.Name.Name) || !takesT(fn.Type, testingName) {
			continue
		}
		if callsRapid(fn.Body, rapidName) {
			tests = append(tests, Test{
				Framework: GoRapid,
				Path:      p,
				Name:      fn.Name.Name,
				Dir:       path.Dir(p),
				Kind:      "rapid.Check",
				Line:      fset.Position(fn.Pos()).Line,
			})
		}
	}
	if len(tests) == 0 {
		return nil, nil
	}
	if mod := goModDir(fsys, path.Dir(p)); mod != "." {
		if mod == "" {
			return nil, []Skipped{{Path: p, Reason: "no go.mod above it"}}
		}
		return nil, []Skipped{{Path: p, Reason: "its module is " + mod + "/go.mod, not at the repository root (go test runs from the root); add it by hand with run: [sh, -c, \"cd " + mod + " && go test ...\"]"}}
	}
	return tests, nil
}

// isGoTestName is go test's rule: "Test" followed by nothing or by a
// character that is not a lower-case letter.
func isGoTestName(name string) bool {
	rest, ok := strings.CutPrefix(name, "Test")
	if !ok {
		return false
	}
	if rest == "" {
		return true
	}
	r, _ := utf8.DecodeRuneInString(rest)
	return !unicode.IsLower(r)
}

// takesT reports whether ft is func(*testing.T) (with testing imported as
// testingName).
func takesT(ft *ast.FuncType, testingName string) bool {
	if ft.Params == nil || len(ft.Params.List) != 1 || len(ft.Params.List[0].Names) > 1 || ft.Results != nil && len(ft.Results.List) > 0 {
		return false
	}
	star, ok := ft.Params.List[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	if testingName == "." {
		id, ok := star.X.(*ast.Ident)
		return ok && id.Name == "T"
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	x, ok := sel.X.(*ast.Ident)
	return ok && x.Name == testingName && sel.Sel.Name == "T"
}

// callsRapid reports whether body calls rapid's Check or MakeCheck (a
// dot import calls them unqualified).
func callsRapid(body *ast.BlockStmt, rapidName string) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if found {
			return false
		}
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		switch fun := call.Fun.(type) {
		case *ast.SelectorExpr:
			if x, ok := fun.X.(*ast.Ident); ok && x.Name == rapidName && isRapidCheck(fun.Sel.Name) {
				found = true
			}
		case *ast.Ident:
			if rapidName == "." && isRapidCheck(fun.Name) {
				found = true
			}
		}
		return !found
	})
	return found
}

func isRapidCheck(name string) bool { return name == "Check" || name == "MakeCheck" }

// goModDir returns the folder of the nearest go.mod at or above dir ("."
// for the root), "" when there is none.
func goModDir(fsys fs.FS, dir string) string {
	for {
		if fi, err := fs.Stat(fsys, path.Join(dir, "go.mod")); err == nil && fi.Mode().IsRegular() {
			return dir
		}
		if dir == "." {
			return ""
		}
		dir = path.Dir(dir)
	}
}
