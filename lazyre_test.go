package flakegate_test

import (
	"go/ast"
	"go/token"
	"regexp"
	"strconv"
	"testing"
)

// TestLazyRegexpsCompile compiles every lazyre.New expression of the
// project now: they compile on first use (internal/lazyre), so a bad one
// would otherwise panic only when a check reached it.
func TestLazyRegexpsCompile(t *testing.T) {
	n := 0
	eachGoFile(t, nil, func(path string, fset *token.FileSet, f *ast.File) {
		ast.Inspect(f, func(node ast.Node) bool {
			call, ok := node.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "New" || len(call.Args) != 1 || !isIdent(sel.X, "lazyre") {
				return true
			}
			lit, ok := call.Args[0].(*ast.BasicLit)
			if !ok {
				t.Errorf("%s: lazyre.New of a non-literal: keep them literals, so this test can compile them", fset.Position(call.Pos()))
				return true
			}
			expr, err := strconv.Unquote(lit.Value)
			if err != nil {
				t.Errorf("%s: %v", fset.Position(lit.Pos()), err)
				return true
			}
			if _, err := regexp.Compile(expr); err != nil {
				t.Errorf("%s: %v", fset.Position(lit.Pos()), err)
			}
			n++
			return true
		})
	})
	if n < 30 {
		t.Errorf("found only %d lazyre.New expressions", n)
	}
}
