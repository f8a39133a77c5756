package report

import (
	"bufio"
	"bytes"
	"strings"
	"testing"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/internal/golden"
)

func TestGitHubAnnotationsGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := GitHubAnnotations(&buf, loadSummary(t, "summary.json")); err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, "annotations.golden.txt", buf.Bytes())
}

// annotation is a workflow command read back the way the runner reads it.
type annotation struct {
	kind  string
	props map[string]string
	msg   string
}

// parseAnnotation splits "::kind k=v,k=v::data" and undoes the escapes,
// as written down in GitHub's workflow command documentation.
func parseAnnotation(t *testing.T, line string) annotation {
	t.Helper()
	rest, ok := strings.CutPrefix(line, "::")
	if !ok {
		t.Fatalf("not a command: %q", line)
	}
	head, data, ok := strings.Cut(rest, "::")
	if !ok {
		t.Fatalf("no data separator: %q", line)
	}
	kind, props, _ := strings.Cut(head, " ")
	a := annotation{kind: kind, props: map[string]string{}, msg: unescapeWorkflow(data)}
	for _, kv := range strings.Split(props, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			t.Fatalf("property without '=' in %q", line)
		}
		a.props[k] = unescapeWorkflow(v)
	}
	return a
}

func unescapeWorkflow(s string) string {
	return strings.NewReplacer("%0D", "\r", "%0A", "\n", "%3A", ":", "%2C", ",", "%25", "%").Replace(s)
}

func TestGitHubAnnotations(t *testing.T) {
	type want struct {
		kind, file, title string
		msgHas            []string
	}
	type testCase struct {
		name string
		s    *flakegate.Summary
		want []want
	}
	run := func(t *testing.T, tc testCase) {
		var buf bytes.Buffer
		if err := GitHubAnnotations(&buf, tc.s); err != nil {
			t.Fatal(err)
		}
		var got []annotation
		sc := bufio.NewScanner(&buf)
		for sc.Scan() {
			got = append(got, parseAnnotation(t, sc.Text()))
		}
		if len(got) != len(tc.want) {
			t.Fatalf("%d annotations, want %d:\n%s", len(got), len(tc.want), buf.String())
		}
		for i, w := range tc.want {
			g := got[i]
			if g.kind != w.kind || g.props["file"] != w.file || g.props["title"] != w.title {
				t.Errorf("annotation %d: %s file=%q title=%q, want %s file=%q title=%q", i, g.kind, g.props["file"], g.props["title"], w.kind, w.file, w.title)
			}
			for _, m := range w.msgHas {
				if !strings.Contains(g.msg, m) {
					t.Errorf("annotation %d: message %q lacks %q", i, g.msg, m)
				}
			}
		}
	}
	for _, tc := range []testCase{
		{
			name: "fixture",
			s:    loadSummary(t, "all-labels.json"),
			want: []want{
				{"notice", "tests/props/test_retry_budget.py", "flakegate SCHEDULER", []string{"seed 1401", "fail → fail → pass; base pass", "flakegate freeze grant --record .git/flakegate/out/records/"}},
				{"error", "tests/props/test_retry_budget.py", "flakegate PROPERTY", []string{"seed 1402: candidate failed and the base seed failed too", "\nreproduce: flakegate replay"}},
				{"notice", "tests/props/test_retry_budget.py", "flakegate SCHEDULER skipped (frozen)", []string{"seed 1403 skipped (frozen)", "alice@example.com", "3 runs left"}},
				{"error", "tests/props/test_parser.py", "flakegate CONTAMINATED", []string{"seed nightly-3"}},
				{"error", "tests/props/test_parser.py", "flakegate FIXTURE", []string{"seed 7"}},
				{"error", "tests/props/test_cache.py", "flakegate BUDGET", []string{"seed 11", "attempts: timeout"}},
				{"error", "tests/props/test_cache.py", "flakegate INCOMPLETE", []string{"seed 12", `"error"`}},
			},
		},
		{
			name: "escapes in path and message",
			s: &flakegate.Summary{Results: []flakegate.Result{{
				PropertyPath: "tests/a,b:c%d.py", Seed: "3", Label: flakegate.Budget,
				Reason: "100% over, a:b\r\nline two",
			}}},
			// termsafe turns the CRLF into a newline before the escapes.
			want: []want{{"error", "tests/a,b:c%d.py", "flakegate BUDGET", []string{"seed 3: 100% over, a:b\nline two"}}},
		},
		{
			name: "passes only",
			s:    &flakegate.Summary{Results: []flakegate.Result{{PropertyPath: "p.py", Seed: "1", Label: flakegate.Pass}}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func TestEscapeWorkflow(t *testing.T) {
	type testCase struct{ in, data, prop string }
	run := func(t *testing.T, tc testCase) {
		if got := escapeData(tc.in); got != tc.data {
			t.Errorf("escapeData(%q) = %q, want %q", tc.in, got, tc.data)
		}
		if got := escapeProperty(tc.in); got != tc.prop {
			t.Errorf("escapeProperty(%q) = %q, want %q", tc.in, got, tc.prop)
		}
	}
	for _, tc := range []testCase{
		{"plain", "plain", "plain"},
		{"50%", "50%25", "50%25"},
		{"%0A", "%250A", "%250A"},
		{"a\r\nb", "a%0D%0Ab", "a%0D%0Ab"},
		{"k:v,w", "k:v,w", "k%3Av%2Cw"},
	} {
		t.Run(tc.in, func(t *testing.T) { run(t, tc) })
	}
}
