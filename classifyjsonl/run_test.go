package classifyjsonl_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/classifyjsonl"
)

// goodRecord is a SCHEDULER record, the listing's own first example.
const goodRecord = `{"run_id": "r1", "seed": 1402, "property_path": "tests/props/test_retry_budget.py", ` +
	`"property_sha256": "pppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp", ` +
	`"fixture_sha256": "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff", ` +
	`"base_fixture_sha256": "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff", ` +
	`"diff_paths": ["src/retry.py"], "candidate_result": "fail", "base_seed_result": "pass", ` +
	`"retry_results": ["pass"], "retry_cap": 2, "budget_ok": true, "transcript_complete": true}`

// withMember returns goodRecord with one more member, written as is.
func withMember(member string) []byte {
	return []byte(goodRecord[:len(goodRecord)-1] + ", " + member + "}")
}

// vector is the part of a line of testdata/vectors/vectors.jsonl these
// tests read (the root package's tests read all of it).
type vector struct {
	Name        string  `json:"name"`
	Input       *string `json:"input"`
	InputBase64 string  `json:"input_base64"`
	Expect      struct {
		Label        flakegate.Label `json:"label"`
		Freeze       bool            `json:"freeze"`
		RecordSHA256 *string         `json:"record_sha256"`
	} `json:"expect"`
}

func (v vector) raw(tb testing.TB) []byte {
	if v.Input != nil {
		return []byte(*v.Input)
	}
	b, err := base64.StdEncoding.DecodeString(v.InputBase64)
	if err != nil {
		tb.Fatalf("vector %s: input_base64: %v", v.Name, err)
	}
	return b
}

func loadVectors(tb testing.TB) []vector {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join("..", "testdata", "vectors", "vectors.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	var out []vector
	for i, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
		var v vector
		if err := json.Unmarshal(line, &v); err != nil {
			tb.Fatalf("vectors.jsonl line %d: %v", i+1, err)
		}
		out = append(out, v)
	}
	return out
}

func equalPtr(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// TestVectorsJSONL streams every one-line vector through Run,
// many times over so the input spans several batches, and wants each
// decision in input order.
func TestVectorsJSONL(t *testing.T) {
	var lines [][]byte
	var want []vector
	for _, v := range loadVectors(t) {
		raw := v.raw(t)
		if len(raw) == 0 || bytes.ContainsAny(raw, "\r\n") {
			continue
		}
		lines = append(lines, raw)
		want = append(want, v)
	}
	const copies = 40
	var in bytes.Buffer
	for range copies {
		for _, l := range lines {
			in.Write(l)
			in.WriteByte('\n')
		}
	}
	var out bytes.Buffer
	var seen []flakegate.Label
	if err := classifyjsonl.Run(context.Background(), &in, &out, func(l flakegate.Label) { seen = append(seen, l) }); err != nil {
		t.Fatal(err)
	}
	got := bytes.Split(bytes.TrimSuffix(out.Bytes(), []byte("\n")), []byte("\n"))
	if len(got) != copies*len(lines) {
		t.Fatalf("%d decisions for %d lines", len(got), copies*len(lines))
	}
	if len(seen) != len(got) {
		t.Errorf("onLabel saw %d labels for %d decisions", len(seen), len(got))
	}
	bad := 0
	for i, line := range got {
		v := want[i%len(want)]
		var d struct {
			Label        flakegate.Label `json:"label"`
			Freeze       bool            `json:"freeze"`
			RecordSHA256 *string         `json:"record_sha256"`
		}
		if err := json.Unmarshal(line, &d); err != nil {
			t.Fatalf("line %d: %q: %v", i+1, line, err)
		}
		if d.Label != v.Expect.Label || d.Freeze != v.Expect.Freeze || !equalPtr(d.RecordSHA256, v.Expect.RecordSHA256) {
			if bad++; bad <= 10 {
				t.Errorf("line %d (%s): got %.200s", i+1, v.Name, line)
			}
		}
		if i < len(seen) && seen[i] != d.Label {
			t.Fatalf("line %d: onLabel saw %s, output says %s", i+1, seen[i], d.Label)
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d decisions differ from the vectors", bad, len(got))
	}
}

// TestRunLines: line endings and the last line.
func TestRunLines(t *testing.T) {
	const s, i = flakegate.Scheduler, flakegate.Incomplete
	type testCase struct {
		name  string
		input string
		want  []flakegate.Label
	}
	tests := []testCase{
		{"empty input", "", nil},
		{"one line, no final newline", goodRecord, []flakegate.Label{s}},
		{"one line", goodRecord + "\n", []flakegate.Label{s}},
		{"CRLF", goodRecord + "\r\n" + goodRecord + "\r\n", []flakegate.Label{s, s}},
		{"blank line between", goodRecord + "\n\n" + goodRecord + "\n", []flakegate.Label{s, i, s}},
		{"last line cut", goodRecord + "\n" + goodRecord[:30], []flakegate.Label{s, i}},
		{"a 20 MB last line without newline", goodRecord + "\n" + strings.Repeat("x", 20<<20), []flakegate.Label{s, i}},
		{"a 20 MB first line", strings.Repeat("x", 20<<20) + "\n" + goodRecord + "\n", []flakegate.Label{i, s}},
	}
	run := func(t *testing.T, tc testCase) {
		var out bytes.Buffer
		if err := classifyjsonl.Run(context.Background(), strings.NewReader(tc.input), &out, nil); err != nil {
			t.Fatal(err)
		}
		var got []flakegate.Label
		for _, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
			if line == "" {
				continue
			}
			var d struct {
				Label flakegate.Label `json:"label"`
			}
			if err := json.Unmarshal([]byte(line), &d); err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			got = append(got, d.Label)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("labels %v, want %v", got, tc.want)
		}
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

type failingReader struct {
	data []byte
	err  error
}

func (r *failingReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

type failingWriter struct{ err error }

func (w failingWriter) Write(p []byte) (int, error) { return 0, w.err }

// TestRunErrors: a read error, a write error and a cancelled
// context come back as errors, without a hang.
func TestRunErrors(t *testing.T) {
	boom := errors.New("boom")
	many := strings.Repeat(goodRecord+"\n", 5000)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	type testCase struct {
		name string
		ctx  context.Context
		r    io.Reader
		w    io.Writer
		want error
	}
	tests := []testCase{
		{"read error", context.Background(), &failingReader{data: []byte(many), err: boom}, io.Discard, boom},
		{"write error", context.Background(), strings.NewReader(many), failingWriter{boom}, boom},
		{"cancelled", cancelled, strings.NewReader(many), io.Discard, context.Canceled},
	}
	run := func(t *testing.T, tc testCase) {
		err := classifyjsonl.Run(tc.ctx, tc.r, tc.w, nil)
		if !errors.Is(err, tc.want) {
			t.Errorf("error %v, want %v", err, tc.want)
		}
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestRunShortLineReason: a short line is never reported as
// longer than the limit, whatever its bytes.
func TestRunShortLineReason(t *testing.T) {
	for _, line := range []string{"\x00too-long", "\x00", "too-long"} {
		var out bytes.Buffer
		if err := classifyjsonl.Run(context.Background(), strings.NewReader(line+"\n"), &out, nil); err != nil {
			t.Fatal(err)
		}
		var d struct {
			Label  flakegate.Label `json:"label"`
			Reason string          `json:"reason"`
		}
		if err := json.Unmarshal(out.Bytes(), &d); err != nil {
			t.Fatalf("%q: %v", out.String(), err)
		}
		if d.Label != flakegate.Incomplete || strings.Contains(d.Reason, "longer than") {
			t.Errorf("line %q (%d bytes): %s %q", line, len(line), d.Label, d.Reason)
		}
	}
}

// TestBadInputJSONL feeds bad lines between good ones: each bad line is
// INCOMPLETE, the good lines around it still classify, order is kept.
func TestBadInputJSONL(t *testing.T) {
	type testCase struct {
		name string
		line []byte // one line, no newline inside
	}
	tests := []testCase{
		{"empty line", nil},
		{"truncated JSON", []byte(goodRecord[:40])},
		{"a JSON array", []byte("[1,2]")},
		{"a UTF-8 BOM", append([]byte("\xEF\xBB\xBF"), goodRecord...)},
		{"invalid UTF-8", withMember("\"x\": \"\xff\"")},
		{"duplicate keys", withMember(`"seed": 1403`)},
		{"NaN", withMember(`"x": NaN`)},
		{"1e999", withMember(`"x": 1e999`)},
		{"a lone surrogate escape", withMember(`"x": "\ud800"`)},
		{"10,000-deep nesting", withMember(`"x": ` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000))},
		{"a 50 MB line", withMember(`"x": "` + strings.Repeat("a", 50<<20) + `"`)},
		{"a 20 MB line of newline-free garbage", bytes.Repeat([]byte("x"), 20<<20)},
	}
	run := func(t *testing.T, tc testCase) {
		var in bytes.Buffer
		for _, l := range [][]byte{[]byte(goodRecord), tc.line, []byte(goodRecord)} {
			in.Write(l)
			in.WriteByte('\n')
		}
		var out bytes.Buffer
		if err := classifyjsonl.Run(context.Background(), &in, &out, nil); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		want := []flakegate.Label{flakegate.Scheduler, flakegate.Incomplete, flakegate.Scheduler}
		if len(lines) != len(want) {
			t.Fatalf("%d decisions, want %d: %.500s", len(lines), len(want), out.String())
		}
		for i, line := range lines {
			var d struct {
				Label  flakegate.Label `json:"label"`
				Freeze bool            `json:"freeze"`
				Reason string          `json:"reason"`
			}
			if err := json.Unmarshal([]byte(line), &d); err != nil {
				t.Fatalf("line %d: %v: %.200s", i+1, err, line)
			}
			if d.Label != want[i] || d.Freeze != (want[i] == flakegate.Scheduler) {
				t.Errorf("line %d: %s freeze=%v, want %s", i+1, d.Label, d.Freeze, want[i])
			}
			if d.Label == flakegate.Incomplete && d.Reason == "" {
				t.Errorf("line %d: INCOMPLETE without a reason", i+1)
			}
		}
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// FuzzRun: a line's decision through Run, whose workers reuse one
// Classifier across lines (remembered key sequences, buffer reuse), is the
// decision flakegate.ClassifyBytes gives that line alone.
func FuzzRun(f *testing.F) {
	long := func(extra string) string {
		var b strings.Builder
		b.WriteByte('{')
		for i := 0; i < 20; i++ {
			fmt.Fprintf(&b, `"k%02d":%d,`, i, i)
		}
		b.WriteString(extra)
		b.WriteString(`"z":"\u00e9"}`)
		return b.String()
	}
	f.Add(long("") + "\n" + long(`"k03":1,`) + "\n" + long(`"k99":[1.5,"a"],`) + "\n")
	f.Add(goodRecord + "\n" + goodRecord + "\r\n\n{\"a\":1,\"a\":2}")
	f.Add(long(`"q":{"k00":1,"k00":2},`) + "\n" + long(""))
	f.Fuzz(func(t *testing.T, in string) {
		var out bytes.Buffer
		if err := classifyjsonl.Run(context.Background(), strings.NewReader(in), &out, nil); err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		lines := strings.Split(in, "\n")
		if in == "" || strings.HasSuffix(in, "\n") {
			lines = lines[:len(lines)-1]
		}
		for _, line := range lines {
			if len(line) > flakegate.MaxRecordBytes {
				t.Skip("line too long for this check")
			}
			line = strings.TrimSuffix(line, "\r")
			d := flakegate.ClassifyBytes([]byte(line))
			if line == "" {
				d = flakegate.Classify(flakegate.UnreadableRecord(errors.New("empty line")))
			}
			d.AppendJSON(&want)
			want.WriteByte('\n')
		}
		if out.String() != want.String() {
			t.Fatalf("input %q:\nRun          %s\nline by line %s", in, out.String(), want.String())
		}
	})
}
