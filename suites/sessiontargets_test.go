package suites

import (
	"slices"
	"testing"

	"github.com/flakegate/flakegate/config"
)

// TestSessionTargets: the base's pytest session runs what the check
// gates. An excluded or skipped test is left out (its process starts
// would make every change reach every test); when everything is gated,
// or nothing is, the folder.
func TestSessionTargets(t *testing.T) {
	list := &List{
		Tests: []Test{{File: "tests/test_a.py", Name: "test_one"}, {File: "tests/test_a.py", Name: "test_uname"}, {File: "tests/test_b.py", Name: "test_two"}},
		Skips: map[string]string{},
	}
	for _, tc := range []struct {
		exclude []string
		skips   map[string]string
		want    []string
	}{
		{nil, nil, []string{"tests"}},
		{[]string{"test_uname"}, nil, []string{"tests/test_a.py::test_one", "tests/test_b.py::test_two"}},
		{nil, map[string]string{"tests/test_b.py::test_two": "skipped"}, []string{"tests/test_a.py::test_one", "tests/test_a.py::test_uname"}},
		{[]string{"test_*"}, nil, []string{"tests"}},
	} {
		s := &config.Suite{Path: "tests", Framework: "pytest", Exclude: tc.exclude}
		list.Skips = tc.skips
		if got := SessionTargets(s, list); !slices.Equal(got, tc.want) {
			t.Errorf("exclude %v, skips %v: %q, want %q", tc.exclude, tc.skips, got, tc.want)
		}
	}
}
