package config_test

import (
	"strings"
	"testing"

	"github.com/flakegate/flakegate/config"
)

func TestFrameworkOfArgv(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		want string
	}{
		{[]string{"go", "test", "-run", "^TestX$", "."}, "go"},
		{[]string{"/usr/local/go/bin/go", "test", "./x"}, "go"},
		{[]string{"go", "vet", "."}, ""},
		{[]string{"pytest", "-q", "{path}"}, "pytest"},
		{[]string{"python3.11", "-X", "dev", "-m", "pytest", "x.py"}, "pytest"},
		{[]string{"python3", "x.py"}, ""},
		{[]string{"python3", "-c", "import pytest"}, ""},
		{[]string{"sh", "-c", "SEED={seed} exec python3 -m pytest -q {path}::{name}"}, "pytest"},
		{[]string{"bash", "-c", "cd sub && exec go test -run '^{name}$' -rapid.seed={seed} ."}, "go"},
		{[]string{"sh", "-c", "pytest x.py | tee log"}, ""},
		{[]string{"sh", "-c", "make test; pytest x.py"}, ""},
		{[]string{"sh", "-c", "pytest $(cat args)"}, ""},
		{[]string{"sh", "-c", "exec \"$0\" x", "pytest"}, ""},
		{[]string{"env", "A=1", "B=2", "pytest", "x.py"}, "pytest"},
		{[]string{"env", "-u", "X", "FAST_CHECK_SEED={seed}", "node_modules/.bin/vitest", "run"}, "vitest"},
		{[]string{"env", "-S", "pytest x"}, ""},
		{[]string{"uv", "run", "--with", "hypothesis", "pytest", "x.py"}, "pytest"},
		{[]string{"uv", "run", "--", "python", "-m", "pytest"}, "pytest"},
		{[]string{"poetry", "run", "pytest"}, "pytest"},
		{[]string{"npx", "--yes", "jest", "--ci"}, "jest"},
		{[]string{"npx", "vitest", "run"}, "vitest"},
		{[]string{"npm", "exec", "--", "vitest", "run"}, "vitest"},
		{[]string{"node", "node_modules/jest/bin/jest.js"}, "jest"},
		{[]string{"node", "--require", "./hook.js", "node_modules/jest/bin/jest.js"}, ""},
		{[]string{"node", "props/sorted.js"}, ""},
		{[]string{"make", "test"}, ""},
		{[]string{"tox", "-e", "py"}, ""},
		{[]string{"npm", "test"}, ""},
		{[]string{"npm", "run", "test"}, ""},
	} {
		if got := config.FrameworkOfArgv(tc.argv); got != tc.want {
			t.Errorf("%q: %q, want %q", tc.argv, got, tc.want)
		}
	}
}

func TestFrameworkOfFile(t *testing.T) {
	pkg := map[string]string{
		"web/package.json":  `{"devDependencies": {"vitest": "2"}}`,
		"package.json":      `{"devDependencies": {"jest": "29"}}`,
		"both/package.json": `{"devDependencies": {"jest": "29", "vitest": "2"}}`,
	}
	read := func(p string) ([]byte, bool) { s, ok := pkg[p]; return []byte(s), ok }
	for p, want := range map[string]string{
		"x/a_test.go": "go", "x/a.go": "", "tests/test_a.py": "pytest", "tests/a_test.py": "pytest", "tools/gen.py": "",
		"web/src/a.test.ts": "vitest", "src/a.spec.js": "jest", "both/a.test.js": "", "src/a.js": "",
	} {
		if got := config.FrameworkOfFile(p, read); got != want {
			t.Errorf("%s: %q, want %q", p, got, want)
		}
	}
}

func TestLoadFramework(t *testing.T) {
	load := func(entry string) (*config.Config, error) {
		return config.Load([]byte("version: 1\nproperties:\n  - seeds: [1]\n    wall_budget: 1s\n"+entry), "flakegate.yaml")
	}
	for entry, want := range map[string]string{
		"    path: tests/test_a.py\n    run: [sh, -c, \"SEED={seed} exec python3 -m pytest -q {path}\"]\n":              "pytest true",
		"    path: a_test.go\n    run: [make, test]\n    framework: go\n":                                               "go true",
		"    path: a_test.go\n    run: [make, test]\n    pass_marker: ok\n    fail_marker: FAIL\n":                      "none false",
		"    path: a_test.go\n    run: [make, test]\n    framework: none\n    pass_marker: ok\n    fail_marker: FAIL\n": "none false",
		"    path: props/p.sh\n    run: [sh, \"{path}\"]\n":                                                             "none false",
		"    path: props/p.sh\n    run: [sh, \"{path}\"]\n    batch: true\n":                                            "none true",
		"    path: tests/test_a.py\n    run: [pytest, \"{path}\"]\n    batch: false\n":                                  "pytest false",
		"    path: src/a.test.js\n    run: [npm, test]\n":                                                               "none false",
	} {
		cfg, err := load(entry)
		if err != nil {
			t.Errorf("%s: %v", entry, err)
			continue
		}
		p := cfg.Properties[0]
		if got := p.Framework + " " + map[bool]string{true: "true", false: "false"}[p.Batch]; got != want {
			t.Errorf("%s: %s, want %s", entry, got, want)
		}
	}
	for entry, want := range map[string]string{
		"    path: a_test.go\n    run: [make, test]\n":                                           "flakegate.yaml:6: properties[0].run: a_test.go is a Go test file",
		"    path: tests/test_a.py\n    run: [tox, -e, py]\n    pass_marker: ok\n":               "add framework: pytest to this entry if the command runs pytest, or framework: none with a pass_marker and a fail_marker",
		"    path: a_test.go\n    run: [pytest, x]\n    framework: go\n":                         "properties[0].framework: says go, but run runs pytest",
		"    path: a_test.go\n    run: [go, test]\n    framework: rapid\n":                       `"rapid" is not a framework`,
		"    path: a_test.go\n    run: [make, test]\n    framework: none\n    pass_marker: ok\n": "properties[0].framework: none on a_test.go, a go test file, reads nothing of its output: add a pass_marker and a fail_marker",
		"    path: a_test.go\n    run: [go, test]\n    framework: go\n    batch: \"yes\"\n":      "properties[0].batch: want true or false",
	} {
		_, err := load(entry)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", entry, err, want)
		}
	}
}

func TestSeedRange(t *testing.T) {
	load := func(path, run, seeds string) error {
		_, err := config.Load([]byte("version: 1\nproperties:\n  - path: "+path+"\n    run: "+run+"\n    wall_budget: 1s\n    seeds: "+seeds+"\n"), "flakegate.yaml")
		return err
	}
	const jest = `[env, "FAST_CHECK_SEED={seed}", node_modules/.bin/jest, "{path}"]`
	const rapid = `[go, test, "-rapid.seed={seed}", .]`
	for _, tc := range []struct{ path, run, seeds, want string }{
		{"a.test.js", jest, "[1, 2147483647]", ""},
		{"a.test.js", jest, "[1, 5651993075323525]", "flakegate.yaml:6: properties[0].seeds[1]: seed 5651993075323525 is outside what fast-check (framework jest) takes, 0 to 2147483647"},
		{"a.test.js", jest, `["nightly"]`, "is a string, but fast-check (framework jest) takes only integer seeds"},
		{"a_test.go", rapid, "[18446744073709551615]", ""},
		{"a_test.go", rapid, "[18446744073709551616]", "outside what rapid (framework go) takes, 0 to 18446744073709551615"},
		{"test_a.py", "[pytest, \"{path}\"]", `[1, "nightly-3"]`, ""},
		{"test_a.py", "[pytest, \"{path}\"]", "[18446744073709551616]", ""}, // Hypothesis takes any integer
		{"p.sh", "[sh, \"{path}\"]", "[184467440737095516160000]", ""},
	} {
		err := load(tc.path, tc.run, tc.seeds)
		if (tc.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %s: %v, want %q", tc.path, tc.seeds, err, tc.want)
		}
	}
	for _, tc := range []struct {
		fw   string
		v    uint64
		want uint64
	}{
		{"jest", 5651993075323525, 1 + (5651993075323525-1)%config.MaxSeed32},
		{"vitest", config.MaxSeed32, config.MaxSeed32},
		{"vitest", config.MaxSeed32 + 1, 1},
		{"go", 5651993075323525, 5651993075323525},
		{"pytest", 1<<53 - 1, 1<<53 - 1},
		{"none", 7, 7},
	} {
		if got := config.FitDrawnSeed(tc.fw, tc.v); got != tc.want || got < 1 {
			t.Errorf("FitDrawnSeed(%s, %d) = %d, want %d", tc.fw, tc.v, got, tc.want)
		}
	}
}

// FuzzFrameworkOfArgv: any argv, and any sh -c script, gives one of the
// frameworks or "", without a panic.
func FuzzFrameworkOfArgv(f *testing.F) {
	for _, s := range []string{"SEED={seed} exec python3 -m pytest -q {path}::{name}", "cd a && go test .", "env A=1 pytest", "'unterminated", "a \"b $c\""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, argv := range [][]string{{"sh", "-c", s}, strings.Fields(s), {"env", s, "pytest"}} {
			got := config.FrameworkOfArgv(argv)
			if got != "" && got != config.FrameworkGo && got != config.FrameworkPytest && got != config.FrameworkVitest && got != config.FrameworkJest {
				t.Fatalf("%q: %q", argv, got)
			}
		}
	})
}
