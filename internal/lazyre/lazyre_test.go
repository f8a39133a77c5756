package lazyre

import "testing"

func TestCompiledOnFirstUse(t *testing.T) {
	r := New(`^a(\d+)$`)
	if r.re != nil {
		t.Fatal("compiled at New")
	}
	if !r.MatchString("a12") || r.MatchString("b") {
		t.Fatal("MatchString")
	}
	if m := r.FindStringSubmatch("a7"); len(m) != 2 || m[1] != "7" {
		t.Fatalf("FindStringSubmatch: %q", m)
	}
	if got := r.ReplaceAllString("a3", "x$1"); got != "x3" {
		t.Fatalf("ReplaceAllString: %q", got)
	}
	if r.Compiled() != r.Compiled() || r.String() != `^a(\d+)$` {
		t.Fatal("not compiled once")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("a bad expression did not panic on use")
		}
	}()
	New(`(`).MatchString("x")
}
