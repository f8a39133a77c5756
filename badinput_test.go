package flakegate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/flakegate/flakegate"
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

func TestBadInput(t *testing.T) {
	if d := flakegate.ClassifyBytes([]byte(goodRecord)); d.Label != flakegate.Scheduler {
		t.Fatalf("goodRecord is %s (%s), want SCHEDULER", d.Label, d.Reason)
	}
	type testCase struct {
		name  string
		input []byte
		// reason holds words the reason must contain (any one of them,
		// case-insensitive), so it names the problem.
		reason []string
	}
	tests := []testCase{
		{"empty file", nil, []string{"empty"}},
		{"whitespace only", []byte(" \n\t\r\n"), []string{"empty"}},
		{"truncated JSON", []byte(goodRecord[:len(goodRecord)/2]), []string{"end of input", "unterminated", "truncated"}},
		{"truncated after a key", []byte(`{"run_id"`), []string{"end of input", "':'", "truncated"}},
		{"a JSON array", []byte("[" + goodRecord + "]"), []string{"array"}},
		{"a JSON string", []byte(`"run_id"`), []string{"string"}},
		{"a UTF-8 BOM", append([]byte("\xEF\xBB\xBF"), goodRecord...), []string{"byte order mark", "BOM"}},
		{"invalid UTF-8", withMember("\"x\": \"\xff\xfe\""), []string{"UTF-8"}},
		{"a UTF-8 encoded surrogate", withMember("\"x\": \"\xed\xa0\x80\""), []string{"UTF-8"}},
		{"duplicate keys", withMember(`"seed": 1403`), []string{"duplicate"}},
		{"duplicate keys spelt apart", withMember(`"s\u0065ed": 1403`), []string{"duplicate"}},
		{"NaN", withMember(`"x": NaN`), []string{"NaN"}},
		{"Infinity", withMember(`"x": Infinity`), []string{"Infinity"}},
		{"-Infinity", withMember(`"x": -Infinity`), []string{"Infinity"}},
		{"1e999", withMember(`"x": 1e999`), []string{"too large", "range"}},
		{"a lone surrogate escape", withMember(`"x": "\ud800"`), []string{"surrogate"}},
		{"a lone low surrogate escape", withMember(`"x": "\udc00"`), []string{"surrogate"}},
		{"10,000-deep nesting", withMember(`"x": ` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000)), []string{"nesting", "deep"}},
		{"10,000-deep objects", []byte(strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000)), []string{"nesting", "deep"}},
		{"a 50 MB string", withMember(`"x": "` + strings.Repeat("a", 50<<20) + `"`), []string{"limit", "large", "long"}},
		{"trailing data", []byte(goodRecord + " {}"), []string{"trailing"}},
		{"two records on one line", []byte(goodRecord + goodRecord), []string{"trailing"}},
		{"a raw control character", withMember("\"x\": \"a\x01b\""), []string{"control"}},
	}
	run := func(t *testing.T, tc testCase) {
		d := flakegate.ClassifyBytes(tc.input)
		if d.Label != flakegate.Incomplete || d.Freeze {
			t.Fatalf("got %s freeze=%v, want INCOMPLETE", d.Label, d.Freeze)
		}
		if !containsAnyFold(d.Reason, tc.reason) {
			t.Errorf("reason %q names none of %q", d.Reason, tc.reason)
		}
		if _, err := flakegate.RecordSHA256(tc.input); err != nil && err.Error() == "" {
			t.Errorf("RecordSHA256 error without a message")
		}
		// The decision prints as JSON even for such input.
		out, err := json.Marshal(d)
		if err != nil || !json.Valid(out) {
			t.Errorf("decision JSON %q: %v", out, err)
		}
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func containsAnyFold(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(strings.ToLower(s), strings.ToLower(w)) {
			return true
		}
	}
	return false
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
		if err := flakegate.ClassifyJSONL(context.Background(), &in, &out, nil); err != nil {
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
