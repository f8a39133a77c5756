package fleet_test

import (
	"testing"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/fleet"
)

// TestMergeShardsKeepsNewTests: the new tests a suite's check tried (only
// shard 1 runs them) and reject_flaky_new_tests survive the merge, so a
// flaky new test still rejects the merged verdict.
func TestMergeShardsKeepsNewTests(t *testing.T) {
	shard := func(i int, label string) *flakegate.Summary {
		return &flakegate.Summary{Base: "b", Candidate: "c", ConfigSHA256: "x",
			Shard:   &flakegate.Shard{Index: i, Count: 2, Triples: 2, Positions: []int{i - 1}, PartitionSHA256: "p"},
			Results: []flakegate.Result{{PropertyPath: "a_test.go", Name: "TestA", Seed: "1", Label: flakegate.Label(label)}}}
	}
	one, two := shard(1, "PASS"), shard(2, "PASS")
	one.Results[0].Name = "TestB"
	one.RejectFlakyNewTests = true
	one.NewTests = []flakegate.NewTest{{Suite: "./...", Path: "a_test.go", Name: "TestNew", Runs: 5, Passed: 4,
		Results: []string{"pass", "fail", "pass", "pass", "pass"}}}
	two.RejectFlakyNewTests = true
	got, err := fleet.MergeShards([]*flakegate.Summary{one, two}, []string{"one", "two"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.NewTests) != 1 || got.NewTests[0].Name != "TestNew" || !got.RejectFlakyNewTests {
		t.Fatalf("merged new tests %+v, reject %v", got.NewTests, got.RejectFlakyNewTests)
	}
	if got.Verdict != flakegate.VerdictReject {
		t.Errorf("verdict %q: a flaky new test with reject_flaky_new_tests must reject the merge", got.Verdict)
	}
}
