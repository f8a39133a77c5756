// What the go command says about one tree: `go list -deps -test -json`
// (every package a test binary is built from, with its files) and `go
// env -json` (the toolchain and its settings). The caller runs both in
// its sandbox, in the tree, and hands their output to ReadGoTree (or
// lets ListGo run them through a Runner).

package impact

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// goListFields are the fields of go list's JSON the go rule reads.
const goListFields = "ImportPath,Name,Dir,Standard,ForTest,Module,GoFiles,CgoFiles,CFiles,CXXFiles,MFiles,HFiles,FFiles," +
	"SFiles,SwigFiles,SwigCXXFiles,SysoFiles,EmbedFiles,TestGoFiles,XTestGoFiles,TestEmbedFiles,XTestEmbedFiles," +
	"Imports,Deps,Error,DepsErrors,Incomplete"

// GoListArgv is the command that lists the packages of pattern, their
// test binaries and everything those are built from; -e lists a broken
// package with its error rather than failing (the go rule counts it as
// affected).
func GoListArgv(pattern string) []string {
	return []string{"go", "list", "-e", "-deps", "-test", "-json=" + goListFields, pattern}
}

// GoEnvArgv is the command that prints the go command's settings.
func GoEnvArgv() []string { return []string{"go", "env", "-json"} }

// GoTree is what the go command said about one tree.
type GoTree struct {
	// Root is the folder the go command saw the tree at: the folder of
	// go.work, or else of go.mod (go env's GOWORK, GOMOD).
	Root string
	pkgs map[string]*goPkg // by import path, test variants included
	// tests maps a package's folder argument ("./a", ".") to the import
	// path of its test binary ("example.com/m/a.test").
	tests map[string]string
	// dirs are the folders of the tree's packages, repository-relative.
	dirs map[string]bool
	// env is go env's settings, with Root written as $TREE.
	env map[string]string
	// codeFiles are the non-Go files packages build from (code).
	codeOnce  sync.Once
	codeFiles map[string]bool
}

// goPkg is one package of go list's output.
type goPkg struct {
	ImportPath, Name, Dir, ForTest string
	Standard, Incomplete           bool
	Module                         *goModule
	GoFiles, CgoFiles, CFiles, CXXFiles, MFiles, HFiles, FFiles, SFiles,
	SwigFiles, SwigCXXFiles, SysoFiles, EmbedFiles, TestGoFiles, XTestGoFiles,
	TestEmbedFiles, XTestEmbedFiles []string
	Imports, Deps []string
	Error         *struct{ Err string }
	DepsErrors    []*struct{ Err string }
}

// goModule is a package's module as go list prints it.
type goModule struct {
	Path, Version, Dir string
	Main               bool
	Replace            *goModule
}

// files are the package's files the go command reads to build it and
// its tests, as listed (names in Dir, or absolute paths).
func (p *goPkg) files() []string {
	return concat(p.GoFiles, p.CgoFiles, p.CFiles, p.CXXFiles, p.MFiles, p.HFiles, p.FFiles, p.SFiles,
		p.SwigFiles, p.SwigCXXFiles, p.SysoFiles, p.EmbedFiles, p.TestGoFiles, p.XTestGoFiles,
		p.TestEmbedFiles, p.XTestEmbedFiles)
}

// code reports whether the repository-relative file p is code of a
// package of the tree: a Go file (whether or not a build constraint
// leaves it out), or a C, assembly, SWIG or syso file some package in the
// tree builds from. Embedded files are data, not code.
func (t *GoTree) code(p string) bool {
	if strings.HasSuffix(p, ".go") {
		return true
	}
	t.codeOnce.Do(func() {
		t.codeFiles = map[string]bool{}
		for _, pkg := range t.pkgs {
			if _, in := t.rel(pkg.Dir); !in || pkg.Standard {
				continue
			}
			for _, f := range concat(pkg.CFiles, pkg.CXXFiles, pkg.MFiles, pkg.HFiles, pkg.FFiles, pkg.SFiles,
				pkg.SwigFiles, pkg.SwigCXXFiles, pkg.SysoFiles) {
				if !filepath.IsAbs(f) {
					f = filepath.Join(pkg.Dir, f)
				}
				if rel, in := t.rel(f); in {
					t.codeFiles[rel] = true
				}
			}
		}
	})
	return t.codeFiles[p]
}

func concat(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// ListGo runs go env and go list (GoEnvArgv, GoListArgv(pattern)) with
// run, in one tree, and reads what they printed.
func ListGo(ctx context.Context, run Runner, pattern string) (*GoTree, error) {
	l, err := RunGoListing(ctx, run, pattern)
	if err != nil {
		return nil, err
	}
	return l.Tree()
}

// GoListing is what go env and go list printed in one tree, as printed:
// a base's listing can be kept between checks and read again.
type GoListing struct {
	Env  []byte `json:"env"`
	List []byte `json:"list"`
}

// GoListingVersion names what a GoListing holds (the commands and the
// fields listed): a kept listing is only read under the same name.
const GoListingVersion = "go listing v1\x00" + goListFields

// RunGoListing runs go env and go list (GoEnvArgv, GoListArgv(pattern))
// with run, in one tree.
func RunGoListing(ctx context.Context, run Runner, pattern string) (*GoListing, error) {
	env, err := run(ctx, GoEnvArgv())
	if err != nil {
		return nil, err
	}
	list, err := run(ctx, GoListArgv(pattern))
	if err != nil {
		return nil, err
	}
	return &GoListing{Env: env, List: list}, nil
}

// Tree reads the listing.
func (l *GoListing) Tree() (*GoTree, error) {
	return ReadGoTree(bytes.NewReader(l.List), bytes.NewReader(l.Env))
}

// Whole reports whether go listed every package of the tree without an
// error (a module missing from the cache, a file that does not parse):
// only such a listing is worth keeping, since the same tree may list
// whole once the cause is gone.
func (t *GoTree) Whole() bool {
	for _, p := range t.pkgs {
		if p.Error != nil || len(p.DepsErrors) > 0 || p.Incomplete {
			return false
		}
	}
	return true
}

// ReadGoTree reads the output of GoListArgv and of GoEnvArgv run in one
// tree.
func ReadGoTree(list, env io.Reader) (*GoTree, error) {
	t := &GoTree{pkgs: map[string]*goPkg{}, tests: map[string]string{}, dirs: map[string]bool{}, env: map[string]string{}}
	if err := json.NewDecoder(env).Decode(&t.env); err != nil {
		return nil, invalid("go env -json", "%v", err)
	}
	switch w, m := t.env["GOWORK"], t.env["GOMOD"]; {
	case w != "" && w != "off":
		t.Root = filepath.Dir(w)
	case m != "" && m != "/dev/null" && m != "NUL":
		t.Root = filepath.Dir(m)
	default:
		return nil, invalid("go env -json", "the tree is not in a Go module (GOMOD is %q)", m)
	}
	// GOGCCFLAGS names a temporary folder of its own on every run; it is
	// made from CC and the CGO_ flags, which are compared.
	delete(t.env, "GOGCCFLAGS")
	for k, v := range t.env {
		t.env[k] = strings.ReplaceAll(v, t.Root, "$TREE")
	}
	dec := json.NewDecoder(list)
	for {
		p := &goPkg{}
		err := dec.Decode(p)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, invalid("go list -json", "%v", err)
		}
		if p.ImportPath == "" {
			return nil, invalid("go list -json", "a package without an import path")
		}
		t.pkgs[p.ImportPath] = p
	}
	for ip, p := range t.pkgs {
		rel, in := t.rel(p.Dir)
		if !in || p.Standard {
			continue
		}
		t.dirs[rel] = true
		under, ok := strings.CutSuffix(ip, ".test")
		if p.Name != "main" || p.ForTest != "" || !ok || t.pkgs[under] == nil {
			continue
		}
		t.tests[folderArg(rel)] = ip
	}
	return t, nil
}

// rel is folder or file p (absolute, as go saw it) relative to the
// tree's root, and whether it lies inside the tree.
func (t *GoTree) rel(p string) (string, bool) { return relTo(t.Root, p) }

// folderArg is the folder argument go test takes for the package in
// folder rel ("." or "./a").
func folderArg(rel string) string {
	if rel == "." {
		return "."
	}
	return "./" + rel
}

// Packages lists the folder arguments of the packages that have a test
// binary, sorted.
func (t *GoTree) Packages() []string {
	var out []string
	for u := range t.tests {
		out = append(out, u)
	}
	sort.Strings(out)
	return out
}

// goBinary is what one test binary is built from, as one tree says.
type goBinary struct {
	deps    []string          // the import paths of its packages, sorted
	files   []string          // the tree's files it is built from, repository-relative
	outside map[string]string // a package outside the tree -> its module and version
	starts  string            // why its tests may start processes or run C code ("" when not)
	broken  string            // go list's error for one of its packages
}

// binary is the test binary ip of the tree.
func (t *GoTree) binary(ip string) *goBinary {
	main := t.pkgs[ip]
	b := &goBinary{outside: map[string]string{}}
	for _, d := range append([]string{ip}, main.Deps...) {
		p := t.pkgs[d]
		if p == nil {
			b.broken = "go list names " + d + " but does not list it"
			continue
		}
		b.deps = append(b.deps, d)
		if p.Error != nil || len(p.DepsErrors) > 0 || p.Incomplete {
			b.broken = "go list reports an error for " + d
			if p.Error != nil {
				b.broken += ": " + firstLine(p.Error.Err)
			}
		}
		if b.starts == "" && d != "internal/fuzz" { // testing's own fuzzing engine, only run under -fuzz
			for _, imp := range p.Imports {
				if imp == "os/exec" || imp == "plugin" {
					b.starts = d + " imports " + imp
				}
			}
		}
		if p.Standard {
			continue
		}
		if b.starts == "" && len(p.CgoFiles) > 0 {
			b.starts = d + " runs C code (cgo)"
		}
		if _, in := t.rel(p.Dir); !in {
			b.outside[d] = moduleID(p)
			continue
		}
		for _, f := range p.files() {
			if !filepath.IsAbs(f) {
				f = filepath.Join(p.Dir, f)
			}
			if rel, in := t.rel(f); in {
				b.files = append(b.files, rel)
			}
		}
	}
	sort.Strings(b.deps)
	return b
}

// moduleID names the code of a package outside the tree: its module at
// its version (go.sum pins its bytes), or the folder a replace without a
// version points at.
func moduleID(p *goPkg) string {
	m := p.Module
	if m == nil {
		return "dir " + p.Dir
	}
	if m.Replace != nil {
		m = m.Replace
	}
	if m.Version == "" {
		return "dir " + p.Dir
	}
	return m.Path + "@" + m.Version
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// goGlobal are the files of a tree whose change reaches every package: the
// module's requirements and the workspace.
func goGlobal(p string) bool {
	switch path.Base(p) {
	case "go.mod", "go.sum", "go.work", "go.work.sum":
		return true
	}
	return p == "vendor/modules.txt" || strings.HasSuffix(p, "/vendor/modules.txt")
}
