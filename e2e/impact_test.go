package e2e_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flakegate/flakegate"
)

// impactModule is a go module of five packages, p0 to p4, each with one
// test that takes 200 ms (so the base's run times them alike); p1
// imports p0, p3's test reads data/p3.txt by a relative path, p2 reads
// data/limit.txt when it loads (before go's test log starts), and
// tools/gen.go is a generator no package builds.
func impactModule(cfg string) map[string]string {
	files := map[string]string{
		"go.mod":         "module example.com/impact\n\ngo 1.21\n",
		"flakegate.yaml": cfg,
		"data/p3.txt":    "three\n",
		"data/other.txt": "nobody reads this\n",
		"data/limit.txt": "2\n",
		"tools/gen.go":   "//go:build ignore\n\npackage main\n\nfunc main() {}\n",
		"README.md":      "impact\n",
	}
	for i := range 5 {
		p := fmt.Sprintf("p%d", i)
		src := fmt.Sprintf("package %s\n\n// Value is the package's value.\nfunc Value() int { return %d }\n", p, i)
		switch i {
		case 1:
			src = "package p1\n\nimport \"example.com/impact/p0\"\n\n// Value is p0's plus one.\nfunc Value() int { return p0.Value() + 1 }\n"
		case 2:
			src = "package p2\n\nimport \"os\"\n\n// limit is read when the package loads.\nvar limit, _ = os.ReadFile(\"../data/limit.txt\")\n\n" +
				"// Value is the limit.\nfunc Value() int {\n\tif string(limit) != \"2\\n\" {\n\t\treturn -1\n\t}\n\treturn 2\n}\n"
		}
		files[p+"/"+p+".go"] = src
		read := ""
		if i == 3 {
			read = "\tif b, err := os.ReadFile(\"../data/p3.txt\"); err != nil || string(b) != \"three\\n\" {\n\t\tt.Fatalf(\"data: %q %v\", b, err)\n\t}\n"
		}
		files[p+"/"+p+"_test.go"] = fmt.Sprintf("package %s\n\nimport (\n\t\"os\"\n\t\"testing\"\n\t\"time\"\n)\n\nvar _ = os.Getpid\n\n"+
			"func TestValue(t *testing.T) {\n\ttime.Sleep(200 * time.Millisecond)\n%s\tif Value() != %d {\n\t\tt.Fatalf(\"Value() = %%d\", Value())\n\t}\n}\n", p, read, i)
	}
	return files
}

const impactConfig = `version: 1
retry_cap: 1
flake_probe_runs: 0
reject_new_flakes: true
suites:
  - path: "./..."
    framework: go
    seeds: [1, 2, 3]
    wall_budget: 120s
`

// TestCheckImpactGo: with impact on (the default: its config does not
// name it), a go suite's packages the patch
// cannot reach are not run again, and the ones it can reach get the runs
// saved (12 for one package of five, whose full suite is 15 package runs
// per check), where a 1-in-2 flake of the patch shows. A change to a data
// file reaches every package (p2 reads one when it loads, which no test
// log records). The base's go listing is kept for the checks after the
// first. Without impact a patch to p4 runs every package 3 times.
func TestCheckImpactGo(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end to end: real git, go and a sandbox")
	}
	needTool(t, "go")
	r := newRepo(t, impactModule(impactConfig))
	r.candidate("p0", map[string]string{"p0/p0.go": "package p0\n\n// Value is the package's value, written another way.\nfunc Value() int { return 1 - 1 }\n"})
	r.candidate("tool", map[string]string{"tools/gen.go": "//go:build ignore\n\npackage main\n\nfunc main() { println() }\n"})
	// The attack: a data file read when a package loads, which go's test
	// log never sees. Taken as unread, it let this regression of p2 merge
	// with exit 0; a data file now reaches every package. (That any data
	// file reaches every package, read or not, is impact's
	// TestGoReachability's "a data file outside every package": one data
	// change is checked end to end, the attack's.)
	r.candidate("limit", map[string]string{"data/limit.txt": "3\n"})
	r.candidate("flake", map[string]string{"p4/p4.go": "package p4\n\nimport \"time\"\n\n// Value is 4, except on odd microseconds.\n" +
		"func Value() int {\n\tif time.Now().UnixMicro()%2 == 1 {\n\t\treturn 5\n\t}\n\treturn 4\n}\n"})

	all3 := map[string]int{"p0": 3, "p1": 3, "p2": 3, "p3": 3, "p4": 3}
	type want struct {
		code                 int
		unaffected, affected int
		runs                 int
		results              map[string]int // package -> results
	}
	for _, tc := range []struct {
		cand string
		want want
	}{
		{"p0", want{0, 3, 2, 7, map[string]int{"p0": 7, "p1": 7}}},
		{"tool", want{0, 5, 0, 0, nil}},
		{"limit", want{1, 0, 5, 3, all3}},
		{"flake", want{1, 4, 1, 12, map[string]int{"p4": 12}}},
	} {
		md, junit := filepath.Join(t.TempDir(), "summary.md"), filepath.Join(t.TempDir(), "junit.xml")
		cr := r.check("--base", "base", "--candidate", tc.cand, "--markdown", md, "--junit", junit)
		if len(cr.summary.Impact) != 1 {
			t.Fatalf("%s: want one suite's impact in the summary, got %+v\n%s", tc.cand, cr.summary.Impact, cr)
		}
		si := cr.summary.Impact[0]
		t.Logf("%s: exit %d, %d results: %s", tc.cand, cr.code, len(cr.summary.Results), si.Line())
		if tc.cand == "p0" && si.Runs >= 6 && si.Runs <= 8 {
			// The budget divides the suite's cost, timed on the base, by
			// the two packages': 15/2 package runs, give or take their
			// times' noise.
			tc.want.runs, tc.want.results = si.Runs, map[string]int{"p0": si.Runs, "p1": si.Runs}
		}
		if cr.code != tc.want.code || si.Unaffected != tc.want.unaffected || si.Affected != tc.want.affected || si.Runs != tc.want.runs {
			t.Fatalf("%s: exit %d, impact %+v; want exit %d, %d unaffected, %d affected, %d runs\n%s", tc.cand, cr.code, si,
				tc.want.code, tc.want.unaffected, tc.want.affected, tc.want.runs, cr)
		}
		got := map[string]int{}
		for _, res := range cr.summary.Results {
			got[filepath.Dir(res.PropertyPath)]++
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want.results) && !(len(got) == 0 && tc.want.results == nil) {
			t.Fatalf("%s: results per package %v, want %v\n%s", tc.cand, got, tc.want.results, cr)
		}
		line := fmt.Sprintf("unaffected: %d tests (inputs identical to the base's)", tc.want.unaffected)
		if !strings.Contains(cr.stdout+cr.stderr, line) {
			t.Fatalf("%s: the output does not say %q\n%s", tc.cand, line, cr)
		}
		if tc.cand == "flake" {
			flaky := 0
			for _, res := range cr.summary.Results {
				if res.Label != flakegate.Pass {
					flaky++
				}
			}
			if flaky == 0 {
				t.Fatalf("the patch's 1-in-2 flake showed in none of 12 runs\n%s", cr)
			}
		}
		if tc.cand == "flake" {
			// The reports say it too.
			for _, f := range []string{md, junit} {
				b, err := os.ReadFile(f)
				if err != nil || !strings.Contains(string(b), "unaffected: 4 tests") {
					t.Fatalf("%s does not say the unaffected tests:\n%s", f, b)
				}
			}
		}
	}

	// The base's go listing is kept: the checks after the first read it
	// (their verdicts above are the proof that it reads as listed).
	if kept, _ := filepath.Glob(filepath.Join(r.dir, ".git", "flakegate", "impact", "*.json")); len(kept) != 1 {
		t.Fatalf("want the base's go listing kept once, got %v", kept)
	}

	// impact: false runs every package with the suite's seeds, whatever
	// the patch.
	r.git("checkout", "-q", "--detach", "base")
	r.commit("impact off", map[string]string{"flakegate.yaml": strings.Replace(impactConfig, "reject_new_flakes: true\n", "reject_new_flakes: true\nimpact: false\n", 1)})
	r.git("tag", "base-off")
	cand := r.commit("p4 off", map[string]string{"p4/more.go": "package p4\n\n// More is new.\nfunc More() int { return 44 }\n"})
	cr := r.check("--base", "base-off", "--candidate", cand)
	// The "flake" check above may have failed p4 on a drawn seed: that
	// seed is in p4's failure corpus now, and every later check of p4
	// runs it too (seed_origin "corpus"). Only the listed seeds count.
	listed := 0
	for _, res := range cr.summary.Results {
		if res.SeedOrigin == "" {
			listed++
		} else if res.SeedOrigin != flakegate.SeedCorpus || filepath.Dir(res.PropertyPath) != "p4" {
			t.Fatalf("impact off: a %q seed of %s\n%s", res.SeedOrigin, res.PropertyPath, cr)
		}
	}
	if cr.code != 0 || listed != 15 || cr.summary.Impact != nil {
		t.Fatalf("impact off: want 15 PASS (5 packages, 3 seeds) and no impact, got %d results (%d listed), impact %+v\n%s", len(cr.summary.Results), listed, cr.summary.Impact, cr)
	}
	b, _ := json.Marshal(cr.summary)
	if strings.Contains(string(b), `"impact"`) {
		t.Fatalf("a summary without impact names it: %s", b)
	}
}

// TestCheckImpactPytest: with impact: true, a pytest suite's test files
// whose import closure, folder data and session reads are identical to
// the base's are not run again; the ones the patch reaches run, a
// regression among them is caught, and a harmless README edit runs none.
// The base's session log is kept: the second check does not run it again.
// A test the suite excludes starts a process; the session runs only the
// gated tests, so that process does not make every change reach every
// test (with the whole folder in the session, beta's patch reached all 3).
func TestCheckImpactPytest(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end to end: real git, pytest and a sandbox")
	}
	needProgram(t, "python3")
	r := newRepo(t, map[string]string{
		"README.md": "impact py\n",
		"alpha.py":  "def value():\n    return 1\n",
		"beta.py":   "def value():\n    return 2\n",
		"flakegate.yaml": `version: 1
retry_cap: 1
flake_probe_runs: 0
impact: true
suites:
  - path: tests
    framework: pytest
    seeds: [1, 2, 3]
    wall_budget: 120s
    exclude: ["test_uname"]
`,
		"tests/test_uname.py": "import subprocess\n\n\ndef test_uname():\n    subprocess.run([\"uname\"], check=True)\n",
		"tests/test_alpha.py": "import alpha\n\n\ndef test_one():\n    assert alpha.value() == 1\n\n\ndef test_again():\n    assert alpha.value() + 1 == 2\n",
		"tests/test_beta.py":  "import beta\n\n\ndef test_two():\n    assert beta.value() == 2\n",
	})
	r.candidate("beta", map[string]string{"beta.py": "def value():\n    return 1 + 1\n"})
	r.candidate("alpha", map[string]string{"alpha.py": "def value():\n    return 0\n"})
	r.candidate("docs", map[string]string{"README.md": "impact py, documented\n"})
	for _, tc := range []struct {
		cand                 string
		code                 int
		unaffected, affected int
		file                 string // the file whose tests ran ("" for none)
	}{
		{"beta", 0, 2, 1, "tests/test_beta.py"},
		{"alpha", 1, 1, 2, "tests/test_alpha.py"},
		{"docs", 0, 3, 0, ""},
	} {
		cr := r.check("--base", "base", "--candidate", tc.cand)
		if len(cr.summary.Impact) != 1 {
			t.Fatalf("%s: want one suite's impact, got %+v\n%s", tc.cand, cr.summary.Impact, cr)
		}
		si := cr.summary.Impact[0]
		t.Logf("%s: exit %d, %d results: %s", tc.cand, cr.code, len(cr.summary.Results), si.Line())
		if cr.code != tc.code || si.Unaffected != tc.unaffected || si.Affected != tc.affected || si.Unit != "test file" {
			t.Fatalf("%s: exit %d, impact %+v; want exit %d, %d unaffected, %d affected\n%s", tc.cand, cr.code, si, tc.code, tc.unaffected, tc.affected, cr)
		}
		if len(cr.summary.Results) != tc.affected*si.Runs || tc.affected > 0 && si.Runs < 3 {
			t.Fatalf("%s: %d results, want %d tests × %d runs (at least the suite's 3 seeds)\n%s", tc.cand, len(cr.summary.Results), tc.affected, si.Runs, cr)
		}
		for _, res := range cr.summary.Results {
			if res.PropertyPath != tc.file {
				t.Fatalf("%s: a result of %s, want only %s\n%s", tc.cand, res.PropertyPath, tc.file, cr)
			}
		}
	}
	kept, _ := filepath.Glob(filepath.Join(r.dir, ".git", "flakegate", "impact", "*.json"))
	if len(kept) != 1 {
		t.Fatalf("want the base's session log kept once, got %v", kept)
	}
}

// TestCheckImpactJS: with impact: true, a vitest or jest suite's test
// files that the framework's own module graph does not relate to a
// changed module are not run again; the related ones run, and a
// regression among them is caught. A change the graph does not hold (a
// file that is no module) reaches every test.
func TestCheckImpactJS(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the real jest and vitest")
	}
	for _, fw := range jsFrameworks {
		t.Run(fw.name, func(t *testing.T) {
			t.Parallel()
			r := jsSuiteRepoWith(t, fw, "impact: true\n")
			r.candidate("calc", map[string]string{"src/calc.js": fw.source(jsSuiteCalc + "export const thrice = (a) => 3 * a;\n")})
			r.candidate("state", map[string]string{"src/state.js": fw.source(strings.Replace(jsSuiteState, "() => 1", "() => 2", 1))})
			r.candidate("docs", map[string]string{"README.md": "js suite, documented\n"})
			for _, tc := range []struct {
				cand                 string
				code                 int
				unaffected, affected int
				file                 string // the only file whose tests ran ("" for any)
			}{
				{"calc", 0, 3, 3, "tests/calc.test.js"},
				{"state", 1, 3, 3, "tests/order.test.js"},
				{"docs", 0, 0, 6, ""},
			} {
				cr := r.check("--base", "base", "--candidate", tc.cand)
				if len(cr.summary.Impact) != 1 {
					t.Fatalf("%s: want one suite's impact, got %+v\n%s", tc.cand, cr.summary.Impact, cr)
				}
				si := cr.summary.Impact[0]
				t.Logf("%s: exit %d, %d results: %s", tc.cand, cr.code, len(cr.summary.Results), si.Line())
				if cr.code != tc.code || si.Unaffected != tc.unaffected || si.Affected != tc.affected {
					t.Fatalf("%s: exit %d, impact %+v; want exit %d, %d unaffected, %d affected\n%s", tc.cand, cr.code, si, tc.code, tc.unaffected, tc.affected, cr)
				}
				if len(cr.summary.Results) != tc.affected*si.Runs {
					t.Fatalf("%s: %d results, want %d tests × %d runs\n%s", tc.cand, len(cr.summary.Results), tc.affected, si.Runs, cr)
				}
				for _, res := range cr.summary.Results {
					if tc.file != "" && res.PropertyPath != tc.file {
						t.Fatalf("%s: a result of %s, want only %s\n%s", tc.cand, res.PropertyPath, tc.file, cr)
					}
				}
			}
		})
	}
}
