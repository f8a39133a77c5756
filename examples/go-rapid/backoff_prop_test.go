package backoff

import (
	"encoding/json"
	"flag"
	"os"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// fixture is the limits file; flakegate passes -fixture={fixture}.
var fixture = flag.String("fixture", "testdata/limits.json", "limits fixture")

func loadLimits(t *testing.T) Limits {
	raw, err := os.ReadFile(*fixture)
	if err != nil {
		t.Fatal(err)
	}
	var l Limits
	if err := json.Unmarshal(raw, &l); err != nil {
		t.Fatal(err)
	}
	return l
}

// TestScheduleProperties: for any retry count and base delay within the
// fixture's limits, every delay is positive, at most the cap, and never
// shorter than the one before. The seed comes from -rapid.seed.
func TestScheduleProperties(t *testing.T) {
	limits := loadLimits(t)
	limit := time.Duration(limits.CapMS) * time.Millisecond
	rapid.Check(t, func(t *rapid.T) {
		retries := rapid.IntRange(0, limits.MaxRetries).Draw(t, "retries")
		base := time.Duration(rapid.IntRange(1, limits.CapMS).Draw(t, "base_ms")) * time.Millisecond
		delays := Schedule(retries, base, limit)
		if len(delays) != retries {
			t.Fatalf("%d delays for %d retries", len(delays), retries)
		}
		for i, d := range delays {
			if d <= 0 || d > limit {
				t.Fatalf("delay %d is %s, outside (0, %s]", i, d, limit)
			}
			if i > 0 && d < delays[i-1] {
				t.Fatalf("delay %d (%s) is shorter than delay %d (%s)", i, d, i-1, delays[i-1])
			}
		}
	})
}
