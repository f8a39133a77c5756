package flakegate_test

import (
	"go/ast"
	"go/token"
	"testing"
)

// envReaders are the calls that read flakegate's own environment.
var envReaders = map[string]bool{
	"os.Getenv": true, "os.LookupEnv": true, "os.Environ": true, "os.ExpandEnv": true,
	"syscall.Getenv": true, "syscall.Environ": true,
}

// envAllowed are the files outside the CLI that may read the environment
// themselves, and why.
var envAllowed = map[string]string{
	// The git client takes Client.Env, and only when a caller leaves it
	// nil filters flakegate's own (dropping GIT_DIR, GIT_WORK_TREE and the
	// like, which would point git at another repository): what git would
	// inherit anyway, made safer. No setting of flakegate is read there.
	"git/git.go": "filters the environment git inherits",
	// The sandbox helper is flakegate re-executed: in a binary built with
	// coverage it is told the Go runtime's own GOCOVERDIR (never a
	// setting of flakegate's), so that its counters are kept and the
	// runtime's exit line does not end the attempt's output.
	"attempt/sandbox/cover.go": "the Go runtime's coverage folder, for the helper",
	// Test support, imported only by tests: the PostgreSQL tests take
	// their server from FLAKEGATE_TEST_DSN, as pgx's tests do.
	"internal/pgtest/pgtest.go": "test support",
}

// TestOnlyTheCLIReadsTheEnvironment: the libraries are given what they
// need (check.Options.Env and NoOverlay, replay.Options); only the
// CLI, cmd/flakegate/internal/cli, reads flakegate's environment, so that
// a library never acts on a variable its caller did not pass (the CLI's
// own store and init helpers beside it included). Tests are not held to
// it.
func TestOnlyTheCLIReadsTheEnvironment(t *testing.T) {
	seen := map[string]bool{}
	eachGoFile(t, func(rel string) bool { return rel == "cmd/flakegate/internal/cli" }, func(rel string, fset *token.FileSet, f *ast.File) {
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			pkg, ok := sel.X.(*ast.Ident)
			if !ok || !envReaders[pkg.Name+"."+sel.Sel.Name] {
				return true
			}
			if _, ok := envAllowed[rel]; ok {
				seen[rel] = true
				return true
			}
			t.Errorf("%s: %s.%s: only the CLI (cmd/flakegate/internal/cli) reads the environment; take the value as a parameter", fset.Position(sel.Pos()), pkg.Name, sel.Sel.Name)
			return true
		})
	})
	for file := range envAllowed {
		if !seen[file] {
			t.Errorf("%s is allowed to read the environment but no longer does: drop it from envAllowed", file)
		}
	}
}
