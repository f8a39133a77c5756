package check

import (
	"slices"
	"testing"
)

// TestGoBuildArgv: a batch's command as a build that runs no test code,
// keyed without the flags only the test binary reads; a command with its
// own -exec or -toolexec has no build step.
func TestGoBuildArgv(t *testing.T) {
	a, ka, ok := goBuildArgv([]string{"go", "test", "-json", "-shuffle=1", "-count=1", "-timeout=0", "-race", "-run", "^(TestA|FuzzX)$", "./p", "-tags", "x"})
	want := []string{"go", "test", "-exec", "/bin/true", "-count=1", "-json", "-race", "./p", "-tags", "x"}
	if !ok || !slices.Equal(a, want) {
		t.Fatalf("got %q %v, want %q", a, ok, want)
	}
	_, kb, _ := goBuildArgv([]string{"go", "test", "-json", "-shuffle=2", "-count", "3", "-timeout=0", "-race", "-run", "^(TestB)$", "./p", "-tags", "x"})
	if ka != kb {
		t.Errorf("two seeds' batches have different builds: %q, %q", ka, kb)
	}
	if _, kc, _ := goBuildArgv([]string{"go", "test", "-json", "-run", "^(TestB)$", "./p"}); kc == ka {
		t.Errorf("another build (no -race, no tags) has the same key")
	}
	for _, f := range []string{"-exec=x", "-toolexec", "-c", "-o=bin", "-args"} {
		if _, _, ok := goBuildArgv([]string{"go", "test", f, "./p"}); ok {
			t.Errorf("%s: a build step", f)
		}
	}
}
