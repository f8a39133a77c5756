package flakegate_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flakegate/flakegate"
)

// vector is one line of testdata/vectors/vectors.jsonl, written by
// testdata/vectors/gen.py from the spec's listing.
type vector struct {
	Name        string  `json:"name"`
	Input       *string `json:"input"`
	InputBase64 string  `json:"input_base64"`
	Listing     struct {
		Error        string  `json:"error"`
		Label        string  `json:"label"`
		Freeze       bool    `json:"freeze"`
		RecordSHA256 *string `json:"record_sha256"`
	} `json:"listing"`
	Expect struct {
		Label        flakegate.Label `json:"label"`
		Freeze       bool            `json:"freeze"`
		RecordSHA256 *string         `json:"record_sha256"`
		Missing      []string        `json:"missing"`
	} `json:"expect"`
	Deviation string `json:"deviation"`
}

// raw returns the record bytes of the vector.
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
	data, err := os.ReadFile(filepath.Join("testdata", "vectors", "vectors.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	var out []vector
	for i, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
		var v vector
		if err := json.Unmarshal(line, &v); err != nil {
			tb.Fatalf("vectors.jsonl line %d: %v", i+1, err)
		}
		if v.Input == nil && v.InputBase64 == "" {
			tb.Fatalf("vectors.jsonl line %d (%s): no input", i+1, v.Name)
		}
		out = append(out, v)
	}
	return out
}

func TestVectors(t *testing.T) {
	run := func(t *testing.T, v vector) {
		raw := v.raw(t)
		d := flakegate.ClassifyBytes(raw)
		if d.Label != v.Expect.Label || d.Freeze != v.Expect.Freeze {
			t.Errorf("got %s freeze=%v, want %s freeze=%v (row %d: %s)", d.Label, d.Freeze, v.Expect.Label, v.Expect.Freeze, d.Row, d.Reason)
		}
		wantSHA := ""
		if v.Expect.RecordSHA256 != nil {
			wantSHA = *v.Expect.RecordSHA256
		}
		if d.RecordSHA256 != wantSHA {
			t.Errorf("record_sha256 %q, want %q", d.RecordSHA256, wantSHA)
		}
		sum, err := flakegate.RecordSHA256(raw)
		if sum != wantSHA || (err == nil) != (wantSHA != "") {
			t.Errorf("RecordSHA256 = %q, %v; want %q", sum, err, wantSHA)
		}
		if v.Expect.Missing != nil && !slices.Equal(d.Missing, v.Expect.Missing) {
			t.Errorf("missing %q, want %q", d.Missing, v.Expect.Missing)
		}
		if d.Label == flakegate.Incomplete && d.Reason == "" {
			t.Errorf("INCOMPLETE without a reason")
		}
		// Never a PASS or a freeze that the listing would not give.
		if d.Label == flakegate.Pass && v.Listing.Label != "PASS" {
			t.Errorf("PASS where the listing gives %s%s", v.Listing.Label, v.Listing.Error)
		}
		if d.Freeze && !v.Listing.Freeze {
			t.Errorf("freeze where the listing gives %s%s", v.Listing.Label, v.Listing.Error)
		}
		if t.Failed() {
			t.Logf("input: %.300q", raw)
			if v.Deviation != "" {
				t.Logf("deviation from the listing: %s", v.Deviation)
			}
		}
	}
	for _, v := range loadVectors(t) {
		t.Run(v.Name, func(t *testing.T) { run(t, v) })
	}
}

// TestVectorsCover keeps the vector file honest: enough cases, every label,
// and the listing's self-check records in it.
func TestVectorsCover(t *testing.T) {
	vs := loadVectors(t)
	if len(vs) < 80 {
		t.Errorf("%d vectors, want at least 80", len(vs))
	}
	labels := map[flakegate.Label]int{}
	selfChecks := 0
	for _, v := range vs {
		labels[v.Expect.Label]++
		if strings.HasPrefix(v.Name, "selfcheck/") {
			selfChecks++
		}
		if v.Deviation == "" && v.Listing.Error == "" && string(v.Expect.Label) != v.Listing.Label {
			t.Errorf("%s: expect %s differs from the listing's %s without a deviation", v.Name, v.Expect.Label, v.Listing.Label)
		}
	}
	for _, l := range flakegate.Labels {
		if labels[l] == 0 {
			t.Errorf("no vector expects %s", l)
		}
	}
	if selfChecks != 8 {
		t.Errorf("%d self-check vectors, want the listing's 8", selfChecks)
	}
}

// TestVectorsJSONL streams every one-line vector through ClassifyJSONL,
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
	if err := flakegate.ClassifyJSONL(context.Background(), &in, &out, func(l flakegate.Label) { seen = append(seen, l) }); err != nil {
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

func equalPtr(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// TestVectorsMatchSpec regenerates the vectors from the spec and wants the
// committed file unchanged.
func TestVectorsMatchSpec(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the listing through python3")
	}
	python, err := exec.LookPath("python3")
	if err != nil {
		skipOutsideCI(t, "python3 not found")
	}
	spec := os.Getenv("FLAKEGATE_SPEC")
	if spec == "" {
		spec = filepath.Join("..", "shared", "spec", "flake-freeze-ledger.txt")
	}
	if _, err := os.Stat(spec); err != nil {
		skipOutsideCI(t, "spec not found (set FLAKEGATE_SPEC): "+err.Error())
	}
	out, err := exec.Command(python, filepath.Join("testdata", "vectors", "gen.py"), "--check", "--spec", spec).CombinedOutput()
	if err != nil {
		t.Fatalf("gen.py --check: %v\n%s", err, out)
	}
}

// TestClassifyJSONLLines: line endings and the last line.
func TestClassifyJSONLLines(t *testing.T) {
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
		if err := flakegate.ClassifyJSONL(context.Background(), strings.NewReader(tc.input), &out, nil); err != nil {
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

// TestClassifyJSONLErrors: a read error, a write error and a cancelled
// context come back as errors, without a hang.
func TestClassifyJSONLErrors(t *testing.T) {
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
		err := flakegate.ClassifyJSONL(tc.ctx, tc.r, tc.w, nil)
		if !errors.Is(err, tc.want) {
			t.Errorf("error %v, want %v", err, tc.want)
		}
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestClassifyJSONLShortLineReason: a short line is never reported as
// longer than the limit, whatever its bytes.
func TestClassifyJSONLShortLineReason(t *testing.T) {
	for _, line := range []string{"\x00too-long", "\x00", "too-long"} {
		var out bytes.Buffer
		if err := flakegate.ClassifyJSONL(context.Background(), strings.NewReader(line+"\n"), &out, nil); err != nil {
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
