package flakegate_test

import (
	"go/scanner"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// mdLink finds the target of a Markdown link or image: [text](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// outsideNames are files a reader of the repository does not have: the
// design and style notes and the spec it was written from, kept outside.
var outsideNames = []string{"../shared", "DESIGN.md", "STYLE.md", "flake-freeze-ledger"}

// TestDocsPointInsideTheRepository: the README, docs/ and every other
// Markdown file, and the comments of every Go file, name only files this
// repository has.
func TestDocsPointInsideTheRepository(t *testing.T) {
	root, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	var docs, goFiles []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata" || d.Name() == "out") {
			return filepath.SkipDir
		}
		if !d.IsDir() && (strings.HasSuffix(path, ".md") || d.Name() == "doc.go") {
			docs = append(docs, path)
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") {
			goFiles = append(goFiles, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) < 5 {
		t.Fatalf("found only %d documents under %s", len(docs), root)
	}
	for _, path := range docs {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, path)
		text := string(raw)
		for _, bad := range outsideNames {
			if strings.Contains(text, bad) {
				t.Errorf("%s mentions %s, which is not in the repository", rel, bad)
			}
		}
		for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			target, _, _ = strings.Cut(target, "#")
			abs := filepath.Join(filepath.Dir(path), filepath.FromSlash(target))
			if r, err := filepath.Rel(root, abs); err != nil || strings.HasPrefix(r, "..") {
				t.Errorf("%s links to %s, outside the repository", rel, m[1])
				continue
			}
			if _, err := os.Stat(abs); err != nil {
				t.Errorf("%s links to %s, which does not exist", rel, m[1])
			}
		}
	}
	if len(goFiles) < 50 {
		t.Fatalf("found only %d Go files under %s", len(goFiles), root)
	}
	for _, path := range goFiles {
		rel, _ := filepath.Rel(root, path)
		for _, c := range goComments(t, path) {
			for _, bad := range outsideNames {
				if strings.Contains(c.text, bad) {
					t.Errorf("%s:%d: a comment names %s, which is not in the repository", rel, c.line, bad)
				}
			}
		}
	}
}

// goComment is one comment of a Go file and the line it starts on.
type goComment struct {
	line int
	text string
}

// goComments returns the comments of the Go file at path (not its string
// literals: a test may name a path it reads at run time).
func goComments(t *testing.T, path string) []goComment {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	file := fset.AddFile(path, -1, len(src))
	var s scanner.Scanner
	s.Init(file, src, func(pos token.Position, msg string) { t.Errorf("%s: %s", pos, msg) }, scanner.ScanComments)
	var out []goComment
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			return out
		}
		if tok == token.COMMENT {
			out = append(out, goComment{line: fset.Position(pos).Line, text: lit})
		}
	}
}
