package flakegate_test

import (
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
