package grade

import (
	"context"
	"go/parser"
	"go/token"
	"path"
	"strconv"
	"strings"
)

// notGoData are the files of a Go package folder that are never test
// data: what the go command builds or reads for the module (cgo and
// assembly sources, go.mod and its siblings, handled apart), another
// language's source or manifest (a mixed repository's other suites are
// graded by their own rules), and flakegate's own config.
var notGoData = map[string]bool{
	".go": true, ".c": true, ".h": true, ".cc": true, ".cpp": true, ".cxx": true, ".hh": true, ".hpp": true, ".hxx": true,
	".m": true, ".s": true, ".S": true, ".sx": true, ".f": true, ".F": true, ".for": true, ".f90": true, ".syso": true,
	".swig": true, ".swigcxx": true,
	".py": true, ".pyi": true, ".pyx": true, ".js": true, ".mjs": true, ".cjs": true, ".ts": true, ".mts": true, ".cts": true,
	".jsx": true, ".tsx": true, ".rs": true, ".java": true, ".kt": true, ".rb": true, ".php": true,
}

var notGoDataNames = map[string]bool{
	"go.mod": true, "go.sum": true, "go.work": true, "go.work.sum": true,
	"package.json": true, "package-lock.json": true, "npm-shrinkwrap.json": true, "yarn.lock": true, "pnpm-lock.yaml": true,
	"pyproject.toml": true, "setup.py": true, "setup.cfg": true, "tox.ini": true, "pytest.ini": true, ".pytest.ini": true,
	"Pipfile": true, "Pipfile.lock": true, "poetry.lock": true, "Cargo.toml": true, "Cargo.lock": true,
}

// goScope is one go scope made concrete: its module and which package
// folders it holds.
type goScope struct {
	root string // the module's folder
	in   func(dir string) bool
}

// goScopeOf is the go scope of s, ok false when no go.mod of the base
// holds it (a property file outside any module is graded as its file).
func (b *builder) goScopeOf(s Scope) (goScope, bool) {
	if !s.Property {
		pat := strings.TrimPrefix(s.Path, "./")
		rest, recursive := strings.CutSuffix(pat, "...")
		rest = strings.TrimSuffix(rest, "/")
		if rest == "" {
			rest = "."
		}
		if !b.in.Base.Files["go.mod"] {
			return goScope{}, false
		}
		return goScope{root: ".", in: func(dir string) bool {
			if recursive {
				return under(dir, rest)
			}
			return dir == rest
		}}, true
	}
	dir := path.Dir(s.Path)
	for _, d := range ancestors(dir) {
		if b.in.Base.Files[path.Join(d, "go.mod")] {
			return goScope{root: d, in: func(x string) bool { return x == dir }}, true
		}
	}
	return goScope{}, false
}

// goIgnored reports whether dir (inside module root) is no package of
// the module: under testdata, vendor (at the root), a folder whose name
// starts with "." or "_", or another module's folder.
func (b *builder) goIgnored(root, dir string) bool {
	rel := dir
	if root != "." {
		if dir == root {
			return false
		}
		rel = strings.TrimPrefix(dir, root+"/")
		if rel == dir {
			return true // not in the module
		}
	}
	if rel == "." {
		return false
	}
	segs := strings.Split(rel, "/")
	if segs[0] == "vendor" {
		return true
	}
	d := root
	for _, s := range segs {
		if s == "testdata" || strings.HasPrefix(s, ".") || strings.HasPrefix(s, "_") {
			return true
		}
		d = path.Join(d, s)
		if b.in.Base.Files[path.Join(d, "go.mod")] {
			return true
		}
	}
	return false
}

// goFiles takes the go scopes' files from the base.
func (b *builder) goFiles(ctx context.Context) error {
	if len(b.goScopes) == 0 {
		return nil
	}
	var scopes []goScope
	roots := map[string]bool{}
	for _, s := range b.goScopes {
		gs, ok := b.goScopeOf(s)
		if !ok {
			if s.Property {
				b.add(s.Path, Entry{Kind: PropertyFile, Dir: path.Dir(s.Path)})
			}
			continue
		}
		if s.Property {
			b.add(s.Path, Entry{Kind: TestFile, Dir: path.Dir(s.Path), Family: "go"})
		}
		scopes = append(scopes, gs)
		roots[gs.root] = true
	}
	inScope := func(dir string) bool {
		for _, gs := range scopes {
			if under(dir, gs.root) && !b.goIgnored(gs.root, dir) && gs.in(dir) {
				return true
			}
		}
		return false
	}
	pkgs := map[string]bool{} // the base's package folders in scope
	for f := range b.in.Base.Files {
		if strings.HasSuffix(f, ".go") && inScope(path.Dir(f)) {
			pkgs[path.Dir(f)] = true
		}
	}
	embeds := map[string]bool{} // folders whose embeds matter
	var data []string
	for _, f := range sorted(b.all) {
		dir := path.Dir(f)
		switch {
		case strings.HasSuffix(f, "_test.go") && inScope(dir):
			b.add(f, Entry{Kind: TestFile, Dir: dir, Family: "go"})
		case pkgs[dir] && !notGoData[path.Ext(f)] && !notGoDataNames[path.Base(f)]:
			data = append(data, f)
			if b.differs(f) {
				embeds[dir] = true
			}
		default:
			if d, ok := testdataOwner(f); ok && pkgs[d] {
				b.add(f, Entry{Kind: GoTestdata, Dir: d, Family: "go"})
			}
		}
	}
	embedded, err := b.goEmbeds(ctx, sorted(embeds))
	if err != nil {
		return err
	}
	for _, f := range data {
		// An embedded file is the product's: where both trees' product
		// code embed it, or the candidate's embeds a file of its own
		// (the base has none to give). A file only the candidate's code
		// starts to embed stays the base's.
		if embedded.cand[f] && (embedded.base[f] || !b.in.Base.Files[f]) {
			continue
		}
		b.add(f, Entry{Kind: GoData, Dir: path.Dir(f), Family: "go"})
	}
	for root := range roots {
		for _, n := range []string{"go.work", "go.work.sum"} {
			if f := path.Join(root, n); b.all[f] {
				b.add(f, Entry{Kind: GoWork, Dir: root, Family: "go"})
			}
		}
		if err := b.goMod(ctx, root); err != nil {
			return err
		}
	}
	return nil
}

// testdataOwner is the folder that holds the testdata folder f is under
// ("p" for p/testdata/a/b.json), ok false when f is under none.
func testdataOwner(f string) (string, bool) {
	segs := strings.Split(f, "/")
	for i := len(segs) - 2; i >= 0; i-- {
		if segs[i] == "testdata" {
			if i == 0 {
				return ".", true
			}
			owner := strings.Join(segs[:i], "/")
			if strings.Contains("/"+owner+"/", "/testdata/") {
				continue // the outer testdata folder owns it
			}
			return owner, true
		}
	}
	return "", false
}

// differs reports whether f is not the same in both trees, as far as the
// file lists tell (Input.Diff names the changed files).
func (b *builder) differs(f string) bool {
	return b.in.Base.Files[f] != b.in.Cand.Files[f] || b.diff()[f]
}

// embedded are the files the product code of some folders embeds, in
// each tree.
type embedded struct{ base, cand map[string]bool }

// goEmbeds reads the //go:embed lines of the non-test .go files of dirs
// in both trees and lists the files they embed.
func (b *builder) goEmbeds(ctx context.Context, dirs []string) (embedded, error) {
	out := embedded{base: map[string]bool{}, cand: map[string]bool{}}
	if len(dirs) == 0 {
		return out, nil
	}
	want := map[string]bool{}
	for _, d := range dirs {
		want[d] = true
	}
	for _, side := range []struct {
		t   Tree
		got map[string]bool
	}{{b.in.Base, out.base}, {b.in.Cand, out.cand}} {
		var srcs []string
		for f := range side.t.Files {
			if strings.HasSuffix(f, ".go") && !strings.HasSuffix(f, "_test.go") && want[path.Dir(f)] {
				srcs = append(srcs, f)
			}
		}
		texts, err := side.t.Read(ctx, srcs)
		if err != nil {
			return out, err
		}
		for _, f := range srcs {
			for _, pat := range embedPatterns(f, texts[f]) {
				for g := range side.t.Files {
					if embedMatch(path.Dir(f), pat, g) {
						side.got[g] = true
					}
				}
			}
		}
	}
	return out, nil
}

// embedPatterns are the patterns of the //go:embed comments of Go file
// f (its source src), read with go/parser: a //go:embed inside a string
// is no directive. A file that does not parse embeds nothing.
func embedPatterns(f string, src []byte) []string {
	fs := token.NewFileSet()
	file, err := parser.ParseFile(fs, f, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil
	}
	var out []string
	for _, cg := range file.Comments {
		for _, c := range cg.List {
			rest, ok := strings.CutPrefix(c.Text, "//go:embed")
			if !ok || rest != "" && rest[0] != ' ' && rest[0] != '\t' {
				continue
			}
			out = append(out, embedArgs(rest)...)
		}
	}
	return out
}

// embedArgs splits a //go:embed line's patterns (space-separated, Go
// string literals for those with spaces).
func embedArgs(s string) []string {
	var out []string
	s = strings.TrimSpace(s)
	for s != "" {
		var arg string
		if s[0] == '"' || s[0] == '`' {
			end := strings.IndexByte(s[1:], s[0])
			if end < 0 {
				return out
			}
			q := s[:end+2]
			if v, err := strconv.Unquote(q); err == nil {
				arg = v
			}
			s = s[end+2:]
		} else {
			i := strings.IndexAny(s, " \t")
			if i < 0 {
				i = len(s)
			}
			arg, s = s[:i], s[i:]
		}
		if arg != "" {
			out = append(out, strings.TrimPrefix(arg, "all:"))
		}
		s = strings.TrimSpace(s)
	}
	return out
}

// embedMatch reports whether the pattern pat of a file in dir embeds f:
// pat names f, or a folder that holds it.
func embedMatch(dir, pat, f string) bool {
	rel := f
	if dir != "." {
		var ok bool
		if rel, ok = strings.CutPrefix(f, dir+"/"); !ok {
			return false
		}
	}
	for p := rel; p != "." && p != ""; p = path.Dir(p) {
		if ok, _ := path.Match(pat, p); ok {
			return true
		}
	}
	return false
}

// goMod writes the go.mod of the module at root with the base's go,
// toolchain and godebug lines, when the candidate's differ.
func (b *builder) goMod(ctx context.Context, root string) error {
	f := path.Join(root, "go.mod")
	if !b.in.Base.Files[f] || !b.in.Cand.Files[f] || !b.diff()[f] {
		return nil
	}
	base, err := b.in.Base.Read(ctx, []string{f})
	if err != nil {
		return err
	}
	cand, err := b.in.Cand.Read(ctx, []string{f})
	if err != nil {
		return err
	}
	graded, changed, ok := GradedGoMod(base[f], cand[f])
	switch {
	case !ok:
		b.plan.Watched[f] = "go.mod, whose go, toolchain or godebug lines flakegate cannot read with certainty"
	case changed:
		b.plan.Write = append(b.plan.Write, File{Path: f, Data: graded})
		b.plan.goModEdits[f] = root
	}
	return nil
}
