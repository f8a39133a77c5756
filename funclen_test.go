package flakegate_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoFunctionOver100Lines holds the house rule: no function of the
// project's code (tests left out) is over 100 lines, but in canonjson,
// the tuned codec, whose string scanner is one loop on purpose.
func TestNoFunctionOver100Lines(t *testing.T) {
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "canonjson" || name == "examples") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			if n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1; n > 100 {
				t.Errorf("%s: %s is %d lines; split it (at most 100)", path, fd.Name.Name, n)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
