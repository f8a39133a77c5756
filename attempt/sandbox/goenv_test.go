package sandbox

import (
	"slices"
	"testing"
)

// TestAttemptEnvPinsGo: every attempt gets GOWORK=off, GOENV=off and
// GOTOOLCHAIN=local whatever flakegate's environment holds, with or
// without a sandbox; the config's sandbox.env may name one to pass
// flakegate's own value.
func TestAttemptEnvPinsGo(t *testing.T) {
	src := []string{"PATH=/usr/bin", "GOWORK=/home/u/go.work", "GOENV=/home/u/.config/go/env", "GOTOOLCHAIN=auto", "GOFLAGS=-toolexec=/x"}
	for _, sb := range []*Sandbox{nil, {Home: "/root"}} {
		env := AttemptEnv(EnvSpec{Src: src, Sandbox: sb})
		for _, want := range []string{"GOWORK=off", "GOENV=off", "GOTOOLCHAIN=local"} {
			if !slices.Contains(env, want) {
				t.Errorf("sandbox %v: no %s in %q", sb != nil, want, env)
			}
		}
		if slices.Contains(env, "GOFLAGS=-toolexec=/x") {
			t.Errorf("GOFLAGS passed without being named: %q", env)
		}
	}
	env := AttemptEnv(EnvSpec{Src: src, Names: []string{"GOWORK"}})
	if !slices.Contains(env, "GOWORK=/home/u/go.work") || !slices.Contains(env, "GOENV=off") {
		t.Errorf("a named GOWORK is flakegate's own value: %q", env)
	}
}
