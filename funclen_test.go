package flakegate_test

import (
	"go/ast"
	"go/token"
	"testing"
)

// TestNoFunctionOver100Lines holds the house rule: no function of the
// project's code (tests left out) is over 100 lines, but in canonjson,
// the tuned codec, whose string scanner is one loop on purpose.
func TestNoFunctionOver100Lines(t *testing.T) {
	eachGoFile(t, func(rel string) bool { return rel == "canonjson" || rel == "examples" }, func(path string, fset *token.FileSet, f *ast.File) {
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			if n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1; n > 100 {
				t.Errorf("%s: %s is %d lines; split it (at most 100)", path, fd.Name.Name, n)
			}
		}
	})
}
