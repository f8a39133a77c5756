package template

import (
	"slices"
	"testing"
)

func TestPlaceholders(t *testing.T) {
	for arg, want := range map[string][]string{
		"pytest":                       nil,
		"{seed}":                       {"seed"},
		"--n={samples}/{samples}":      {"samples", "samples"},
		"{{seed}}":                     {"seed"},
		"{_seed} {1x} {} {seed":        nil,
		`{"a":1} [0-9]{3} {x_1}{Path}`: {"x_1", "Path"},
	} {
		if got := Placeholders(arg); !slices.Equal(got, want) {
			t.Errorf("Placeholders(%q) = %q, want %q", arg, got, want)
		}
	}
	if err := Check([]string{"x", "{seed}", "{_x}"}); err != nil {
		t.Errorf("Check: %v", err)
	}
	if err := Check([]string{"x", "{seeds}"}); err == nil {
		t.Error("Check accepted {seeds}")
	}
	if !Uses([]string{"x", "-n={samples}"}, "samples") || Uses([]string{"x", "{_samples}"}, "samples") {
		t.Error("Uses")
	}
}
