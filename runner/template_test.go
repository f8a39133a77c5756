package runner

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
	if err := CheckTemplate([]string{"x", "{seed}", "{_x}"}); err != nil {
		t.Errorf("CheckTemplate: %v", err)
	}
	if err := CheckTemplate([]string{"x", "{seeds}"}); err == nil {
		t.Error("CheckTemplate accepted {seeds}")
	}
	if !UsesPlaceholder([]string{"x", "-n={samples}"}, "samples") || UsesPlaceholder([]string{"x", "{_samples}"}, "samples") {
		t.Error("UsesPlaceholder")
	}
}
