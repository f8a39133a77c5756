package flakegate

import (
	"strings"
	"testing"

	"github.com/flakegate/flakegate/canonjson"
)

// TestKeyReadersCoverEveryKey checks the table of key readers against
// the record contract's keys: every key of recordKeys has exactly one
// reader, and no reader reads anything else.
func TestKeyReadersCoverEveryKey(t *testing.T) {
	readers := make([]int, len(recordKeys))
	for _, kr := range keyReaders {
		if kr.Key < 0 || kr.Key >= len(recordKeys) {
			t.Fatalf("a reader reads key index %d, not a record key", kr.Key)
		}
		if kr.Read == nil {
			t.Errorf("%s: the reader has no Read", recordKeys[kr.Key])
		}
		readers[kr.Key]++
	}
	for k, n := range readers {
		if n != 1 {
			t.Errorf("%s: %d readers, want exactly 1", recordKeys[k], n)
		}
	}
	if got, want := len(RequiredKeys), 13; got != want {
		t.Errorf("%d required keys, want the contract's %d", got, want)
	}
}

// TestKeyReadersReadTheirKey checks that each reader is wired to its own
// key: a value the contract refuses in that key alone is a problem that
// names it.
func TestKeyReadersReadTheirKey(t *testing.T) {
	type testCase struct {
		key   string
		value string // JSON text the contract refuses
	}
	cases := []testCase{
		{"run_id", `null`},
		{"seed", `1.5`},
		{"property_path", `"/etc/passwd"`},
		{"property_sha256", `""`},
		{"fixture_sha256", `7`},
		{"base_fixture_sha256", `null`},
		{"diff_paths", `"src/retry.py"`},
		{"candidate_result", `"error"`},
		{"retry_results", `["timeout"]`},
		{"retry_cap", `-1`},
		{"budget_ok", `"yes"`},
		{"transcript_complete", `1`},
		{"fixture_generator_path", `"../gen.py"`},
		{"watch_paths", `{}`},
		{"candidate_env", `[]`},
		{"base_env", `"ext4"`},
	}
	run := func(t *testing.T, tc testCase) {
		v, err := canonjson.Read(record(t, map[string]string{tc.key: tc.value}))
		if err != nil {
			t.Fatal(err)
		}
		r := NewRecord(v)
		if !strings.HasPrefix(r.Problem, tc.key) {
			t.Errorf("problem %q, want one about %s", r.Problem, tc.key)
		}
		if d := Classify(r); d.Label != Incomplete || d.Row != 1 {
			t.Errorf("label %s row %d, want INCOMPLETE row 1", d.Label, d.Row)
		}
	}
	seen := map[string]bool{}
	for _, tc := range cases {
		seen[tc.key] = true
		t.Run(tc.key, func(t *testing.T) { run(t, tc) })
	}
	// base_seed_result takes any value (row 5 reads it): every other key
	// has a case above.
	for _, k := range recordKeys {
		if !seen[k] && k != "base_seed_result" {
			t.Errorf("no case for %s", k)
		}
	}
}
