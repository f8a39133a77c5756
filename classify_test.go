package flakegate

import (
	"errors"
	"strings"
	"testing"

	"github.com/flakegate/flakegate/canonjson"
)

// record returns the self-check base record with keys changed (JSON text
// values) and keys removed ("-" value).
func record(t *testing.T, change map[string]string) []byte {
	t.Helper()
	v, err := canonjson.Read([]byte(selfCheckBase))
	if err != nil {
		t.Fatal(err)
	}
	var out []canonjson.Member
	seen := map[string]bool{}
	for _, m := range v.Members {
		seen[m.Key] = true
		text, ok := change[m.Key]
		switch {
		case !ok:
			out = append(out, m)
		case text == "-":
		default:
			nv, err := canonjson.Read([]byte(text))
			if err != nil {
				t.Fatalf("bad test value %s: %v", text, err)
			}
			out = append(out, canonjson.Member{Key: m.Key, Value: nv})
		}
	}
	for k, text := range change {
		if !seen[k] && text != "-" {
			nv, err := canonjson.Read([]byte(text))
			if err != nil {
				t.Fatalf("bad test value %s: %v", text, err)
			}
			out = append(out, canonjson.Member{Key: k, Value: nv})
		}
	}
	v.Members = out
	return canonjson.Append(nil, &v)
}

const env1 = `{"workers":1,"clock_budget_s":60,"filesystem":"ext4"}`

func TestClassifyTable(t *testing.T) {
	type testCase struct {
		name   string
		change map[string]string
		label  Label
		row    int
		reason string // substring
	}
	run := func(t *testing.T, tc testCase) {
		d := ClassifyBytes(record(t, tc.change))
		if d.Label != tc.label || d.Row != tc.row {
			t.Fatalf("got %s (row %d, %q), want %s (row %d)", d.Label, d.Row, d.Reason, tc.label, tc.row)
		}
		if d.Freeze != (tc.label == Scheduler) {
			t.Fatalf("freeze %v for %s", d.Freeze, d.Label)
		}
		if !strings.Contains(d.Reason, tc.reason) {
			t.Fatalf("reason %q does not contain %q", d.Reason, tc.reason)
		}
		if d.RecordSHA256 == "" {
			t.Fatal("record_sha256 missing for a JSON record")
		}
	}
	testCases := []testCase{
		// Row 1.
		{"missing seed", map[string]string{"seed": "-"}, Incomplete, 1, "missing required key(s): seed"},
		{"missing transcript flag", map[string]string{"transcript_complete": "-"}, Incomplete, 1, "transcript_complete"},
		{"transcript false", map[string]string{"transcript_complete": "false"}, Incomplete, 1, "transcript_complete is false"},
		{"transcript 1 is a wrong type", map[string]string{"transcript_complete": "1"}, Incomplete, 1, "transcript_complete: want true or false"},
		{"seed float", map[string]string{"seed": "1402.0"}, Incomplete, 1, "seed"},
		{"seed bad string", map[string]string{"seed": `"a b"`}, Incomplete, 1, "seed"},
		{"seed empty string", map[string]string{"seed": `""`}, Incomplete, 1, "seed"},
		{"seed null", map[string]string{"seed": `null`}, Incomplete, 1, "seed"},
		{"retry_cap float", map[string]string{"retry_cap": "2.0"}, Incomplete, 1, "retry_cap"},
		{"retry_cap string", map[string]string{"retry_cap": `"2"`}, Incomplete, 1, "retry_cap"},
		{"retry_cap bool", map[string]string{"retry_cap": `true`}, Incomplete, 1, "retry_cap"},
		{"retry_cap negative", map[string]string{"retry_cap": `-1`}, Incomplete, 1, "retry_cap"},
		{"budget_ok string", map[string]string{"budget_ok": `"yes"`}, Incomplete, 1, "budget_ok"},
		{"diff_paths string", map[string]string{"diff_paths": `"src/retry.py"`}, Incomplete, 1, "diff_paths"},
		{"diff_paths number element", map[string]string{"diff_paths": `[1]`}, Incomplete, 1, "diff_paths[0]"},
		{"absolute diff path", map[string]string{"diff_paths": `["/etc/passwd"]`}, Incomplete, 1, "absolute"},
		{"climbing property path", map[string]string{"property_path": `"../x.py"`}, Incomplete, 1, "climbs out"},
		{"empty digest", map[string]string{"fixture_sha256": `""`}, Incomplete, 1, "fixture_sha256"},
		{"candidate result other", map[string]string{"candidate_result": `"error"`}, Incomplete, 1, "candidate_result"},
		{"retry result other", map[string]string{"retry_results": `["pass","maybe"]`}, Incomplete, 1, "retry_results[1]"},
		{"env not an object", map[string]string{"candidate_env": `[1]`, "base_env": env1}, Incomplete, 1, "candidate_env"},
		// Row 2, and row order: contamination before digest and budget.
		{"property in diff", map[string]string{"diff_paths": `["tests/props/test_retry_budget.py"]`}, Contaminated, 2, "test_retry_budget.py"},
		{"property in diff, cleaned", map[string]string{"diff_paths": `["./tests//props/test_retry_budget.py"]`}, Contaminated, 2, ""},
		{"generator in diff", map[string]string{"fixture_generator_path": `"tools/gen.py"`, "diff_paths": `["tools/gen.py"]`}, Contaminated, 2, "tools/gen.py"},
		{"watched file in diff", map[string]string{"watch_paths": `["flakegate.yaml"]`, "diff_paths": `["flakegate.yaml"]`}, Contaminated, 2, ""},
		{"watched folder in diff", map[string]string{"watch_paths": `["tests/fixtures/"]`, "diff_paths": `["tests/fixtures/a/b.json"]`}, Contaminated, 2, "tests/fixtures/a/b.json"},
		{"watched folder prefix only", map[string]string{"watch_paths": `["tests/fix/"]`, "diff_paths": `["tests/fixtures/a.json"]`}, Scheduler, 9, ""},
		{"contaminated before digest", map[string]string{"diff_paths": `["tests/props/test_retry_budget.py"]`, "fixture_sha256": `"e"`}, Contaminated, 2, ""},
		{"contaminated with null generator", map[string]string{"fixture_generator_path": `null`, "diff_paths": `["tests/props/test_retry_budget.py"]`}, Contaminated, 2, ""},
		{"empty generator is none", map[string]string{"fixture_generator_path": `""`}, Scheduler, 9, ""},
		// Row 3 before row 4.
		{"digest differs", map[string]string{"fixture_sha256": `"e"`}, Fixture, 3, "differs"},
		{"digest before budget", map[string]string{"fixture_sha256": `"e"`, "budget_ok": `false`}, Fixture, 3, ""},
		// Row 4 before row 5 and the scheduler row.
		{"budget missed", map[string]string{"budget_ok": `false`}, Budget, 4, "budget_ok"},
		{"budget before base replay", map[string]string{"budget_ok": `false`, "base_seed_result": `"not_run"`}, Budget, 4, ""},
		// Row 5.
		{"base not run", map[string]string{"base_seed_result": `"not_run"`}, Incomplete, 5, "base_seed_result"},
		{"base null", map[string]string{"base_seed_result": `null`}, Incomplete, 5, ""},
		{"base number", map[string]string{"base_seed_result": `1`}, Incomplete, 5, ""},
		{"passing candidate, base not run", map[string]string{"candidate_result": `"pass"`, "base_seed_result": `"not_run"`}, Incomplete, 5, ""},
		// Row 6.
		{"candidate passed", map[string]string{"candidate_result": `"pass"`}, Pass, 6, ""},
		{"candidate passed, base red", map[string]string{"candidate_result": `"pass"`, "base_seed_result": `"fail"`}, Pass, 6, ""},
		{"candidate passed, one env", map[string]string{"candidate_result": `"pass"`, "base_env": env1}, Pass, 6, ""},
		// Rows 7 and 8.
		{"only base env", map[string]string{"base_env": env1}, Incomplete, 7, "candidate_env"},
		{"only candidate env", map[string]string{"candidate_env": env1}, Incomplete, 7, "base_env"},
		{"null env counts as absent", map[string]string{"candidate_env": env1, "base_env": `null`}, Incomplete, 7, ""},
		{"envs equal", map[string]string{"candidate_env": env1, "base_env": env1}, Scheduler, 9, ""},
		{"envs equal, 60 vs 60.0", map[string]string{"candidate_env": env1, "base_env": `{"workers":1,"clock_budget_s":60.0,"filesystem":"ext4"}`}, Scheduler, 9, ""},
		{"workers differ", map[string]string{"candidate_env": env1, "base_env": `{"workers":4,"clock_budget_s":60,"filesystem":"ext4"}`}, Budget, 8, "workers"},
		{"clock differs", map[string]string{"candidate_env": env1, "base_env": `{"workers":1,"clock_budget_s":30,"filesystem":"ext4"}`}, Budget, 8, "clock_budget_s"},
		{"filesystem differs", map[string]string{"candidate_env": env1, "base_env": `{"workers":1,"clock_budget_s":60,"filesystem":"tmpfs"}`}, Budget, 8, "filesystem"},
		{"env key missing on one side", map[string]string{"candidate_env": env1, "base_env": `{"workers":1,"clock_budget_s":60}`}, Budget, 8, "filesystem"},
		{"envs differ but base red", map[string]string{"candidate_env": env1, "base_env": `{"workers":4}`, "base_seed_result": `"fail"`}, Property, 10, ""},
		// Rows 9 and 10: the cap.
		{"scheduler", nil, Scheduler, 9, ""},
		{"pass after cap", map[string]string{"retry_results": `["fail","fail","pass"]`}, Property, 10, ""},
		{"pass at cap", map[string]string{"retry_results": `["fail","pass"]`}, Scheduler, 9, ""},
		{"cap zero", map[string]string{"retry_cap": `0`}, Property, 10, "cap of 0"},
		{"huge cap", map[string]string{"retry_cap": `100000000000000000000000000000`}, Scheduler, 9, ""},
		{"no retries", map[string]string{"retry_results": `[]`}, Property, 10, ""},
		{"base red", map[string]string{"base_seed_result": `"fail"`}, Property, 10, "fails on base"},
		{"unknown key kept", map[string]string{"note": `{"deep":[1,2.5,"é"]}`}, Scheduler, 9, ""},
		{"string seed", map[string]string{"seed": `"nightly-3:a.b_c"`}, Scheduler, 9, ""},
		{"huge seed", map[string]string{"seed": `123456789012345678901234567890`}, Scheduler, 9, ""},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func TestClassifyNotJSON(t *testing.T) {
	type testCase struct {
		name, input, reason string
	}
	run := func(t *testing.T, tc testCase) {
		d := ClassifyBytes([]byte(tc.input))
		if d.Label != Incomplete || d.Row != 1 || d.Freeze || d.RecordSHA256 != "" {
			t.Fatalf("got %+v", d)
		}
		if !strings.Contains(d.Reason, tc.reason) {
			t.Fatalf("reason %q does not contain %q", d.Reason, tc.reason)
		}
	}
	testCases := []testCase{
		{"empty", "", "empty input"},
		{"spaces", "  \n", "empty input"},
		{"truncated", `{"a":`, "unexpected end"},
		{"bom", "\xEF\xBB\xBF{}", "byte order mark"},
		{"bad utf8", "{\"a\":\"\xff\"}", "invalid UTF-8"},
		{"duplicate key", `{"a":1,"a":2}`, `duplicate key "a"`},
		{"nan", `{"a":NaN}`, "NaN"},
		{"infinity", `{"a":-Infinity}`, "Infinity"},
		{"huge float", `{"a":1e999}`, "too large for a float64"},
		{"lone surrogate", `{"a":"\ud800"}`, "lone surrogate"},
		{"lone low surrogate", `{"a":"\udc00x"}`, "lone surrogate"},
		{"trailing data", `{} {}`, "trailing data"},
		{"deep nesting", strings.Repeat("[", 10000) + strings.Repeat("]", 10000), "nesting deeper"},
		{"control char", "{\"a\":\"\x01\"}", "control character"},
		{"leading zero", `{"a":01}`, "want ','"},
		{"bad escape", `{"a":"\q"}`, "invalid escape"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func TestClassifyNonObject(t *testing.T) {
	for _, in := range []string{`[]`, `1`, `"x"`, `null`} {
		d := ClassifyBytes([]byte(in))
		if d.Label != Incomplete || d.RecordSHA256 == "" || !strings.Contains(d.Reason, "want an object") {
			t.Fatalf("%s: got %+v", in, d)
		}
	}
}

func TestSelfCheck(t *testing.T) {
	if err := SelfCheck(); err != nil {
		t.Fatal(err)
	}
}

// TestUnreadableIsRowOne: bytes the reader refuses are a record signal
// that the table's first row reads, like a missing key.
func TestUnreadableIsRowOne(t *testing.T) {
	d := Classify(UnreadableRecord(errors.New("line longer than 16 MiB")))
	if d.Label != Incomplete || d.Row != 1 || d.Freeze || d.RecordSHA256 != "" || d.Missing != nil {
		t.Fatalf("got %+v", d)
	}
	if d.Reason != "not a JSON record: line longer than 16 MiB" {
		t.Fatalf("reason %q", d.Reason)
	}
	if _, ok := Table[0].Match(UnreadableRecord(errors.New("x"))); !ok || Table[0].N != 1 {
		t.Fatal("row 1 does not match an unreadable record")
	}
}
