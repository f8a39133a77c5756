package report

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/flakegate/flakegate"
)

// hostileTail is output written to attack whoever reads a report: a
// workflow command, an end of script, an end of CDATA, a Markdown fence
// with a heading and raw HTML after it, a conceal (ESC[8m), an OSC 52
// clipboard write, an OSC 2 title, a bare CR, a fake verdict, and C1
// controls as a raw byte and in UTF-8.
const hostileTail = "::error file=src/x.py::forged\n" +
	"</script><script>alert(1)</script>\n" +
	"]]><injected/>\n" +
	"```\n# Heading from the tail\n<details open><img src=x onerror=alert(1)>\n" +
	"\x1b[8mhidden\x1b[0m\n" +
	"\x1b]52;c;aGk=\x07\x1b]2;all green\x07\rverdict: pass\n" +
	"\x9b2J \u009d0;t\x07\n"

// hostileSummary is a reject whose reason and failing attempt carry
// hostileTail.
func hostileSummary() *flakegate.Summary {
	at := time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)
	return &flakegate.Summary{Verdict: "reject", Base: "b", Candidate: "c", Results: []flakegate.Result{{
		PropertyPath: "tests/p.py", Seed: "1", Label: flakegate.Property,
		Reason:    "the last line is " + hostileTail,
		Reproduce: "flakegate replay --repo . --rev c --property tests/p.py --seed 1",
		Attempts: []flakegate.Attempt{
			{Side: "candidate", Result: "fail", ExitCode: 1, StartedAt: at, OutputTail: hostileTail},
			{Side: "base", Result: "fail", ExitCode: 1, StartedAt: at, OutputTail: hostileTail},
		},
	}}}
}

// assertNoControls fails if out holds what a terminal acts on: ESC, a
// CR, a C1 control (U+0080–U+009F), invalid UTF-8. In valid UTF-8 a 0x9b
// or 0x9d byte is a continuation byte ("❌" is e2 9d 8c), never a C1.
func assertNoControls(t *testing.T, out string) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Errorf("invalid UTF-8: %q", out)
	}
	for i, r := range out {
		if r == 0x1b || r == '\r' || r >= 0x80 && r <= 0x9f {
			t.Errorf("control %U at %d: %q", r, i, out[max(0, i-20):min(len(out), i+20)])
			return
		}
	}
}

// live reports whether markup occurs in md unescaped: not after a
// backslash (mdText's escape).
func live(md, markup string) bool {
	for i := 0; ; {
		j := strings.Index(md[i:], markup)
		if j < 0 {
			return false
		}
		if i+j == 0 || md[i+j-1] != '\\' {
			return true
		}
		i += j + 1
	}
}

// TestReportsEscapeHostileTail writes every report of a reject whose
// output and reason attack the reader, and checks that each keeps the
// attack inert and visible.
func TestReportsEscapeHostileTail(t *testing.T) {
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
		out := buf.String()
		assertNoControls(t, out)
		if !strings.Contains(out, `\x1b]52;c;aGk=\x07`) && !strings.Contains(out, `\\x1b]52;c;aGk=\\x07`) {
			t.Errorf("the OSC 52 write is not shown as text:\n%s", out)
		}
		tc.check(t, out)
	}
	for _, tc := range []testCase{
		{
			name:  "markdown",
			write: func(b *bytes.Buffer) error { return Markdown(b, hostileSummary()) },
			check: func(t *testing.T, out string) {
				// Outside the fenced blocks nothing of the tail is left raw.
				outside, fenced := splitFences(out)
				for _, bad := range []string{"</script>", "<script>", "<img", "<injected", "<details open>"} {
					if live(outside, bad) {
						t.Errorf("%q live outside a code block:\n%s", bad, outside)
					}
				}
				for line := range strings.Lines(outside) {
					if strings.HasPrefix(line, "# Heading") || strings.HasPrefix(line, "::") {
						t.Errorf("a line of the tail stands on its own outside a code block: %q", line)
					}
				}
				if !strings.Contains(fenced, "# Heading from the tail") || !strings.Contains(fenced, `\x1b[8mhidden`) {
					t.Errorf("the tail's fence closed the code block early:\n%s", out)
				}
			},
		},
		{
			name:  "github annotations",
			write: func(b *bytes.Buffer) error { return GitHubAnnotations(b, hostileSummary()) },
			check: func(t *testing.T, out string) {
				if n := strings.Count(out, "\n"); n != 1 {
					t.Fatalf("%d lines, want the one annotation:\n%s", n, out)
				}
				a := parseAnnotation(t, strings.TrimSuffix(out, "\n"))
				if a.kind != "error" || a.props["file"] != "tests/p.py" || !strings.Contains(a.msg, "the last line is ::error file=src/x.py::forged\n") {
					t.Errorf("annotation %+v", a)
				}
			},
		},
		{
			name:  "junit",
			write: func(b *bytes.Buffer) error { return JUnit(b, hostileSummary()) },
			check: func(t *testing.T, out string) {
				var doc xTestsuites
				if err := xml.Unmarshal([]byte(out), &doc); err != nil {
					t.Fatalf("the XML does not parse: %v\n%s", err, out)
				}
				dec := xml.NewDecoder(strings.NewReader(out))
				for {
					tok, err := dec.Token()
					if err != nil {
						break
					}
					if se, ok := tok.(xml.StartElement); ok && (se.Name.Local == "injected" || se.Name.Local == "script" || se.Name.Local == "img") {
						t.Errorf("markup from the tail is live in the XML: <%s>", se.Name.Local)
					}
				}
				c := doc.Suites[0].Testcases[0]
				if c.Failure == nil || !strings.Contains(c.Failure.Text, "]]><injected/>") || !strings.Contains(c.Failure.Text, `\x9b2J \u009d0;t\x07`) {
					t.Errorf("the failure body does not show the tail as text: %+v", c.Failure)
				}
			},
		},
		{
			name: "html",
			write: func(b *bytes.Buffer) error {
				d, err := LoadHTMLData(context.Background(), hostileStore(t), reportNow)
				if err != nil {
					return err
				}
				if len(d.Rejects) != 1 || !strings.Contains(d.Rejects[0].Output, `\x1b[8mhidden`) {
					t.Fatalf("rejects: %+v", d.Rejects)
				}
				return HTML(b, d)
			},
			check: func(t *testing.T, out string) {
				for _, bad := range []string{"</script><script>", "<img src=x", "<injected", "<details open>"} {
					if strings.Contains(out, bad) {
						t.Errorf("%q is live in the page", bad)
					}
				}
				if !strings.Contains(out, "&lt;/script&gt;") {
					t.Errorf("the page does not show the tail's </script> as text")
				}
			},
		},
		{
			name: "progress",
			write: func(b *bytes.Buffer) error {
				p := NewProgress(b, false)
				p.Note("note", hostileTail)
				p.Start(1)
				p.Done(hostileSummary().Results[0])
				p.Finish()
				return nil
			},
			check: func(t *testing.T, out string) {
				sc := bufio.NewScanner(strings.NewReader(out))
				n := 0
				for sc.Scan() {
					n++
					if l := sc.Text(); strings.HasPrefix(l, "verdict:") || strings.HasPrefix(l, "::") || strings.HasPrefix(l, "</script>") {
						t.Errorf("a line of the tail stands on its own: %q", l)
					}
				}
				if n != 3 {
					t.Errorf("%d lines, want a note, a result and the tally:\n%s", n, out)
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// hostileStore holds one reject record whose attempts carry hostileTail.
func hostileStore(t *testing.T) *memStore {
	t.Helper()
	ctx := context.Background()
	m := newMemStore()
	_, raw := makeRecord(t, "tests/p.py", 1, flakegate.Property, time.Date(2026, 11, 29, 1, 0, 0, 0, time.UTC), 1)
	var rec map[string]any
	if err := json.Unmarshal(raw, &rec); err != nil {
		t.Fatal(err)
	}
	rec["attempts"] = hostileSummary().Results[0].Attempts
	raw, _ = json.Marshal(rec)
	sha, err := flakegate.RecordSHA256(raw)
	if err != nil {
		t.Fatal(err)
	}
	m.PutRecord(ctx, sha, raw)
	return m
}

// splitFences returns the Markdown outside fenced code blocks and inside
// them. A block opened by a fence of n backticks closes at a line of at
// least n backticks and nothing else.
func splitFences(md string) (outside, fenced string) {
	var out, in strings.Builder
	fence := ""
	for line := range strings.Lines(md) {
		bare := strings.TrimRight(line, "\n")
		switch {
		case fence == "" && strings.HasPrefix(bare, "```"):
			fence = bare[:len(bare)-len(strings.TrimLeft(bare, "`"))]
		case fence != "" && strings.Trim(bare, "`") == "" && len(bare) >= len(fence):
			fence = ""
		case fence != "":
			in.WriteString(line)
		default:
			out.WriteString(line)
		}
	}
	return out.String(), in.String()
}
