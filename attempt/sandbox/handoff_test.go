package sandbox

import (
	"os"
	"testing"
)

// TestHandOff: each descriptor goes by name, at the number it got among
// the child's ExtraFiles, and the helper reads back exactly those names;
// one it was not given is none, and a malformed argument is refused.
func TestHandOff(t *testing.T) {
	var h handOff
	files := []*os.File{os.Stdin, os.Stdout, os.Stderr}
	h.give(fdStatus, files[0])
	h.give(fdReport, files[1])
	h.give(fdShareUserns, files[2])
	want := []string{"--status-fd=3", "--report-fd=4", "--share-userns-fd=5"}
	if len(h.flags) != len(want) || len(h.files) != 3 {
		t.Fatalf("flags %q, %d files", h.flags, len(h.files))
	}
	for i := range want {
		if h.flags[i] != want[i] || h.files[i] != files[i] {
			t.Errorf("descriptor %d: %q, want %q", i, h.flags[i], want[i])
		}
	}
	fds, err := parseFDs(h.flags)
	if err != nil {
		t.Fatal(err)
	}
	for name, n := range map[string]int{fdStatus: 3, fdReport: 4, fdShareUserns: 5, fdSeccomp: -1, fdTreeUserns: -1, fdAttempt: -1} {
		if got := fds.get(name); got != n {
			t.Errorf("%s: %d, want %d", name, got, n)
		}
	}
	if fds.file(fdSeccomp) != nil {
		t.Errorf("a descriptor not given reads as a file")
	}
	for _, bad := range []string{"--status-fd=", "--status-fd=x", "--status-fd=2", "status-fd=3", "--status=3", "{}"} {
		if _, err := parseFDs([]string{bad}); err == nil {
			t.Errorf("parseFDs(%q) accepted it", bad)
		}
	}
}
