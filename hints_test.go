package flakegate_test

import (
	"go/ast"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// flagWord is a command-line flag.
var flagWord = regexp.MustCompile(`(^|[^\w-])--[a-z]+`)

// hintsNamingFlags are the packages outside the CLI whose hints
// (the Hint of a flakegate.Error) may name a flag of the command they
// serve, and why; docs/design.md names them. Every other package's hints
// name none: the command that called it adds its own.
var hintsNamingFlags = map[string]string{
	// The library half of `flakegate check` and `replay`: its Options are
	// the command's flags, and its errors say which one to change (--base,
	// --shard, --ledger, --join...).
	"check": "the check command's library",
	// How a check's triples are handed out: --shard I/N, --join's queue
	// (--check-id, --max-lease-expiries) and the merge of the shards'
	// summaries (verdict), over the check's Options.
	"fleet": "the check's --shard and --join, and verdict's merge",
	// Where check's attempts and replay's command run: the sandbox's
	// hint names bwrap's own flags (the command that shows why a user
	// namespace is refused), no flag of flakegate's.
	"site": "names bwrap's flags (bwrap --unshare-user), not flakegate's",
	// The library half of `flakegate replay`: its Options are the
	// command's flags, and its errors say which one to change
	// (--config-rev, --property, --name, --suite).
	"replay": "the replay command's library",
	// The stores are opened from --ledger (or FLAKEGATE_LEDGER) and wait
	// --lock-timeout, and their errors say so.
	"filestore":                    "opened from --ledger",
	"postgres":                     "opened from --ledger",
	"cmd/flakegate/internal/store": "opened from --ledger",
	// The lock helper's timeout is --lock-timeout.
	"internal/flock": "its timeout is --lock-timeout",
}

// TestHintsNameNoFlag holds docs/design.md's rule on hints: the domain's
// hints name no command-line flag, except in the packages
// hintsNamingFlags allows.
func TestHintsNameNoFlag(t *testing.T) {
	seen := map[string]bool{}
	eachGoFile(t, func(rel string) bool { return rel == "cmd/flakegate/internal/cli" || rel == "e2e" }, func(rel string, fset *token.FileSet, f *ast.File) {
		pkg := path.Dir(rel)
		ast.Inspect(f, func(n ast.Node) bool {
			kv, ok := n.(*ast.KeyValueExpr)
			if !ok {
				return true
			}
			if k, ok := kv.Key.(*ast.Ident); !ok || k.Name != "Hint" {
				return true
			}
			ast.Inspect(kv.Value, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				s, err := strconv.Unquote(lit.Value)
				if err != nil || !flagWord.MatchString(s) {
					return true
				}
				if _, ok := hintsNamingFlags[pkg]; ok {
					seen[pkg] = true
					return true
				}
				t.Errorf("%s: a hint of %s names a flag (%q): the domain's hints name none; let the CLI add it", fset.Position(lit.Pos()), pkg, flagWord.FindString(s))
				return true
			})
			return false
		})
	})
	var stale []string
	for pkg := range hintsNamingFlags {
		if !seen[pkg] {
			stale = append(stale, pkg)
		}
	}
	sort.Strings(stale)
	for _, pkg := range stale {
		t.Errorf("%s may name flags in its hints but no longer does: drop it from hintsNamingFlags and docs/design.md", pkg)
	}
}

// TestBaseRequiredSaidOnce: a check without a base is refused in one
// place, the CLI, which names its flag; the libraries say "no base
// revision was given".
func TestBaseRequiredSaidOnce(t *testing.T) {
	var where []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for range strings.Count(string(b), "--base is required") {
			where = append(where, filepath.ToSlash(path))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(where) != 1 || where[0] != "cmd/flakegate/internal/cli/check.go" {
		t.Errorf(`"--base is required" is written in %q, want once, in cmd/flakegate/internal/cli/check.go`, where)
	}
}
