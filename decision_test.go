package flakegate

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestDecisionJSON: the decision's JSON reads back with every field.
func TestDecisionJSON(t *testing.T) {
	d := Decision{Label: Scheduler, Freeze: true, Row: 9, RecordSHA256: strings.Repeat("a", 64), Missing: []string{},
		Paths: []string{"a<b", "é"}, Reason: `want "pass"`, Seed: Seed(`"s-1"`), PropertyPath: "p.py", FixtureSHA256: "ff"}
	out, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(out, &back); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	for k, want := range map[string]any{"label": "SCHEDULER", "freeze": true, "row": 9.0, "reason": `want "pass"`, "seed": "s-1", "property_path": "p.py", "fixture_sha256": "ff"} {
		if back[k] != want {
			t.Errorf("%s: %v, want %v (%s)", k, back[k], want, out)
		}
	}
	if len(back["missing"].([]any)) != 0 || len(back["paths"].([]any)) != 2 {
		t.Errorf("missing/paths: %s", out)
	}
}
