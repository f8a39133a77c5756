package flakegate

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestLazyRegexpsCompile compiles every lazyre.New expression of the
// project now: they compile on first use (internal/lazyre), so a bad one
// would otherwise panic only when a check reached it.
func TestLazyRegexpsCompile(t *testing.T) {
	n := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") && path != "." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(node ast.Node) bool {
			call, ok := node.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "New" || len(call.Args) != 1 {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "lazyre" {
				return true
			}
			lit, ok := call.Args[0].(*ast.BasicLit)
			if !ok {
				t.Errorf("%s: lazyre.New of a non-literal: keep them literals, so this test can compile them", path)
				return true
			}
			expr, err := strconv.Unquote(lit.Value)
			if err != nil {
				t.Errorf("%s: %v", path, err)
				return true
			}
			if _, err := regexp.Compile(expr); err != nil {
				t.Errorf("%s: %v", path, err)
			}
			n++
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 30 {
		t.Errorf("found only %d lazyre.New expressions", n)
	}
}
