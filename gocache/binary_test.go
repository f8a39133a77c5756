package gocache

import (
	"encoding/json"
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
	// go test runs the printer once per package, in that package's
	// folder: a line "PKG folder" then PATH and the arguments.
	printer := `/bin/sh -c 'shift; printf "%s\n" "PKG $PWD" "PATH=$PATH" "$@" >> ` + seen + `' sh`
	env := append(os.Environ(), "GOFLAGS=", "GOWORK=off")
	// goTestArgs is what go test passed to each package's binary, by
	// the package's folder.
	goTestArgs := func(argv []string, env []string) map[string][]string {
		t.Helper()
		os.Remove(seen)
		cmd := exec.Command(goBin, append([]string{"test", "-exec", printer}, argv[2:]...)...)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go test %q: %v\n%s", argv[2:], err, out)
		}
		b, err := os.ReadFile(seen)
		if err != nil {
			t.Fatal(err)
		}
		by := map[string][]string{}
		var cur string
		for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
			if d, ok := strings.CutPrefix(l, "PKG "); ok {
				cur = d
				continue
			}
			by[cur] = append(by[cur], l)
		}
		return by
	}
	for _, argv := range [][]string{
		{"go", "test", "-json", "-shuffle=5", "-count=1", "-timeout=0", "-run", "^(TestA|TestB)$", "./p", "-rapid.seed=3"},
		{"go", "test", "-json", "-count=1", "-run", "^(TestA)$", "./p"},
		{"go", "test", "-json", "-count", "2", "-short", "-tags=x", "-run=^TestA$", "./p", "-test.skip=TestZ", "-check.f=x"},
		{"go", "test", "-json", "-timeout=90s", "-parallel=3", "-cpu=1,2", "-run", "^(TestA)$", ".", "-test.shuffle=off"},
		{"go", "test", "-json", "-count=1", "-run", "^(TestA|TestQ)$", "./q", "./p", ".", "-shuffle=7"},
	} {
		pkgs, args, ok := TestBinaryArgs(argv, nil)
		if !ok || len(pkgs) == 0 {
			t.Fatalf("%q: refused (%q, %v)", argv, pkgs, ok)
		}
		by := goTestArgs(argv, env)
		if len(by) != len(pkgs) {
			t.Errorf("%q: go test ran %d binaries, TestBinaryArgs names %q", argv, len(by), pkgs)
		}
		goroot, _ := exec.Command(goBin, "env", "GOROOT").Output()
		for _, pkg := range pkgs {
			got := by[filepath.Join(dir, pkg)]
			if len(got) == 0 || !slices.Equal(got[1:], args) {
				t.Errorf("%q, %s:\n go test passes %q\n TestBinaryArgs %q", argv, pkg, got, args)
				continue
			}
			if want := "PATH=" + filepath.Join(strings.TrimSpace(string(goroot)), "bin") + ":" + os.Getenv("PATH"); got[0] != want {
				t.Errorf("go test's PATH %q, not %q: the keeper keeps what go gives", got[0], want)
			}
		}
	}
}

// TestTestBinaryArgsRefuses: commands the kept binary cannot stand for
// run go test.
func TestTestBinaryArgsRefuses(t *testing.T) {
	base := []string{"go", "test", "-json", "-count=1", "-run", "^(TestA)$"}
	for name, c := range map[string]struct{ argv, env []string }{
		"a package twice":       {argv: append(slices.Clone(base), "./p", "./q", "./p")},
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
		if pkgs, args, ok := TestBinaryArgs(c.argv, c.env); ok {
			t.Errorf("%s: %q gives %q %q", name, c.argv, pkgs, args)
		}
	}
	if _, _, ok := TestBinaryArgs(append(slices.Clone(base), "./p"), []string{"GOFLAGS=-mod=mod -tags=x"}); !ok {
		t.Errorf("GOFLAGS of build flags only: refused")
	}
}

// TestKeptScriptAsGoTest: the command that runs the kept binaries of a
// command of two packages gives, package by package, the test events go
// test -json gives for that command, and its exit code: one package
// failing does not stop the other, the two run side by side (TestMeet
// of each waits for the other's to start), and a value with quotes and
// $( ) in it reaches the binary as one word.
func TestKeptScriptAsGoTest(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go")
	}
	dir := t.TempDir()
	// TestMeet marks its package started in $MEET and waits up to 20 s
	// for the other package's mark: it passes only when both run at once.
	meet := `
func TestMeet(t *testing.T) {
	dir := os.Getenv("MEET")
	me, _ := os.Getwd()
	os.WriteFile(filepath.Join(dir, filepath.Base(me)), nil, 0o644)
	for i := 0; i < 200; i++ {
		if ents, _ := os.ReadDir(dir); len(ents) >= 2 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("the other package's binary did not run beside this one")
}
`
	files := map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.21\n",
		"p/p_test.go": "package p\n\nimport (\n\t\"flag\"\n\t\"os\"\n\t\"path/filepath\"\n\t\"testing\"\n\t\"time\"\n)\n\nvar msg = flag.String(\"msg\", \"\", \"\")\n\n" +
			"func TestA(t *testing.T) { t.Log(\"MSG[\" + *msg + \"]\") }\nfunc TestB(t *testing.T) { t.Fatal(\"B fails\") }\n" + meet,
		"q/q_test.go": "package q\n\nimport (\n\t\"flag\"\n\t\"os\"\n\t\"path/filepath\"\n\t\"testing\"\n\t\"time\"\n)\n\nvar msg = flag.String(\"msg\", \"\", \"\")\n\n" +
			"func TestA(t *testing.T) {}\nfunc TestQ(t *testing.T) { t.Skip(\"q skips\") }\n" + meet,
	}
	for name, body := range files {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// GOMAXPROCS=2: go test runs two binaries at once, and so must the
	// script, on any machine.
	env := append(os.Environ(), "GOFLAGS=", "GOWORK=off", "GOMAXPROCS=2")
	msg := `it's $(echo pwned) "x"`
	argv := []string{"go", "test", "-json", "-count=1", "-run", "^(TestA|TestB|TestQ|TestMeet)$", "./p", "./q", "-msg=" + msg}
	pkgs, args, ok := TestBinaryArgs(argv, nil)
	if !ok {
		t.Fatalf("%q refused", argv)
	}
	var runs []keptRun
	for _, pkg := range pkgs {
		bin := filepath.Join(dir, "bin", pkg, "x.test")
		build := exec.Command(goBin, "test", "-c", "-o", bin, pkg)
		build.Dir, build.Env = dir, env
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go test -c %s: %v\n%s", pkg, err, out)
		}
		runs = append(runs, keptRun{inside: filepath.Join(dir, pkg), importPath: "example.com/m/" + pkg[2:], bin: bin})
	}
	events := func(cmd *exec.Cmd) (map[string][]string, int) {
		t.Helper()
		out, err := cmd.Output()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		by := map[string][]string{}
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			var e struct{ Action, Package, Test, Output string }
			if err := json.Unmarshal([]byte(l), &e); err != nil {
				t.Fatalf("%q: %v", l, err)
			}
			switch {
			case e.Action == "output" && strings.Contains(e.Output, "MSG["):
				by[e.Package] = append(by[e.Package], "log "+strings.TrimSpace(e.Output[strings.Index(e.Output, "MSG["):]))
			case e.Action != "output" && e.Action != "start" && e.Action != "build-output":
				by[e.Package] = append(by[e.Package], e.Action+" "+e.Test)
			}
		}
		return by, code
	}
	goTest := exec.Command(goBin, argv[1:]...)
	goTest.Dir, goTest.Env = dir, append(env, "MEET="+t.TempDir())
	want, wantCode := events(goTest)
	// The step's tool keeper keeps the executable go tool -n names.
	tool, err := exec.Command(goBin, "tool", "-n", "test2json").Output()
	if err != nil {
		t.Fatalf("go tool -n test2json: %v", err)
	}
	kept := keptArgv(strings.TrimSpace(string(tool)), runs, args)
	script := exec.Command(kept[0], kept[1:]...)
	script.Dir, script.Env = t.TempDir(), append(env, "MEET="+t.TempDir())
	got, code := events(script)
	if code != wantCode || wantCode != 1 {
		t.Errorf("the script exits %d, go test %d (want 1)", code, wantCode)
	}
	for _, pkg := range []string{"example.com/m/p", "example.com/m/q"} {
		if !slices.Equal(got[pkg], want[pkg]) || len(want[pkg]) < 4 {
			t.Errorf("%s:\n go test gives %q\n the script  %q", pkg, want[pkg], got[pkg])
		}
	}
	if !slices.Contains(got["example.com/m/p"], "log MSG["+msg+"]") {
		t.Errorf("the value %q did not reach the binary as one word: %q", msg, got["example.com/m/p"])
	}
}
