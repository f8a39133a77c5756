package flakegate_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
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
