package report

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/internal/golden"
)

// suiteShape says how big a made-up suite summary is.
type suiteShape struct {
	goPackages, goTests int // a Go suite "./...": packages × tests each
	pyFiles, pyTests    int // a pytest suite "tests": files × tests each
	seeds               int
	properties          int // property triples beside the suites (seeds 1400...)
}

// suiteSummary makes a check summary of two suites and some property
// triples, in the order a check writes them (suite by suite, test by
// test, seed by seed). The triples that do not pass sit at fixed places:
//   - go pkg03 TestA005 seed 2: PROPERTY, with a failing attempt's output;
//   - go pkg07 TestA001 every seed: SCHEDULER (a new flake on seed 1);
//   - go pkg07 TestA002 seed 3: SCHEDULER skipped (frozen);
//   - pytest file 02 test_04: CONTAMINATED (the patch edits the file);
//   - pytest file 05 test_00 seed 1: INCOMPLETE (the batch timed out);
//   - property seed 1401: PROPERTY.
//
// Two new tests: one passed 5 of 5, one 4 of 5.
func suiteSummary(sh suiteShape) *flakegate.Summary {
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	s := &flakegate.Summary{Verdict: flakegate.VerdictReject, Base: strings.Repeat("b", 40), Candidate: strings.Repeat("c", 40), Isolation: "bwrap"}
	add := func(r flakegate.Result) {
		r.RecordSHA256 = fmt.Sprintf("%064x", len(s.Results)+1)
		if r.Label != flakegate.Pass || r.Skipped {
			r.Record = ".flakegate/records/" + r.RecordSHA256[56:] + ".json"
			r.Reproduce = fmt.Sprintf("flakegate replay --order %s --record %s", r.Seed, r.Record)
		}
		if !r.Skipped {
			r.CandidateAttempts, r.BaseAttempts = 1, 1
		}
		s.Results = append(s.Results, r)
	}
	fail := func(r *flakegate.Result, out string) {
		r.Attempts = []flakegate.Attempt{
			{Side: "candidate", Index: 0, Result: "fail", ExitCode: 1, WallSeconds: 0.4, StartedAt: at, OutputTail: out},
			{Side: "base", Index: 0, Result: "pass", WallSeconds: 0.3, StartedAt: at},
		}
	}
	for p := range sh.goPackages {
		for i := range sh.goTests {
			for seed := 1; seed <= sh.seeds; seed++ {
				r := flakegate.Result{Suite: "./...", PropertyPath: fmt.Sprintf("pkg%02d/a_test.go", p), Name: fmt.Sprintf("TestA%03d", i),
					Seed: flakegate.Seed(fmt.Sprint(seed)), Label: flakegate.Pass, Seconds: 0.01, Isolation: "bwrap"}
				switch {
				case p == 3 && i == 5 && seed == 2:
					r.Label, r.Reason = flakegate.Property, "candidate failed 1 of 1 attempts; the same order passes on base"
					fail(&r, "--- FAIL: TestA005 (0.00s)\n    a_test.go:12: cache holds 3, want 4\n")
				case p == 7 && i == 1:
					r.Label, r.Freeze = flakegate.Scheduler, true
					fail(&r, "--- FAIL: TestA001 (0.20s)\n")
					r.Attempts = append(r.Attempts, flakegate.Attempt{Side: "candidate", Index: 1, Result: "pass", StartedAt: at})
					r.CandidateAttempts = 2
					r.FlakeOrigin, r.BaseProbeResults = flakegate.FlakeOriginBase, []string{"pass", "fail", "pass"}
					if seed == 1 {
						r.FlakeOrigin, r.BaseProbeResults = flakegate.FlakeOriginNew, []string{"pass", "pass", "pass"}
					}
				case p == 7 && i == 2 && seed == 3:
					r.Label, r.Skipped, r.RunsLeft, r.Owner = flakegate.Scheduler, true, intPtr(4), "alice@example.com"
					r.FrozenCandidate, r.Isolation = strings.Repeat("f", 40), ""
				}
				add(r)
			}
		}
	}
	for f := range sh.pyFiles {
		for i := range sh.pyTests {
			for seed := 1; seed <= sh.seeds; seed++ {
				r := flakegate.Result{Suite: "tests", PropertyPath: fmt.Sprintf("tests/test_m%02d.py", f), Name: fmt.Sprintf("test_%02d", i),
					Seed: flakegate.Seed(fmt.Sprint(seed)), Label: flakegate.Pass, Seconds: 0.02, Isolation: "bwrap"}
				switch {
				case f == 2 && i == 4:
					r.Label, r.Row = flakegate.Contaminated, 2
					r.Reason, r.AttemptsSkipped, r.CandidateAttempts = "the candidate diff edits tests/test_m02.py", "decided by the diff", 0
				case f == 5 && i == 0 && seed == 1:
					r.Label, r.Reason = flakegate.Incomplete, "the batch's candidate attempt timed out"
				}
				add(r)
				if r.Label == flakegate.Contaminated {
					s.Results[len(s.Results)-1].CandidateAttempts, s.Results[len(s.Results)-1].BaseAttempts = 0, 0
				}
			}
		}
	}
	for k := range sh.properties {
		r := flakegate.Result{PropertyPath: "tests/props/test_budget.py", Name: "test_budget", Seed: flakegate.Seed(fmt.Sprint(1400 + k)), Label: flakegate.Pass, Seconds: 1.5}
		if k == 1 {
			r.Label, r.Reason = flakegate.Property, "candidate failed 1 of 1 attempts; the same seed passes on base"
			fail(&r, "Falsifying example: test_budget(n=3)\n")
		}
		add(r)
	}
	s.NewTests = []flakegate.NewTest{
		{Suite: "./...", Path: "pkg01/new_test.go", Name: "TestNewCache", Runs: 5, Passed: 5},
		{Suite: "./...", Path: "pkg01/new_test.go", Name: "TestNewRace", Runs: 5, Passed: 4, Results: []string{"pass", "fail", "pass", "pass", "pass"}},
	}
	s.RejectFlakyNewTests = true
	return s
}

// twoThousand is the 2,000-triple summary of the golden files: 1,200 Go
// triples in 20 packages, 780 pytest triples in 10 files, 20 property
// triples.
var twoThousand = suiteShape{goPackages: 20, goTests: 20, pyFiles: 10, pyTests: 26, seeds: 3, properties: 20}

// sixThousand is 2,000 Go tests × 3 seeds, in 40 packages.
var sixThousand = suiteShape{goPackages: 40, goTests: 50, seeds: 3, properties: 4}

func TestSuiteShapes(t *testing.T) {
	if n := len(suiteSummary(twoThousand).Results); n != 2000 {
		t.Fatalf("twoThousand has %d triples", n)
	}
	if n := len(suiteSummary(sixThousand).Results); n != 6004 {
		t.Fatalf("sixThousand has %d triples", n)
	}
}

// TestSuiteMarkdownGolden: the Markdown summary of 2,000 triples counts
// per package or file and lists only the triples that did not pass.
func TestSuiteMarkdownGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := Markdown(&buf, suiteSummary(twoThousand)); err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, "suites.golden.md", buf.Bytes())
}

// TestSuiteJUnitGolden: the JUnit of 2,000 triples has a <testsuite> per
// package or file and a <testcase> per triple, the passes bare. The
// golden file keeps the first and last bare <testcase> of each run and
// counts the ones between (foldBareCases), so it stays small;
// TestSuiteJUnitModel checks that every triple has its case.
func TestSuiteJUnitGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := JUnit(&buf, suiteSummary(twoThousand)); err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, "suites.golden.xml", foldBareCases(buf.Bytes()))
}

// bareCase is a <testcase> line with nothing inside.
var bareCase = regexp.MustCompile(`^\s*<testcase name="[^"]*" classname="[^"]*" time="[0-9.]+"></testcase>$`)

// foldBareCases replaces the inside of each run of bare <testcase> lines
// by a comment that counts them.
func foldBareCases(xmlBytes []byte) []byte {
	lines := strings.Split(string(xmlBytes), "\n")
	var out []string
	for i := 0; i < len(lines); {
		j := i
		for j < len(lines) && bareCase.MatchString(lines[j]) {
			j++
		}
		if j-i > 2 {
			out = append(out, lines[i], fmt.Sprintf("    <!-- %d bare testcases folded by the test -->", j-i-2), lines[j-1])
			i = j
			continue
		}
		if j == i {
			j++
		}
		out = append(out, lines[i:j]...)
		i = j
	}
	return []byte(strings.Join(out, "\n"))
}

// TestSuiteJUnitModel reads the JUnit of 6,000 triples back: a
// <testcase> per triple, a <testsuite> per package, counts that add up,
// the failures where the summary has them, and the new tests.
func TestSuiteJUnitModel(t *testing.T) {
	s := suiteSummary(sixThousand)
	var buf bytes.Buffer
	if err := JUnit(&buf, s); err != nil {
		t.Fatal(err)
	}
	var doc junitSuites
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	cases, failures := 0, 0
	byName := map[string]junitSuite{}
	seen := map[string]bool{}
	for _, su := range doc.Suites {
		for _, c := range su.Cases {
			seen[c.Classname+" "+c.Name] = true
		}
		if len(su.Cases) != su.Tests {
			t.Errorf("suite %s: tests=%d but %d cases", su.Name, su.Tests, len(su.Cases))
		}
		cases += len(su.Cases)
		failures += su.Failures
		byName[su.Name] = su
	}
	if want := len(s.Results) + len(s.NewTests); cases != want || doc.Tests != want {
		t.Errorf("%d test cases, tests=%d; want %d (a case per triple and per new test)", cases, doc.Tests, want)
	}
	for i := range s.Results {
		r := &s.Results[i]
		if !seen[r.PropertyPath+" "+junitName(r)] {
			t.Fatalf("no test case for %s seed %s", r.ID(), r.Seed)
		}
	}
	// 40 packages, the property file, the new tests.
	if len(doc.Suites) != 42 {
		t.Errorf("%d testsuites, want 42", len(doc.Suites))
	}
	pkg3 := byName["pkg03"]
	if pkg3.Tests != 150 || pkg3.Failures != 1 {
		t.Errorf("pkg03: tests=%d failures=%d, want 150 and 1", pkg3.Tests, pkg3.Failures)
	}
	var suiteProp string
	for _, p := range pkg3.Properties {
		if p.Name == "flakegate.suite" {
			suiteProp = p.Value
		}
	}
	if suiteProp != "./..." {
		t.Errorf("pkg03 names suite %q, want ./...", suiteProp)
	}
	pkg7 := byName["pkg07"]
	if pkg7.Skipped != 1 || pkg7.Failures != 0 {
		t.Errorf("pkg07: skipped=%d failures=%d, want 1 and 0", pkg7.Skipped, pkg7.Failures)
	}
	flaky := 0
	for _, c := range pkg7.Cases {
		flaky += len(c.Flaky)
	}
	if flaky != 3 {
		t.Errorf("pkg07 has %d flakyFailures, want 3 (TestA001 on each seed)", flaky)
	}
	nt := byName["new tests of ./..."]
	if nt.Tests != 2 || nt.Failures != 1 || !strings.Contains(nt.Cases[1].Failure.Message, "new test TestNewRace: 4 of 5 passed") {
		t.Errorf("new tests suite: %+v", nt)
	}
	// Property triples, the PROPERTY suite triple, the new test.
	if failures != 3 || doc.Failures != 3 {
		t.Errorf("%d failures (root %d), want 3", failures, doc.Failures)
	}
	for _, c := range pkg3.Cases {
		if c.Failure == nil && c.SystemOut != nil {
			t.Fatalf("passed suite triple %s carries system-out; the passes are folded", c.Name)
		}
	}
}

// TestSuiteJUnitSchema validates the JUnit of both big summaries with
// xmllint against testdata/junit.xsd.
func TestSuiteJUnitSchema(t *testing.T) {
	xmllint, err := exec.LookPath("xmllint")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("xmllint is missing (Debian package libxml2-utils); CI must run this test")
		}
		t.Skip("xmllint not installed (apt-get install libxml2-utils)")
	}
	for name, sh := range map[string]suiteShape{"2000": twoThousand, "6000": sixThousand} {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := JUnit(&buf, suiteSummary(sh)); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "junit.xml")
			if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command(xmllint, "--noout", "--nonet", "--schema", filepath.Join("testdata", "junit.xsd"), path).CombinedOutput(); err != nil {
				t.Fatalf("xmllint rejects the output: %v\n%s", err, out)
			}
		})
	}
}

// TestSuiteHTMLPage: the page of the 2,000-triple summary names every
// group with its counts, shows the triples that did not pass, and holds
// every pass inside a closed group.
func TestSuiteHTMLPage(t *testing.T) {
	s := suiteSummary(twoThousand)
	var buf bytes.Buffer
	if err := SummaryHTML(&buf, s); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, want := range []string{
		`<details class="group" data-group="pkg03" open>`,
		`<details class="group" data-group="pkg00">`,
		`<details class="group" data-group="tests/test_m02.py" open>`,
		"18 packages where every triple passed",
		"new test <code>TestNewRace</code>: 4 of 5 passed",
		"cache holds 3, want 4",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if n := strings.Count(page, `<tr class="triple pass">`); n != 1990-19 {
		t.Errorf("%d suite pass rows, want %d", n, 1990-19)
	}
	if n := strings.Count(page, `<tr class="triple not-passed">`); n != 9 {
		t.Errorf("%d suite rows that did not pass, want 9", n)
	}
	if strings.Contains(page, "ZgotmplZ") {
		t.Error("the template refused a value (ZgotmplZ)")
	}
}

// TestSuiteAnnotations: a suite's test is one ::error for all its
// rejected seeds, a failed new test is one too, and the passes get none.
func TestSuiteAnnotations(t *testing.T) {
	var buf bytes.Buffer
	if err := GitHubAnnotations(&buf, suiteSummary(twoThousand)); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	errors, notices := strings.Count(out, "::error "), strings.Count(out, "::notice ")
	// The property's PROPERTY, TestA005, test_04 (3 seeds in one), test_00,
	// TestNewRace.
	if errors != 5 {
		t.Errorf("%d ::error lines, want 5:\n%s", errors, out)
	}
	// TestA001 on 3 seeds, TestA002's frozen skip.
	if notices != 4 {
		t.Errorf("%d ::notice lines, want 4:\n%s", notices, out)
	}
	for _, want := range []string{
		"::error file=tests/test_m02.py,title=flakegate CONTAMINATED::test_04 (suite tests) rejected on 3 order seeds%0Aseed 1: CONTAMINATED",
		"::error file=pkg01/new_test.go,title=flakegate new test failed::new test TestNewRace: 4 of 5 passed (pass, fail, pass, pass, pass) on the candidate (suite ./...); no base can replay a test the patch adds. reject_flaky_new_tests is on",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("annotations lack %q:\n%s", want, out)
		}
	}
}

// TestSuiteProgressBatch: a suite's batch line names the triples that
// did not pass and counts the passes; a property batch names every member.
func TestSuiteProgressBatch(t *testing.T) {
	s := suiteSummary(sixThousand)
	var batch []flakegate.Result
	for _, r := range s.Results {
		if r.PropertyPath == "pkg07/a_test.go" && r.Seed == "3" {
			batch = append(batch, r)
		}
	}
	var buf bytes.Buffer
	p := newProgress(&buf, false, fakeClock())
	p.Start(len(batch))
	p.BatchDone("go ./pkg07, seed 3", batch)
	p.Finish()
	line := strings.SplitN(buf.String(), "\n", 2)[0]
	want := "batch of 50 (go ./pkg07, seed 3) · 0.01s: SCHEDULER pkg07/a_test.go::TestA001, SCHEDULER skipped (frozen) pkg07/a_test.go::TestA002, 48 PASS"
	if !strings.Contains(line, want) {
		t.Errorf("batch line\n%s\nwant it to hold\n%s", line, want)
	}
	if p.done != 50 || p.labels[flakegate.Pass] != 48 {
		t.Errorf("done %d, PASS %d; want 50 and 48", p.done, p.labels[flakegate.Pass])
	}
}

// hostileSuiteSummary is a suite whose path, test file, test name,
// reason and output attack the reader, and a new test whose name and
// path do.
func hostileSuiteSummary() *flakegate.Summary {
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	suite := "./\x1b]2;green\x07|`x`</code>..."
	file := "pkg`|<img src=x>\x1b[8m/a_test.go"
	name := "Test|`x`<script>alert(1)</script>\n::error::forged"
	s := &flakegate.Summary{Verdict: "reject", Base: "b", Candidate: "c"}
	for seed := 1; seed <= 2; seed++ {
		s.Results = append(s.Results, flakegate.Result{Suite: suite, PropertyPath: file, Name: name, Seed: flakegate.Seed(fmt.Sprint(seed)),
			Label: flakegate.Property, Reason: "the last line is " + hostileTail, Reproduce: "flakegate replay --seed 1 " + hostileTail,
			Attempts: []flakegate.Attempt{{Side: "candidate", Result: "fail", ExitCode: 1, StartedAt: at, OutputTail: hostileTail}}})
		s.Results = append(s.Results, flakegate.Result{Suite: suite, PropertyPath: file, Name: "TestOK", Seed: flakegate.Seed(fmt.Sprint(seed)), Label: flakegate.Pass})
	}
	s.NewTests = []flakegate.NewTest{{Suite: suite, Path: file, Name: name, Runs: 5, Passed: 1}}
	return s
}

// TestSuiteReportsEscapeHostile writes every report of hostileSuiteSummary
// and checks that the attack stays inert text: no terminal control, no
// live markup, no forged annotation line, a JUnit file that parses.
func TestSuiteReportsEscapeHostile(t *testing.T) {
	s := hostileSuiteSummary()
	type testCase struct {
		name  string
		write func(*bytes.Buffer) error
		check func(t *testing.T, out string)
	}
	run := func(t *testing.T, tc testCase) {
		var buf bytes.Buffer
		if err := tc.write(&buf); err != nil {
			t.Fatal(err)
		}
		assertNoControls(t, buf.String())
		tc.check(t, buf.String())
	}
	for _, tc := range []testCase{
		{"markdown", func(b *bytes.Buffer) error { return Markdown(b, s) }, func(t *testing.T, out string) {
			outside, _ := splitFences(out)
			outside = stripCodeSpans(outside)
			for _, bad := range []string{"<script>", "</script>", "<img", "</code>", "<details open>"} {
				if live(outside, bad) {
					t.Errorf("%q live outside a code block:\n%s", bad, outside)
				}
			}
			for line := range strings.Lines(outside) {
				if strings.HasPrefix(line, "::") || strings.HasPrefix(line, "# Heading") {
					t.Errorf("a line of the input stands on its own: %q", line)
				}
			}
		}},
		{"html", func(b *bytes.Buffer) error { return SummaryHTML(b, s) }, func(t *testing.T, out string) {
			for _, bad := range []string{"<script>", "<img src=x", "</script><script>", "<details open>"} {
				if strings.Contains(out, bad) {
					t.Errorf("%q is live in the page", bad)
				}
			}
		}},
		{"junit", func(b *bytes.Buffer) error { return JUnit(b, s) }, func(t *testing.T, out string) {
			var doc junitSuites
			if err := xml.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatalf("the XML does not parse: %v", err)
			}
			if doc.Tests != 5 || doc.Failures != 3 {
				t.Errorf("tests=%d failures=%d, want 5 and 3", doc.Tests, doc.Failures)
			}
		}},
		{"github", func(b *bytes.Buffer) error { return GitHubAnnotations(b, s) }, func(t *testing.T, out string) {
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			if len(lines) != 2 {
				t.Fatalf("%d lines, want the test's one ::error and the new test's:\n%s", len(lines), out)
			}
			for _, l := range lines {
				if !strings.HasPrefix(l, "::error file=") {
					t.Errorf("line %q", l)
				}
			}
		}},
		{"progress", func(b *bytes.Buffer) error {
			p := NewProgress(b, false)
			p.Start(len(s.Results))
			p.BatchDone(hostileTail, s.Results)
			p.Finish()
			return nil
		}, func(t *testing.T, out string) {
			if n := strings.Count(out, "\n"); n != 2 {
				t.Errorf("%d lines, want the batch's and the tally:\n%s", n, out)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// stripCodeSpans drops the inline code spans of md: a run of n backticks
// to the next run of exactly n (a backslash-escaped backtick opens
// none). Markdown shows a code span's text as
// typed, so markup inside one is not live.
func stripCodeSpans(md string) string {
	var b strings.Builder
	for i := 0; i < len(md); {
		if md[i] == '\\' && i+1 < len(md) {
			b.WriteString(md[i : i+2]) // an escaped character opens no span
			i += 2
			continue
		}
		if md[i] != '`' {
			b.WriteByte(md[i])
			i++
			continue
		}
		n := 0
		for i+n < len(md) && md[i+n] == '`' {
			n++
		}
		fence := strings.Repeat("`", n)
		end := -1
		for j := i + n; j < len(md); {
			k := strings.Index(md[j:], fence)
			if k < 0 {
				break
			}
			at := j + k
			if (at+n >= len(md) || md[at+n] != '`') && md[at-1] != '`' {
				end = at
				break
			}
			j = at + 1
			for j < len(md) && md[j] == '`' {
				j++
			}
		}
		if end < 0 {
			b.WriteString(fence)
			i += n
			continue
		}
		i = end + n
	}
	return b.String()
}

// TestLedgerChartGroupsSuiteRecords: the ledger page charts a suite's
// records under their package, a property's under its file.
func TestLedgerChartGroupsSuiteRecords(t *testing.T) {
	ctx := context.Background()
	m := newMemStore()
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	put := func(path string, seed int, suite string, label flakegate.Label) {
		_, raw := makeRecord(t, path, seed, label, at, seed)
		if suite != "" {
			var rec map[string]any
			if err := json.Unmarshal(raw, &rec); err != nil {
				t.Fatal(err)
			}
			rec["suite"], rec["order"] = suite, seed
			raw, _ = json.Marshal(rec)
		}
		sha, err := flakegate.RecordSHA256(raw)
		if err != nil {
			t.Fatal(err)
		}
		m.PutRecord(ctx, sha, raw)
	}
	put("pkg/cache/a_test.go", 1, "./...", flakegate.Pass)
	put("pkg/cache/b_test.go", 2, "./...", flakegate.Property)
	put("tests/test_x.py", 3, "tests", flakegate.Pass)
	put("tests/props/test_p.py", 4, "", flakegate.Pass)
	d, err := LoadHTMLData(ctx, m, reportNow)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, p := range d.Properties {
		got[p.PropertyPath] = p.Total
	}
	want := map[string]int{"pkg/cache": 2, "tests/test_x.py": 1, "tests/props/test_p.py": 1}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("chart rows %v, want %v", got, want)
	}
}

// TestSuiteHTMLCapsAGroup: a group of more passes than htmlRowsMax lists
// htmlRowsMax of them and counts the rest.
func TestSuiteHTMLCapsAGroup(t *testing.T) {
	s := suiteSummary(suiteShape{goPackages: 1, goTests: htmlRowsMax/2 + 10, seeds: 2})
	var buf bytes.Buffer
	if err := SummaryHTML(&buf, s); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), `<tr class="triple pass">`); n != htmlRowsMax {
		t.Errorf("%d pass rows, want %d", n, htmlRowsMax)
	}
	if !strings.Contains(buf.String(), "20 more passes not listed") {
		t.Error("the page does not count the passes it leaves out")
	}
}

// TestSuiteMarkdownTables: every row of every table in the suites'
// Markdown has its header's number of cells, hostile names included (an
// unescaped pipe would add one).
func TestSuiteMarkdownTables(t *testing.T) {
	for name, s := range map[string]*flakegate.Summary{"2000": suiteSummary(twoThousand), "hostile": hostileSuiteSummary()} {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Markdown(&buf, s); err != nil {
				t.Fatal(err)
			}
			cells, rows := 0, 0
			for _, line := range strings.Split(buf.String(), "\n") {
				if !strings.HasPrefix(line, "|") {
					cells = 0
					continue
				}
				rows++
				n := strings.Count(line, "|") - strings.Count(line, `\|`)
				if cells == 0 {
					cells = n
				} else if n != cells {
					t.Errorf("row has %d cell borders, header %d: %s", n, cells, line)
				}
			}
			if rows == 0 {
				t.Fatal("no table rows")
			}
		})
	}
}
