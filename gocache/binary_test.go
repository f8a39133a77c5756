package gocache

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestTestBinaryArgsAsGoTest: for each command, the arguments
// TestBinaryArgs gives the kept binary are those go test itself passes
// to the test binary (seen through -exec, which go test runs with the
// binary and its arguments), and the PATH the keeper keeps is the one go
// test gives it. A command it cannot speak for exactly is refused.
func TestTestBinaryArgsAsGoTest(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go")
	}
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":      "module example.com/m\n\ngo 1.21\n",
		"p/p_test.go": "package p\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) {}\n",
		"q/q_test.go": "package q\n\nimport \"testing\"\n\nfunc TestQ(t *testing.T) {}\n",
		"m_test.go":   "package m\n\nimport \"testing\"\n\nfunc TestM(t *testing.T) {}\n",
	}
	for name, body := range files {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	seen := filepath.Join(dir, "seen")
	printer := `/bin/sh -c 'shift; printf "%s\n" "PATH=$PATH" "$@" > ` + seen + `' sh`
	env := append(os.Environ(), "GOFLAGS=", "GOWORK=off")
	goTestArgs := func(argv []string, env []string) []string {
		t.Helper()
		cmd := exec.Command(goBin, append([]string{"test", "-exec", printer}, argv[2:]...)...)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go test %q: %v\n%s", argv[2:], err, out)
		}
		b, err := os.ReadFile(seen)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	}
	for _, argv := range [][]string{
		{"go", "test", "-json", "-shuffle=5", "-count=1", "-timeout=0", "-run", "^(TestA|TestB)$", "./p", "-rapid.seed=3"},
		{"go", "test", "-json", "-count=1", "-run", "^(TestA)$", "./p"},
		{"go", "test", "-json", "-count", "2", "-short", "-tags=x", "-run=^TestA$", "./p", "-test.skip=TestZ", "-check.f=x"},
		{"go", "test", "-json", "-timeout=90s", "-parallel=3", "-cpu=1,2", "-run", "^(TestA)$", ".", "-test.shuffle=off"},
	} {
		pkg, args, ok := TestBinaryArgs(argv, nil)
		if !ok || !slices.Contains(argv, pkg) {
			t.Fatalf("%q: refused (%q, %v)", argv, pkg, ok)
		}
		got := goTestArgs(argv, env)
		if !slices.Equal(got[1:], args) {
			t.Errorf("%q:\n go test passes %q\n TestBinaryArgs %q", argv, got[1:], args)
		}
		goroot, _ := exec.Command(goBin, "env", "GOROOT").Output()
		if want := "PATH=" + filepath.Join(strings.TrimSpace(string(goroot)), "bin") + ":" + os.Getenv("PATH"); got[0] != want {
			t.Errorf("go test's PATH %q, not %q: the keeper keeps what go gives", got[0], want)
		}
	}
}

// TestTestBinaryArgsRefuses: commands the kept binary cannot stand for
// run go test.
func TestTestBinaryArgsRefuses(t *testing.T) {
	base := []string{"go", "test", "-json", "-count=1", "-run", "^(TestA)$"}
	for name, c := range map[string]struct{ argv, env []string }{
		"two packages":          {argv: append(slices.Clone(base), "./p", "./q")},
		"a pattern":             {argv: append(slices.Clone(base), "./...")},
		"no package":            {argv: slices.Clone(base)},
		"an import path":        {argv: append(slices.Clone(base), "example.com/m/p")},
		"no -json":              {argv: []string{"go", "test", "-count=1", "./p"}},
		"-cover":                {argv: append(slices.Clone(base), "-cover", "./p")},
		"-coverprofile":         {argv: append(slices.Clone(base), "-coverprofile=c.out", "./p")},
		"-bench":                {argv: append(slices.Clone(base), "-bench=.", "./p")},
		"-v after the package":  {argv: append(slices.Clone(base), "./p", "-test.v")},
		"-test.paniconexit0":    {argv: append(slices.Clone(base), "./p", "-test.paniconexit0=false")},
		"-failfast":             {argv: append(slices.Clone(base), "-failfast", "./p")},
		"-exec":                 {argv: append(slices.Clone(base), "-exec=x", "./p")},
		"-args":                 {argv: append(slices.Clone(base), "./p", "-args", "x")},
		"a bad timeout":         {argv: append(slices.Clone(base), "-timeout=10", "./p")},
		"a value after a flag":  {argv: append(slices.Clone(base), "./p", "-seed", "3")},
		"GOFLAGS with -count":   {argv: append(slices.Clone(base), "./p"), env: []string{"GOFLAGS=-count=2"}},
		"GOFLAGS with -cover":   {argv: append(slices.Clone(base), "./p"), env: []string{"GOFLAGS=-cover"}},
		"GOFLAGS with a binary": {argv: append(slices.Clone(base), "./p"), env: []string{"GOFLAGS=-test.v"}},
		"not go test":           {argv: []string{"go", "vet", "-json", "./p"}},
		"-short=maybe":          {argv: append(slices.Clone(base), "-short=maybe", "./p")},
	} {
		if pkg, args, ok := TestBinaryArgs(c.argv, c.env); ok {
			t.Errorf("%s: %q gives %q %q", name, c.argv, pkg, args)
		}
	}
	if _, _, ok := TestBinaryArgs(append(slices.Clone(base), "./p"), []string{"GOFLAGS=-mod=mod -tags=x"}); !ok {
		t.Errorf("GOFLAGS of build flags only: refused")
	}
}
