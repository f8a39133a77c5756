package batch

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/evidence"
)

// knownModule writes a Go module of package p (tests TestA..TestJ) in a
// temporary folder and returns it.
func knownModule(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{"go.mod": "module example.com/k\n\ngo 1.21\n", "p/p.go": "package p\n\n// V is 1.\nfunc V() int { return 1 }\n"}
	var b strings.Builder
	b.WriteString("package p\n\nimport \"testing\"\n")
	for _, c := range "ABCDEFGHIJ" {
		fmt.Fprintf(&b, "\nfunc Test%c(t *testing.T) {\n\tif V() != 1 {\n\t\tt.Fatal(\"no\")\n\t}\n}\n", c)
	}
	files["p/p_test.go"] = b.String()
	for name, body := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// goMembers are batch shapes of tests of ./p with the suite's -shuffle.
func goMembers(seed string, names ...string) []*Shape {
	var out []*Shape
	for _, n := range names {
		out = append(out, &Shape{Framework: evidence.FrameworkGo, Test: n, Pkg: "./p", Lead: []string{"-shuffle=" + seed, "-count=1", "-timeout=0"}})
	}
	return out
}

// goEvents is a go test -json report of package example.com/k/p: lines
// of "run NAME", "pass NAME", "fail NAME", "out NAME TEXT", "end ACTION".
func goEvents(lines ...string) *goReport {
	g := &goReport{GoJSON: evidence.NewGoJSON(), module: "example.com/k"}
	for _, l := range lines {
		f := strings.SplitN(l, " ", 3)
		switch f[0] {
		case "run", "pass", "fail":
			fmt.Fprintf(g, `{"Action":%q,"Package":"example.com/k/p","Test":%q}`+"\n", f[0], f[1])
		case "out":
			fmt.Fprintf(g, `{"Action":"output","Package":"example.com/k/p","Test":%q,"Output":%q}`+"\n", f[1], f[2]+"\n")
		case "end":
			fmt.Fprintf(g, `{"Action":%q,"Package":"example.com/k/p"}`+"\n", f[1])
		}
	}
	return g
}

// TestKnownGoJudge: the known answers of a go batch hold only when the
// planted passing fuzz target passed and logged its nonce, the failing one
// failed with its nonce, the package ended "fail", the batch exited
// non-zero, and the tests ran in the order -shuffle gives. Each way a
// test process can write its own report breaks one of them.
func TestKnownGoJudge(t *testing.T) {
	dir := knownModule(t)
	list := []string{"TestA", "TestB", "TestC", "TestD", "TestE", "TestF", "TestG", "TestH", "TestI", "TestJ"}
	members := goMembers("7", "TestB", "TestE", "TestI")
	k, err := plantKnown(KnownPlan{Framework: evidence.FrameworkGo, Dir: dir, Members: members, Seed: "7", GoList: func(string) []string { return list }})
	if err != nil {
		t.Fatal(err)
	}
	if len(k.answers) != 2 || len(k.files) != 1 || !strings.HasPrefix(k.files[0].Rel, "p/p_") || !strings.Contains(string(k.files[0].Data), "package p_test\n") {
		t.Fatalf("planted %+v files %v", k.answers, k.files)
	}
	pass, fail := k.answers[0], k.answers[1]
	var order []string
	for _, n := range goShuffled(list, 7) {
		if slices.Contains([]string{"TestB", "TestE", "TestI"}, n) {
			order = append(order, n)
		}
	}
	honest := func(mutate func([]string) []string) []string {
		var ev []string
		for _, n := range order {
			ev = append(ev, "run "+n, "pass "+n)
		}
		ev = append(ev, "run "+pass.shape.Test, "out "+pass.shape.Test+" corpus "+pass.nonce, "pass "+pass.shape.Test,
			"run "+fail.shape.Test, "out "+fail.shape.Test+" corpus "+fail.nonce, "fail "+fail.shape.Test, "end fail")
		if mutate != nil {
			ev = mutate(ev)
		}
		return ev
	}
	if v := k.Judge(goEvents(honest(nil)...), attempt.Outcome{ExitCode: 1}); len(v.Wrong) != 0 || len(v.Entries) != 2 || !v.Entries[0].Shown || !v.Entries[1].Shown {
		t.Fatalf("the honest report: %+v", v)
	}
	for name, c := range map[string]struct {
		events []string
		exit   int
		why    string
	}{
		"forged passes, exit 0": {events: []string{"run TestB", "pass TestB", "run TestE", "pass TestE", "run TestI", "pass TestI", "run " + pass.shape.Test, "pass " + pass.shape.Test,
			"run " + fail.shape.Test, "pass " + fail.shape.Test}, exit: 0, why: "planted to fail, the report says pass"},
		"no nonce": {events: honest(func(ev []string) []string {
			return slices.DeleteFunc(ev, func(l string) bool { return strings.HasPrefix(l, "out "+pass.shape.Test) })
		}), exit: 1, why: "does not show its nonce"},
		"exit 0":         {events: honest(nil), exit: 0, why: "the batch exited 0"},
		"package passed": {events: honest(func(ev []string) []string { ev[len(ev)-1] = "end pass"; return ev }), exit: 1, why: `end "pass"`},
		"another order": {events: honest(func(ev []string) []string { ev[0], ev[1], ev[2], ev[3] = ev[2], ev[3], ev[0], ev[1]; return ev }), exit: 1,
			why: "ran in an order -shuffle=7 does not give"},
		"a test after the fuzz targets": {events: honest(func(ev []string) []string {
			last := slices.Clone(ev[4:6])
			return append(append(slices.Delete(ev, 4, 6)[:len(ev)-3], last...), "end fail")
		}), exit: 1, why: "wrong side"},
	} {
		v := k.Judge(goEvents(c.events...), attempt.Outcome{ExitCode: c.exit})
		if !strings.Contains(v.Wrong["./p"], c.why) {
			t.Errorf("%s: wrong %q, want it to say %q", name, v.Wrong["./p"], c.why)
		}
	}
}

// TestGoShuffledIsGoTests: goShuffled gives the order go test -shuffle
// runs a package's tests in (the host's go, on knownModule's package).
func TestGoShuffledIsGoTests(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go")
	}
	dir := knownModule(t)
	list := []string{"TestA", "TestB", "TestC", "TestD", "TestE", "TestF", "TestG", "TestH", "TestI", "TestJ"}
	for _, seed := range []int64{1, 2, 12345, -3} {
		cmd := exec.Command("go", "test", "-count=1", "-v", fmt.Sprintf("-shuffle=%d", seed), "./p")
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		var ran []string
		for _, m := range regexp.MustCompile(`(?m)^=== RUN   (\w+)$`).FindAllStringSubmatch(string(out), -1) {
			ran = append(ran, m[1])
		}
		if got := goShuffled(list, seed); !slices.Equal(got, ran) {
			t.Errorf("seed %d: goShuffled %v, go test ran %v", seed, got, ran)
		}
	}
}

// TestKnownGoRuns: the planted file builds and runs under the real go
// test -json the batch runs, and its report holds the known answers; an
// init of the code under test that prints the members' passes and exits
// 0 (attack 3 of issue 42) does not.
func TestKnownGoRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go")
	}
	dir := knownModule(t)
	members := goMembers("3", "TestA", "TestC")
	run := func() (KnownVerdict, string) {
		k, err := plantKnown(KnownPlan{Framework: evidence.FrameworkGo, Dir: dir, Members: members, Seed: "3"})
		if err != nil {
			t.Fatal(err)
		}
		argv := Argv(members[0], k.shapes(members))
		cmd := attempt.Command{Argv: argv, Dir: dir, NoTestMarkers: []string{}}
		undo, err := k.addTo(&cmd)
		if err != nil {
			t.Fatal(err)
		}
		defer undo()
		rep := &goReport{GoJSON: evidence.NewGoJSON(), module: "example.com/k"}
		c := exec.Command(argv[0], argv[1:]...)
		c.Dir, c.Stdout = dir, rep
		err = c.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		return k.Judge(rep, attempt.Outcome{ExitCode: code}), strings.Join(argv, " ")
	}
	if v, argv := run(); len(v.Wrong) != 0 {
		t.Fatalf("%s: %+v", argv, v)
	}
	if ents, _ := os.ReadDir(filepath.Join(dir, "p")); len(ents) != 2 {
		t.Errorf("the planted file was left in the tree: %v", ents)
	}
	forge := "package p\n\nimport (\n\t\"fmt\"\n\t\"os\"\n\t\"strings\"\n)\n\nfunc init() {\n\tfor _, a := range os.Args[1:] {\n\t\tif v, ok := strings.CutPrefix(a, \"-test.run=\"); ok {\n" +
		"\t\t\tfor _, n := range strings.Split(strings.Trim(v, \"^$()\"), \"|\") {\n\t\t\t\tfmt.Printf(\"\\x16=== RUN   %s\\n\\x16--- PASS: %s (0.00s)\\n\", n, n)\n\t\t\t}\n\t\t\tos.Exit(0)\n\t\t}\n\t}\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "p", "forge.go"), []byte(forge), 0o644); err != nil {
		t.Fatal(err)
	}
	if v, argv := run(); !strings.Contains(v.Wrong["./p"], "planted to fail, the report says pass") {
		t.Fatalf("%s: the forged report: %+v", argv, v)
	}
}

// TestKnownPytestJudge: a pytest batch's known answers hold when the
// JUnit report and the short summary agree that the planted passing test
// passed with its nonce recorded as a property, and the planted failing
// one failed with its nonce; a plugin that turns failures into passes, or
// a report that lacks the property, is the test process's own report.
func TestKnownPytestJudge(t *testing.T) {
	dir := pyTree(t, map[string]string{"tests/test_a.py": "def test_a():\n    pass\n"})
	members := []*Shape{{Framework: evidence.FrameworkPytest, Test: "tests/test_a.py::test_a"}}
	k, err := plantKnown(KnownPlan{Framework: evidence.FrameworkPytest, Dir: dir, Members: members, Seed: "3"})
	if err != nil {
		t.Fatal(err)
	}
	if len(k.files) != 1 || !strings.HasPrefix(k.files[0].Rel, "tests/test_") || len(k.at) != 2 {
		t.Fatalf("planted %+v", k.files)
	}
	pass, fail := k.answers[0], k.answers[1]
	report := func(failOutcome string, props bool) pytestReport {
		r := pytestReport{evidence.NewPytestJUnit()}
		var cases strings.Builder
		for _, node := range []string{members[0].Test, pass.label, fail.label} {
			file, name, _ := strings.Cut(node, "::")
			class := strings.ReplaceAll(strings.TrimSuffix(file, ".py"), "/", ".")
			body := ""
			switch {
			case node == pass.label && props:
				body = fmt.Sprintf(`<properties><property name="k" value="%s"/></properties>`, pass.nonce)
			case node == fail.label && failOutcome == "fail":
				body = fmt.Sprintf(`<failure message="AssertionError: %s">assert</failure>`, fail.nonce)
			}
			fmt.Fprintf(&cases, `<testcase classname=%q name=%q file=%q time="0.01">%s</testcase>`, class, name, file, body)
			outcome := "PASSED"
			if node == fail.label && failOutcome == "fail" {
				outcome = "FAILED"
			}
			fmt.Fprintf(r, "%s %s\n", outcome, node)
		}
		r.SetJUnit([]byte(`<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite>`+cases.String()+`</testsuite></testsuites>`), nil)
		return r
	}
	if v := k.Judge(report("fail", true), attempt.Outcome{ExitCode: 1}); len(v.Wrong) != 0 {
		t.Fatalf("the honest report: %+v", v)
	}
	for name, c := range map[string]struct {
		rep  pytestReport
		exit int
		why  string
	}{
		"failures turned into passes": {report("pass", true), 0, "planted to fail, the report says pass"},
		"no property":                 {report("fail", false), 1, "does not show its nonce"},
	} {
		if v := k.Judge(c.rep, attempt.Outcome{ExitCode: c.exit}); !strings.Contains(v.Wrong[""], c.why) {
			t.Errorf("%s: wrong %q, want %q", name, v.Wrong[""], c.why)
		}
	}
}

// TestKnownJSJudge: a vitest batch's passing known answer must show its
// nonce in the task's meta when the report carries meta at all; a report
// that carries none (an older vitest) is judged by the outcomes.
func TestKnownJSJudge(t *testing.T) {
	dir := pyTree(t, map[string]string{"tests/calc.test.ts": "test('a', () => {})\n"})
	members := []*Shape{{Framework: evidence.FrameworkVitest, Test: "adds", Pkg: "tests/calc.test.ts"}}
	k, err := plantKnown(KnownPlan{Framework: evidence.FrameworkVitest, Dir: dir, Members: members, Seed: "3"})
	if err != nil {
		t.Fatal(err)
	}
	if len(k.files) != 1 || !strings.HasSuffix(k.files[0].Rel, ".test.ts") || !strings.Contains(string(k.files[0].Data), "from 'vitest'") {
		t.Fatalf("planted %+v", k.files)
	}
	pass, fail := k.answers[0], k.answers[1]
	report := func(meta string) jsReport {
		r := jsReport{evidence.NewJSReport(evidence.FrameworkVitest)}
		res := func(name, status, extra string) string {
			return fmt.Sprintf(`{"fullName":%q,"title":%q,"ancestorTitles":[],"status":%q,"failureMessages":[%s]%s}`, name, name, status, extra, "")
		}
		doc := fmt.Sprintf(`{"numTotalTests":3,"testResults":[{"name":"/t/tests/calc.test.ts","status":"passed","assertionResults":[%s]},{"name":"/t/%s","status":"failed","assertionResults":[%s,%s]}]}`,
			res("adds", "passed", ""), pass.shape.Pkg,
			strings.Replace(res(pass.shape.Test, "passed", ""), `"failureMessages":[]`, `"failureMessages":[]`+meta, 1),
			res(fail.shape.Test, "failed", strconv.Quote("Error: "+fail.nonce)))
		r.SetFile([]byte(doc), nil, "/t")
		return r
	}
	if v := k.Judge(report(`,"meta":{`+pass.nonce+`}`), attempt.Outcome{ExitCode: 1}); len(v.Wrong) != 0 {
		t.Fatalf("the honest report: %+v", v)
	}
	if v := k.Judge(report(`,"meta":{}`), attempt.Outcome{ExitCode: 1}); !strings.Contains(v.Wrong[""], "does not show its nonce") {
		t.Errorf("meta without the nonce: %+v", v)
	}
	if v := k.Judge(report(""), attempt.Outcome{ExitCode: 1}); len(v.Wrong) != 0 {
		t.Errorf("a report that carries no meta at all: %+v", v)
	}
}

// pyTree writes files into a new folder and returns it.
func pyTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
