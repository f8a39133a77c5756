package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/internal/golden"
)

func TestMarkdownGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := Markdown(&buf, loadSummary(t, "summary.json")); err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, "summary.golden.md", buf.Bytes())
}

func TestMarkdownSections(t *testing.T) {
	type testCase struct {
		name    string
		s       *flakegate.Summary
		want    []string
		notWant []string
	}
	run := func(t *testing.T, tc testCase) {
		var buf bytes.Buffer
		if err := Markdown(&buf, tc.s); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("summary lacks %q:\n%s", w, out)
			}
		}
		for _, w := range tc.notWant {
			if strings.Contains(out, w) {
				t.Errorf("summary has %q:\n%s", w, out)
			}
		}
		// Every table row has the header's number of cells: an unescaped
		// pipe would add one.
		cells := 0
		for _, line := range strings.Split(out, "\n") {
			if !strings.HasPrefix(line, "|") {
				cells = 0
				continue
			}
			n := strings.Count(line, "|") - strings.Count(line, `\|`)
			if cells == 0 {
				cells = n
			} else if n != cells {
				t.Errorf("row has %d cell borders, header %d: %s", n, cells, line)
			}
		}
	}
	many := &flakegate.Summary{Verdict: "pass"}
	for i := range MaxMarkdownRows + 7 {
		many.Results = append(many.Results, flakegate.Result{PropertyPath: "p.py", Seed: flakegate.Seed(fmt.Sprint(i)), Label: flakegate.Pass})
	}
	for _, tc := range []testCase{
		{
			name:    "all pass",
			s:       &flakegate.Summary{Verdict: "pass", Base: "abc", Candidate: "def", Results: []flakegate.Result{{PropertyPath: "p.py", Seed: "1", Label: flakegate.Pass, Seconds: 0.5}}},
			want:    []string{"## ✅ flakegate check: pass", "| ✅ PASS | 1 |", "<details><summary>Passed (1)</summary>"},
			notWant: []string{"### Rejects", "SCHEDULER"},
		},
		{
			name: "pipes and markup in the text",
			s: &flakegate.Summary{Verdict: "reject", Results: []flakegate.Result{{
				PropertyPath: "a|b/`x`.py", Seed: `"s-1"`, Label: flakegate.Property,
				Reason: "got <script> | *bold* [link](x)\nnext line", Reproduce: "cmd | tee",
			}}},
			want: []string{"`` a\\|b/`x`.py ``", `got \<script\> \| \*bold\* \[link\](x) next line`, "cmd | tee"},
		},
		{
			name:    "capped table",
			s:       many,
			want:    []string{fmt.Sprintf("Passed (%d)", MaxMarkdownRows+7), "… and 7 more"},
			notWant: []string{fmt.Sprintf("| `p.py` | %d |", MaxMarkdownRows)},
		},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func TestMDCode(t *testing.T) {
	type testCase struct{ in, want string }
	run := func(t *testing.T, tc testCase) {
		if got := mdCode(tc.in); got != tc.want {
			t.Errorf("mdCode(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	for _, tc := range []testCase{
		{"tests/a.py", "`tests/a.py`"},
		{"a`b", "`` a`b ``"},
		{"a``b`", "``` a``b` ```"},
		{"x|y", "`x\\|y`"},
		{"two\nlines", "`two lines`"},
	} {
		t.Run(tc.in, func(t *testing.T) { run(t, tc) })
	}
}
