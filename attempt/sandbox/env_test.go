package sandbox

import (
	"slices"
	"testing"
)

// TestAttemptEnvAbsolutePath: a relative PATH folder ("", ".", "bin") is
// the working folder's, the tree's: an attempt's PATH keeps only the
// absolute ones, so a patch's ./python3 cannot stand in for the
// toolchain the base's command names, in a sandbox or without one, and
// whether PATH comes by default or through sandbox.env.
func TestAttemptEnvAbsolutePath(t *testing.T) {
	src := []string{"PATH=.:/usr/local/bin::bin:/usr/bin:./node_modules/.bin:/bin"}
	for _, spec := range []EnvSpec{
		{Src: src},
		{Src: src, Names: []string{"PATH"}},
		{Src: src, Sandbox: &Sandbox{Home: SandboxHome}},
	} {
		env := AttemptEnv(spec)
		if !slices.Contains(env, "PATH=/usr/local/bin:/usr/bin:/bin") {
			t.Errorf("AttemptEnv(names %q, sandbox %v) = %q, want PATH with its absolute folders only", spec.Names, spec.Sandbox != nil, env)
		}
	}
	if got := AbsolutePath(".:"); got != "" {
		t.Errorf("AbsolutePath(\".:\") = %q, want \"\"", got)
	}
}
