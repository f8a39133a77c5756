package flakegate

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestReusedClassifierKnownSequences reads records whose keys are
// prefixes, extensions and reorderings of one another with one Classifier,
// and checks each decision and record_sha256 against a fresh, untrusting
// read: the key orders and key slots its reader remembers between records
// must never leak from one record into the next.
func TestReusedClassifierKnownSequences(t *testing.T) {
	type testCase struct {
		name    string
		records []string
	}
	base := []string{
		`"schema":"flakegate.run/v1"`, `"run_id":"r1"`, `"seed":7`,
		`"property_path":"tests/p.py"`, `"property_sha256":"aa"`, `"fixture_sha256":"bb"`,
		`"base_fixture_sha256":"bb"`, `"diff_paths":["src/a.py"]`, `"candidate_result":"fail"`,
		`"base_seed_result":"pass"`, `"retry_results":["pass","fail"]`, `"retry_cap":2`,
		`"budget_ok":true`, `"transcript_complete":true`, `"wall_budget_s":60.0`,
		`"candidate_env":{"workers":4}`, `"base_env":{"workers":2}`,
		`"x_a":1.50`, `"x_b":0.00001`, `"x_c":-0.0`, `"x_d":"\u00e9"`,
	}
	obj := func(members []string) string { return "{" + strings.Join(members, ",") + "}" }
	rnd := rand.New(rand.NewPCG(1, 2))
	var random []string
	for range 400 {
		n := 14 + rnd.IntN(len(base)-13)
		ms := append([]string(nil), base[:n]...)
		if rnd.IntN(4) == 0 {
			i, j := rnd.IntN(n), rnd.IntN(n)
			ms[i], ms[j] = ms[j], ms[i]
		}
		if rnd.IntN(8) == 0 {
			ms = append(ms, ms[rnd.IntN(n)]) // a duplicate key
		}
		if rnd.IntN(8) == 0 {
			ms = ms[1:] // run_id or seed missing
		}
		random = append(random, obj(ms))
	}
	cases := []testCase{
		{"prefix after whole", []string{obj(base), obj(base[:18]), obj(base[:18]), obj(base), obj(base[:16])}},
		{"whole after prefix", []string{obj(base[:17]), obj(base), obj(base[:17]), obj(base)}},
		{"prefix then duplicate", []string{obj(base), obj(base[:17]), obj(append(base[:17:17], base[3]))}},
		{"random", random},
	}
	run := func(t *testing.T, tc testCase) {
		t.Helper()
		var c Classifier
		for i, rec := range tc.records {
			got := c.Classify(rec)
			want := ClassifyBytes([]byte(rec))
			sum, err := RecordSHA256([]byte(rec))
			if err == nil && want.RecordSHA256 != sum {
				t.Fatalf("record %d: ClassifyBytes hash %s, RecordSHA256 %s", i, want.RecordSHA256, sum)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("record %d %s:\nreused %+v\nfresh  %+v", i, rec, got, want)
			}
		}
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}
