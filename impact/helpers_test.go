package impact_test

import (
	"bytes"
	"context"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/flakegate/flakegate/impact"
)

// writeTree writes files (path -> content; "symlink:T" makes a link to T)
// under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		os.Remove(full)
		if target, ok := strings.CutPrefix(content, "symlink:"); ok {
			if err := os.Symlink(target, full); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// twoTrees writes base into a base folder and base with change applied
// (a "" content removes the file) into a candidate folder.
func twoTrees(t *testing.T, base, change map[string]string) (string, string) {
	t.Helper()
	root := t.TempDir()
	b, c := filepath.Join(root, "base"), filepath.Join(root, "cand")
	writeTree(t, b, base)
	cand := maps.Clone(base)
	for p, s := range change {
		if s == "" {
			delete(cand, p)
			continue
		}
		cand[p] = s
	}
	writeTree(t, c, cand)
	return b, c
}

// compare compares the two trees.
func compare(t *testing.T, base, cand string) *impact.Trees {
	t.Helper()
	tr, err := impact.Compare(context.Background(), base, cand)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// goEnv is the environment of the go commands the tests run: the local
// toolchain, no workspace, no flags of the developer's.
func goEnv() []string {
	return append(os.Environ(), "GOTOOLCHAIN=local", "GOWORK=off", "GOFLAGS=", "GOPROXY=off")
}

// runIn is a Runner that runs argv in dir, as the check's sandbox would.
func runIn(dir string) impact.Runner {
	return func(ctx context.Context, argv []string) ([]byte, error) {
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Dir = dir
		cmd.Env = goEnv()
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return out, &runError{argv: argv, err: err, stderr: stderr.String()}
		}
		return out, nil
	}
}

type runError struct {
	argv   []string
	err    error
	stderr string
}

func (e *runError) Error() string {
	return strings.Join(e.argv, " ") + ": " + e.err.Error() + ": " + e.stderr
}

// listGo runs the real go list and go env in dir.
func listGo(t *testing.T, dir string) *impact.GoTree {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go on PATH")
	}
	g, err := impact.ListGo(context.Background(), runIn(dir), "./...")
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// affectedUnits lists the affected units of vs, sorted.
func affectedUnits(vs []impact.Verdict) []string {
	var out []string
	for _, v := range vs {
		if v.Affected {
			out = append(out, v.Unit)
		}
	}
	sort.Strings(out)
	return out
}

// noReads says that each package's tests read nothing outside their
// folder, as a test log that shows no read would.
func noReads(units []string) map[string]*impact.GoReads {
	out := map[string]*impact.GoReads{}
	for _, u := range units {
		out[u] = &impact.GoReads{Paths: map[string]bool{}, Env: map[string]bool{}}
	}
	return out
}
