package cli

import (
	"testing"

	"github.com/flakegate/flakegate/config"
)

// TestExcludePattern: the line init prints for a test that does not pass
// at HEAD excludes that test and no other, whatever its name holds (a
// parametrised pytest id has brackets; a name may hold * or ?).
func TestExcludePattern(t *testing.T) {
	names := []string{"test_has_version", "test_x[1-2]", "test_x[a*b]", "TestA?", `odd\name`, "describe it works"}
	others := []string{"test_x1", "test_x[1-2]x", "TestAB", "test_has_version2", "odd/name"}
	for _, n := range names {
		s := &config.Suite{Exclude: []string{excludePattern(n)}}
		if !s.Excluded(n) {
			t.Errorf("%q: pattern %q does not exclude it", n, excludePattern(n))
		}
		for _, o := range append(others, names...) {
			if o != n && s.Excluded(o) {
				t.Errorf("%q: pattern %q excludes %q too", n, excludePattern(n), o)
			}
		}
	}
	if got, want := excludeLine([]string{excludePattern("test_x[1-2]"), "b"}), `exclude: ["test_x\\[1-2]", "b"]`; got != want {
		t.Errorf("excludeLine: %s, want %s", got, want)
	}
}
