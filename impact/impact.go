// Package impact decides which tests of a suite a change can reach: a
// test is unaffected when nothing it can build, import or read differs
// between the base tree and the graded candidate's tree, and affected
// otherwise, or when that cannot be told. Sound first, precise second:
// whatever the rules cannot resolve counts as reachable.
//
// The package reads the two trees on disk (Compare) and the facts the
// frameworks print about them, which the caller gathers by running
// commands in its sandbox: `go list -deps -test -json` and `go env
// -json` (golist.go), the test log of a go test run on the base
// (gotestlog.go), a pytest run's session log (pysession.go), the related
// test files vitest and jest name (js.go). It starts no process itself:
// the helpers that run those commands take a Runner, which the caller
// binds to a tree and its sandbox. The rules per framework are go.go,
// pytest.go and js.go; how many runs each affected test then gets is
// budget.go. docs/suites.md ("Impact: which tests a change can reach")
// writes the rules and what they cannot see.
package impact

import (
	"context"
	"fmt"
	"sort"

	"github.com/flakegate/flakegate"
)

// Runner runs argv in the sandbox, in the folder of one tree (the
// caller binds it), and returns what it printed on its standard output.
// An error means the command could not run or failed: the helpers that
// take a Runner return it, and the caller counts every test of the suite
// as affected.
type Runner func(ctx context.Context, argv []string) ([]byte, error)

// Verdict is the impact of a change on one unit of a suite: a Go
// package's test binary, or a pytest, vitest or jest test file.
type Verdict struct {
	// Unit names it as the suite does: a Go package's folder argument
	// ("./p", "."), or a test file, repository-relative.
	Unit string
	// Affected: an input of the unit differs between the trees, or the
	// rules cannot tell that none does.
	Affected bool
	// Input is the first differing input, repository-relative ("" when
	// unaffected, or when a rule rather than a file decides).
	Input string
	// Why says why, as a summary can show it.
	Why string
}

// affected is a Verdict of an affected unit.
func affected(unit, input, format string, args ...any) Verdict {
	return Verdict{Unit: unit, Affected: true, Input: input, Why: fmt.Sprintf(format, args...)}
}

// Count returns how many verdicts are affected and how many are not.
func Count(vs []Verdict) (affectedN, unaffectedN int) {
	for _, v := range vs {
		if v.Affected {
			affectedN++
		} else {
			unaffectedN++
		}
	}
	return affectedN, unaffectedN
}

// sortVerdicts orders verdicts by unit.
func sortVerdicts(vs []Verdict) []Verdict {
	sort.Slice(vs, func(i, j int) bool { return vs[i].Unit < vs[j].Unit })
	return vs
}

// invalid is the error of input the package cannot read.
func invalid(what string, format string, args ...any) error {
	return &flakegate.Error{Code: flakegate.EINVALID, Op: "impact", Message: what + ": " + fmt.Sprintf(format, args...),
		Hint: "every test of the suite counts as affected; run the command yourself in the tree to see what it printed"}
}
