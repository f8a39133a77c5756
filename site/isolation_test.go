package site

import (
	"slices"
	"strings"
	"testing"

	"github.com/flakegate/flakegate/config"
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
		got := SecretValues(tc.env, tc.extra)
		for _, w := range tc.want {
			if !slices.Contains(got, w) {
				t.Errorf("SecretValues = %q, want %q among them", got, w)
			}
		}
		for _, w := range tc.wantNone {
			if slices.Contains(got, w) {
				t.Errorf("SecretValues = %q, want no %q", got, w)
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

// TestEnvGetter: the last value of a name wins; an absent name is absent.
func TestEnvGetter(t *testing.T) {
	get := EnvGetter([]string{"HOME=/a", "GOPATH=/g", "HOME=/b"})
	if v, ok := get("HOME"); !ok || v != "/b" {
		t.Errorf("HOME: %q %v, want /b", v, ok)
	}
	if _, ok := get("GOMODCACHE"); ok {
		t.Error("GOMODCACHE: found, want absent")
	}
}

// TestWithin: a path is within itself and its parents, never within a
// sibling that shares its prefix.
func TestWithin(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		p, d string
		want bool
	}{{dir + "/a/b", dir + "/a", true}, {dir + "/a", dir + "/a", true}, {dir + "/ab", dir + "/a", false}, {dir, dir + "/a", false}} {
		if got := Within(tc.p, tc.d); got != tc.want {
			t.Errorf("Within(%s, %s) = %v, want %v", tc.p, tc.d, got, tc.want)
		}
	}
	if !overlaps(dir+"/a", dir) || overlaps(dir+"/a", dir+"/b") {
		t.Error("overlaps: a folder and its parent overlap, two siblings do not")
	}
}

// TestBuildIsolationNone: mode none needs no bwrap; the environment is
// the block's allow-list of flakegate's own, without a secret, and the
// secrets are redacted.
func TestBuildIsolationNone(t *testing.T) {
	env := []string{"PATH=/usr/bin", "LANG=C", "API_TOKEN=s3cr3t-Pa55w0rd-long", "OTHER=x"}
	iso, err := BuildIsolation(Spec{Op: "replay", Block: &config.Sandbox{Mode: config.SandboxNone, Env: []string{"LANG"}}, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	defer iso.Close()
	if iso.Mode != IsolationNone || iso.Label() != IsolationNone {
		t.Errorf("mode %q label %q, want none", iso.Mode, iso.Label())
	}
	for _, kv := range iso.Env {
		if strings.HasPrefix(kv, "API_TOKEN=") || strings.HasPrefix(kv, "OTHER=") {
			t.Errorf("the attempts' environment holds %q", kv)
		}
	}
	if !slices.Contains(iso.Env, "LANG=C") {
		t.Errorf("environment %q, want LANG=C (the block names it)", iso.Env)
	}
	if got := iso.Redact("token s3cr3t-Pa55w0rd-long here"); got != "token [redacted] here" {
		t.Errorf("Redact: %q", got)
	}
}
