package plan_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/flakegate/flakegate/plan"
)

// TestKeepTimings: a check's timings merge into the kept ones; a check
// whose base was filled before keeps the last fill that ran; a file that
// does not read back is no timings.
func TestKeepTimings(t *testing.T) {
	common := t.TempDir()
	if err := plan.KeepTimings(common, "init", map[string]float64{"p::a": 1, "p::b": 2}, nil); err != nil {
		t.Fatal(err)
	}
	if err := plan.KeepTimings(common, "the check", map[string]float64{"p::a": 3}, &plan.CheckTimes{Base: "b1", Setup: 4, Fill: 30, FillBase: "b1"}); err != nil {
		t.Fatal(err)
	}
	if err := plan.KeepTimings(common, "the check", nil, &plan.CheckTimes{Base: "b1", Setup: 2}); err != nil {
		t.Fatal(err)
	}
	got := plan.ReadTimings(common)
	if got.Source != "the check" || got.Seconds["p::a"] != 3 || got.Seconds["p::b"] != 2 || got.Check == nil || got.Check.Setup != 2 || got.Check.Fill != 30 || got.Check.FillBase != "b1" {
		t.Errorf("kept %+v %+v", got, got.Check)
	}
	if err := os.WriteFile(filepath.Join(common, "flakegate", plan.TimingsFile), []byte("{\"seconds\": {\"p::a\": \"x\""), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := plan.ReadTimings(common); got.Seconds != nil || got.Check != nil {
		t.Errorf("a broken file read as %+v", got)
	}
}
