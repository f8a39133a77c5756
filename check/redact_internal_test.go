package check

import (
	"slices"
	"testing"

	sitepkg "github.com/flakegate/flakegate/site"
)

// TestSecretValuesWeak: a value under 8 bytes or a word is no secret to
// redact everywhere; a weak DSN password is one only as the DSN's
// "user:password@" token; a strong one is one wherever it appears.
func TestSecretValuesWeak(t *testing.T) {
	type testCase struct {
		name     string
		env      []string
		extra    []string
		want     []string
		wantNone []string
	}
	run := func(t *testing.T, tc testCase) {
		got := sitepkg.SecretValues(tc.env, tc.extra)
		for _, w := range tc.want {
			if !slices.Contains(got, w) {
				t.Errorf("sitepkg.SecretValues = %q, want %q among them", got, w)
			}
		}
		for _, w := range tc.wantNone {
			if slices.Contains(got, w) {
				t.Errorf("sitepkg.SecretValues = %q, want no %q", got, w)
			}
		}
	}
	for _, tc := range []testCase{
		{name: "word password", extra: []string{"postgres://postgres:flakegate@localhost:5432/flakegate"},
			want: []string{"postgres://postgres:flakegate@localhost:5432/flakegate", "postgres:flakegate@"}, wantNone: []string{"flakegate"}},
		{name: "short password", env: []string{"FLAKEGATE_LEDGER=postgres://ci:abc1@db/x"},
			want: []string{"ci:abc1@"}, wantNone: []string{"abc1"}},
		{name: "strong password", extra: []string{"postgres://ci:s3cr3t-Pa55w0rd@db/x"},
			want: []string{"s3cr3t-Pa55w0rd"}},
		{name: "word in a variable", env: []string{"PGPASSWORD=postgres", "API_TOKEN=tok3n-0123456789"},
			want: []string{"tok3n-0123456789"}, wantNone: []string{"postgres"}},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}
