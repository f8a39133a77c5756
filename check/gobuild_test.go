package check

import (
	"slices"
	"testing"
)

// TestGoBuildArgv: a batch's command as a build that runs no test code,
// keyed without the flags only the test binary reads; a command with its
// own -exec or -toolexec has no build step.
func TestGoBuildArgv(t *testing.T) {
	a, ok := goBuildArgv([]string{"go", "test", "-json", "-shuffle=1", "-count=1", "-timeout=0", "-race", "-run", "^(TestA|FuzzX)$", "./p", "-tags", "x", "-seed=1"})
	want := []string{"go", "test", "-exec", "/bin/true", "-count=1", "-json", "-race", "./p", "-tags", "x"}
	if !ok || !slices.Equal(a, want) {
		t.Fatalf("got %q %v, want %q", a, ok, want)
	}
	b, _ := goBuildArgv([]string{"go", "test", "-json", "-shuffle=2", "-count", "3", "-timeout=0", "-v", "-race", "-run", "^(TestB)$", "./p", "-tags", "x", "-seed=2"})
	if !slices.Equal(a, b) {
		t.Errorf("two seeds' batches have different builds: %q, %q", a, b)
	}
	if c, _ := goBuildArgv([]string{"go", "test", "-json", "-run", "^(TestB)$", "./p"}); slices.Equal(a, c) {
		t.Errorf("another build (no -race, no tags) is the same")
	}
	for _, f := range []string{"-exec=x", "-toolexec", "-c", "-o=bin", "-args"} {
		if _, ok := goBuildArgv([]string{"go", "test", f, "./p"}); ok {
			t.Errorf("%s: a build step", f)
		}
	}
}
