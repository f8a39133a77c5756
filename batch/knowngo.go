// The known answers of a go batch (known.go): two fuzz targets in a new
// test file of each package.

package batch

import (
	"fmt"
	"go/build"
	"go/parser"
	"go/token"
	randv1 "math/rand"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/evidence"
	"github.com/flakegate/flakegate/suites"
)

// plantGo plants two fuzz targets in every package of the batch.
func plantGo(p KnownPlan, d *drawer) (*KnownSet, error) {
	k := &KnownSet{framework: evidence.FrameworkGo}
	words := p.words()
	var pkgs []string
	for _, m := range p.Members {
		if !slices.Contains(pkgs, m.Pkg) {
			pkgs = append(pkgs, m.Pkg)
		}
	}
	for _, pkg := range pkgs {
		if err := plantGoPackage(p, d, words, pkg, k); err != nil {
			return nil, err
		}
	}
	k.more = func(rep Report) map[string]string { return goKnownMore(p, pkgs, k, rep) }
	return k, nil
}

// goPackageDir is the folder of a package argument ("./p", ".") in the
// tree dir, and its slash path in the tree ("" for the root).
func goPackageDir(dir, pkg string) (string, string) {
	rel := strings.TrimPrefix(strings.TrimPrefix(pkg, "./"), ".")
	return filepath.Join(dir, filepath.FromSlash(rel)), rel
}

// plantGoPackage adds the two fuzz targets of package pkg to k: drawn
// for this attempt, or, with p.Draws, once per check, tree and package.
func plantGoPackage(p KnownPlan, d *drawer, words []string, pkg string, k *KnownSet) error {
	_, rel := goPackageDir(p.Dir, pkg)
	key := ""
	draws := p.Draws
	if p.Tree == "" {
		draws = nil // no tree key: each attempt draws its own
	} else {
		key = p.Tree + "\x00" + pkg
	}
	g, err := draws.draw(key, func() (*goDraw, error) { return drawGoPackage(p, d, words, pkg, draws != nil) })
	if err != nil {
		return err
	}
	like := g.like
	if like != "" {
		like = path.Join(rel, like)
	}
	k.files = append(k.files, knownFile(rel, g.file, like, g.src))
	for i, want := range []string{attempt.Pass, attempt.Fail} {
		k.answers = append(k.answers, knownAnswer{shape: &Shape{Framework: evidence.FrameworkGo, Test: g.names[i], Pkg: pkg},
			label: path.Join(rel, g.file) + "::" + g.names[i], want: want, nonce: g.nonces[i], scope: pkg})
	}
	return nil
}

// drawGoPackage draws the two fuzz targets of package pkg; own: from
// the words of the package's own tests (a draw every batch of the tree
// shares) rather than words (the batch's members').
func drawGoPackage(p KnownPlan, d *drawer, words []string, pkg string, own bool) (*goDraw, error) {
	dir, rel := goPackageDir(p.Dir, pkg)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("cannot read package %s: %w", pkg, err)
	}
	var sources []string // every .go file's content: a name in none is free
	var tests []string   // the package's test files, by name
	for _, e := range ents {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".go") {
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				return nil, fmt.Errorf("cannot read %s: %w", path.Join(rel, e.Name()), err)
			}
			sources = append(sources, string(b))
			if strings.HasSuffix(e.Name(), "_test.go") && !strings.HasPrefix(e.Name(), "_") && !strings.HasPrefix(e.Name(), ".") {
				tests = append(tests, e.Name())
			}
		}
	}
	if own {
		words = packageWords(sources)
	}
	name, err := goKnownPackage(dir, ents)
	if err != nil {
		return nil, fmt.Errorf("package %s: %w", pkg, err)
	}
	taken := func(s string) bool {
		return slices.ContainsFunc(sources, func(src string) bool { return strings.Contains(src, s) })
	}
	g := &goDraw{}
	g.file = freeName(func(f string) bool { return slices.Contains(tests, f) || taken(f) || fileExists(filepath.Join(dir, f)) }, func() string {
		w := d.pick(words)
		if len(tests) == 0 {
			return w + "_test.go"
		}
		g.like = d.pick(tests)
		return strings.TrimSuffix(g.like, "_test.go") + "_" + w + "_test.go"
	})
	for i := range g.names {
		n := freeName(func(s string) bool { return taken(s) || slices.Contains(g.names[:i], s) }, func() string {
			return "Fuzz" + title(d.pick(words)) + title(d.pick(words))
		})
		if n == "" || g.file == "" {
			return nil, fmt.Errorf("package %s: no free name for a known answer", pkg)
		}
		g.names[i] = n
	}
	g.nonces = [2]string{d.nonce(), d.nonce()}
	bodies := []string{
		fmt.Sprintf("func %s(f *testing.F) {\n\tf.Logf(\"corpus %%d\", %s)\n\tf.Fuzz(func(t *testing.T, b []byte) {})\n}\n", g.names[0], g.nonces[0]),
		fmt.Sprintf("func %s(f *testing.F) {\n\tf.Errorf(\"corpus %%d\", %s)\n}\n", g.names[1], g.nonces[1]),
	}
	if d.r.IntN(2) == 1 {
		bodies[0], bodies[1] = bodies[1], bodies[0]
	}
	g.src = "package " + name + "\n\nimport \"testing\"\n\n" + bodies[0] + "\n" + bodies[1]
	return g, nil
}

func fileExists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// goKnownPackage is the package clause of a new test file in the folder:
// the external test package (NAME_test) of an importable package, the
// package itself for a main package (which no test package imports).
// The files go build takes (their build constraints hold) decide.
func goKnownPackage(dir string, ents []os.DirEntry) (string, error) {
	clause := func(name string) string {
		if ok, err := build.Default.MatchFile(dir, name); err != nil || !ok {
			return ""
		}
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, name), nil, parser.PackageClauseOnly)
		if err != nil {
			return ""
		}
		return f.Name.Name
	}
	var internal, external string
	for _, e := range ents {
		n := e.Name()
		if !e.Type().IsRegular() || !strings.HasSuffix(n, ".go") {
			continue
		}
		c := clause(n)
		switch {
		case c == "":
		case !strings.HasSuffix(n, "_test.go"):
			if c == "main" {
				return c, nil
			}
			return c + "_test", nil
		case strings.HasSuffix(c, "_test"):
			external = c
		default:
			internal = c
		}
	}
	switch {
	case internal == "main":
		return internal, nil
	case internal != "":
		return internal + "_test", nil
	case external != "":
		return external, nil
	}
	return "", fmt.Errorf("no Go file of the folder names its package")
}

// goKnownMore is what a go batch's events must show besides the answers:
// each package ends "fail" (its planted failure), and where the suite's
// list of the package is known and -shuffle names a seed, its tests ran
// in the order that seed gives, before the planted fuzz targets, with its
// examples after them.
func goKnownMore(p KnownPlan, pkgs []string, k *KnownSet, rep Report) map[string]string {
	g, ok := rep.(*goReport)
	if !ok || g.modErr != nil {
		return nil
	}
	wrong := map[string]string{}
	seed, shuffled := goShuffleSeed(p.Members)
	for _, pkg := range pkgs {
		result, ran := g.Package(g.importPath(pkg))
		if result != "fail" {
			if result == "" {
				result = "no end"
			}
			wrong[pkg] = "its package's events end " + strconv.Quote(result) + ", but a known answer of it fails"
			continue
		}
		if !shuffled || p.GoList == nil || p.GoList(pkg) == nil {
			continue
		}
		if why := goOrderWrong(p.GoList(pkg), seed, pkg, p.Members, k, ran); why != "" {
			wrong[pkg] = why
		}
	}
	return wrong
}

// goShuffleSeed is the integer seed of the members' -shuffle flag.
func goShuffleSeed(members []*Shape) (int64, bool) {
	for _, a := range append(append([]string(nil), members[0].Lead...), members[0].Trail...) {
		if v, ok := strings.CutPrefix(a, "-shuffle="); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// goShuffled is the order go test -shuffle=seed runs a package's tests
// in: the testing package's math/rand shuffle of its Test functions, in
// the order go test -list prints them (list).
func goShuffled(list []string, seed int64) []string {
	var tests []string
	for _, n := range list {
		if suites.GoTestKind(n, "Test") {
			tests = append(tests, n)
		}
	}
	rng := randv1.New(randv1.NewSource(seed))
	rng.Shuffle(len(tests), func(i, j int) { tests[i], tests[j] = tests[j], tests[i] })
	return tests
}

// goOrderWrong says how the run events of package pkg (ran) differ from
// the order seed gives; "" when they agree.
func goOrderWrong(list []string, seed int64, pkg string, members []*Shape, k *KnownSet, ran []string) string {
	inBatch := map[string]bool{}
	for _, m := range members {
		if m.Pkg == pkg {
			inBatch[m.Test] = true
		}
	}
	var want, got []string
	for _, n := range goShuffled(list, seed) {
		if inBatch[n] {
			want = append(want, n)
		}
	}
	at := map[string]int{}
	for i, n := range ran {
		if suites.GoTestKind(n, "Test") && inBatch[n] {
			got = append(got, n)
		}
		if _, seen := at[n]; !seen {
			at[n] = i
		}
	}
	if !slices.Equal(got, want) {
		return fmt.Sprintf("the tests of %s ran in an order -shuffle=%d does not give (%s; the seed gives %s)", pkg, seed, clipNames(got), clipNames(want))
	}
	for _, a := range k.answers {
		if a.scope != pkg {
			continue
		}
		for n := range inBatch {
			i, ok := at[n]
			if ok && (suites.GoTestKind(n, "Test") && i > at[a.shape.Test] || suites.GoTestKind(n, "Example") && i < at[a.shape.Test]) {
				return fmt.Sprintf("%s ran on the wrong side of the fuzz target %s (tests run before fuzz targets, examples after)", n, a.shape.Test)
			}
		}
	}
	return ""
}

// clipNames shows a list of names in a reason, the first few.
func clipNames(names []string) string {
	if len(names) > 6 {
		return strings.Join(names[:6], ", ") + fmt.Sprintf(", ... (%d)", len(names))
	}
	return strings.Join(names, ", ")
}
