package check

import (
	"strings"
	"testing"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/config"
)

// TestStemBounded: a triple's file stem stays under maxStem bytes for a
// parametrised test whose node id holds its arguments, and two such
// names that differ only at their end get two stems. A short name keeps
// its readable stem.
func TestStemBounded(t *testing.T) {
	stem := func(name string) string {
		j := &job{ps: &propState{index: 1001, prop: &config.Property{Path: "tests/test_make.py", Name: name}}, seed: flakegate.Seed("1")}
		return j.stem()
	}
	long := "TestInitAlias::test_can_unpickle[" + strings.Repeat(`\x80\x05\x95`, 60)
	a, b := stem(long+"A]"), stem(long+"B]")
	if len(a) > maxStem || len(b) > maxStem || a == b || !strings.HasPrefix(a, "1001-tests_test_make.py-TestInitAlias__test_can_unpickle") {
		t.Fatalf("stems %q (%d) and %q (%d)", a, len(a), b, len(b))
	}
	if got := stem("test_a"); got != "1001-tests_test_make.py-test_a-seed-1" {
		t.Errorf("short stem %q", got)
	}
}
