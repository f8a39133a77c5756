package report

import (
	"testing"
)

func TestRecentLabelsPrepareSeconds(t *testing.T) {
	one, two, three := 1.0, 2.0, 30.0
	d := &HTMLData{}
	recentLabels(d, []recordInfo{{path: "a", prepare: &one}, {path: "a", prepare: &three}, {path: "b", prepare: &two}, {path: "b"}})
	if d.Prepared != 3 || d.PrepareSeconds != 2 || d.PrepareMax != 30 {
		t.Fatalf("prepared %d, median %v, max %v", d.Prepared, d.PrepareSeconds, d.PrepareMax)
	}
}
