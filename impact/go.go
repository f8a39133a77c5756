// The go rule: a package's tests are unaffected when their test binary
// would be built from the same packages, files and toolchain in both
// trees, and nothing they may read differs: the package's folder, and
// what go's test log saw them read on the base.

package impact

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// GoInput is what the go rule reads.
type GoInput struct {
	Trees           *Trees
	Base, Candidate *GoTree
	// Reads are what each package's tests read in runs on the base
	// (ReadGoTestlogs), by folder argument. A package without an entry
	// may read anything: every change reaches it.
	Reads map[string]*GoReads
}

// Go decides every package of the base tree that has a test binary, in
// this order (the first rule that finds a difference says why):
//
//  1. go.mod, go.sum, go.work, go.work.sum or vendor/modules.txt changed
//     anywhere, or go env differs: every package.
//  2. The candidate has no test binary for it, or go list reports an
//     error for one of its packages in either tree.
//  3. Its test binary is built from other packages (an import added or
//     removed), or a package from outside the tree at another version.
//  4. Its tests may start processes or run C code (a package of the
//     binary imports os/exec or plugin, or has cgo files): what those
//     read is in no log, so any change reaches it.
//  5. What its tests read is not known (no test log from the base): any
//     change reaches it.
//  6. A file the binary is built from differs (its packages' Go, cgo,
//     assembly, syso and embedded files, test files included).
//  7. A data file differs anywhere in the tree: any file that is not
//     code (a Go file, or a C, assembly, SWIG or syso file some package
//     builds from; an embedded file is data). Code that runs before go's
//     test log starts (a package-level variable, an init function,
//     TestMain before m.Run) may read any file, and no log records it:
//     a deterministic regression in a data file read there would
//     otherwise merge unseen.
//  8. A file under the package's folder differs (its tests may read
//     them by relative path; other packages' folders below it are theirs).
//  9. A path its tests opened or looked at on the base differs, or a
//     folder they listed gained or lost a file.
func Go(in GoInput) ([]Verdict, error) {
	if in.Trees == nil || in.Base == nil || in.Candidate == nil {
		return nil, invalid("go", "the trees and both go listings are needed")
	}
	var out []Verdict
	global := goGlobalChange(in)
	for _, unit := range in.Base.Packages() {
		if global.Affected {
			v := global
			v.Unit = unit
			out = append(out, v)
			continue
		}
		out = append(out, goPackage(in, unit))
	}
	return sortVerdicts(out), nil
}

// goGlobalChange is rule 1 (an unaffected Verdict when it does not hold).
func goGlobalChange(in GoInput) Verdict {
	if p, ok := in.Trees.first(goGlobal); ok {
		return affected("", p, "%s %s: the module's requirements reach every package", p, in.Trees.Kind(p))
	}
	var keys []string
	for k := range in.Base.env {
		keys = append(keys, k)
	}
	for k := range in.Candidate.env {
		if _, ok := in.Base.env[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if in.Base.env[k] != in.Candidate.env[k] {
			return affected("", "", "go env %s differs (%q, %q): the toolchain or its settings reach every package", k, in.Base.env[k], in.Candidate.env[k])
		}
	}
	return Verdict{}
}

// goPackage applies rules 2 to 9 to the package of folder argument unit.
func goPackage(in GoInput, unit string) Verdict {
	candTest, ok := in.Candidate.tests[unit]
	if !ok {
		return affected(unit, "", "the candidate's tree has no test binary for %s", unit)
	}
	b, c := in.Base.binary(in.Base.tests[unit]), in.Candidate.binary(candTest)
	for _, x := range []*goBinary{b, c} {
		if x.broken != "" {
			return affected(unit, "", "%s", x.broken)
		}
	}
	built := map[string]bool{}
	for _, f := range append(append([]string(nil), b.files...), c.files...) {
		built[f] = true
	}
	if !slices.Equal(b.deps, c.deps) {
		p, _ := in.Trees.first(func(p string) bool { return built[p] })
		return affected(unit, p, "its test binary is built from other packages (%s)", depsDiff(b.deps, c.deps))
	}
	for d, id := range b.outside {
		if c.outside[d] != id {
			return affected(unit, "", "%s is %s in the base, %s in the candidate", d, id, c.outside[d])
		}
	}
	anyChange := func(why string) Verdict {
		if p, ok := in.Trees.first(func(string) bool { return true }); ok {
			return affected(unit, p, "%s %s, and %s", p, in.Trees.Kind(p), why)
		}
		return Verdict{Unit: unit, Why: "the trees hold the same files"}
	}
	for _, x := range []*goBinary{b, c} {
		if x.starts != "" {
			return anyChange("its tests may start processes or run C code (" + x.starts + "), whose reads no log records")
		}
	}
	reads := in.Reads[unit]
	if reads == nil {
		return anyChange("what its tests read is not known (no test log of theirs from the base)")
	}
	if p, ok := in.Trees.first(func(p string) bool { return built[p] }); ok {
		return affected(unit, p, "%s %s: its test binary is built from it", p, in.Trees.Kind(p))
	}
	if p, ok := in.Trees.first(func(p string) bool { return !in.Base.code(p) && !in.Candidate.code(p) }); ok {
		return affected(unit, p, "%s %s: it is data, not code, and what runs before the test log starts (a package-level variable, an init function, TestMain before m.Run) may read it unseen", p, in.Trees.Kind(p))
	}
	dir := strings.TrimPrefix(unit, "./")
	if p, ok := in.Trees.first(func(p string) bool { return within(p, dir) && !in.otherPackage(p, dir) }); ok {
		return affected(unit, p, "%s %s: it is under the package's folder, where its tests may read it", p, in.Trees.Kind(p))
	}
	if p, ok := in.Trees.first(func(p string) bool { return reads.seenBy(in.Trees, p, in.Trees.Kind(p)) }); ok {
		return affected(unit, p, "%s %s: its tests read it (or list its folder) on the base", p, in.Trees.Kind(p))
	}
	return Verdict{Unit: unit, Why: fmt.Sprintf("inputs identical to the base's: the %d files of its %d packages, its folder and the %d paths its tests read",
		len(built), len(b.deps), len(reads.Paths))}
}

// otherPackage reports whether p lies in the folder of another package of
// either tree below dir.
func (in GoInput) otherPackage(p, dir string) bool {
	for d := pathDir(p); d != dir && d != "."; d = pathDir(d) {
		if in.Base.dirs[d] || in.Candidate.dirs[d] {
			return true
		}
	}
	return false
}

// pathDir is path.Dir for repository-relative paths.
func pathDir(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return "."
	}
	return p[:i]
}

// depsDiff says the first package only one list holds.
func depsDiff(base, cand []string) string {
	for _, d := range cand {
		if !slices.Contains(base, d) {
			return "+" + d
		}
	}
	for _, d := range base {
		if !slices.Contains(cand, d) {
			return "-" + d
		}
	}
	return "another order"
}
