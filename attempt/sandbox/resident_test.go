//go:build linux

package sandbox

import "testing"

func TestSwapLines(t *testing.T) {
	for text, want := range map[string]int{
		"Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n":                                                         0,
		"Filename\tType\tSize\tUsed\tPriority\n/swapfile                               file\t\t4194300\t\t0\t\t-2\n": 1,
		"Filename Type Size Used Priority\n/dev/zram0 partition 8388604 0 100\n/swapfile file 4194300 0 -2\n\n":      2,
		"": 0,
	} {
		if got := swapLines([]byte(text)); got != want {
			t.Errorf("swapLines(%q) = %d, want %d", text, got, want)
		}
	}
}

// TestResidentRoots: a folder on a tmpfs without swap is left out of the
// sweep; one on disk is swept.
func TestResidentRoots(t *testing.T) {
	if SwapOn() {
		t.Skip("swap is on here: no tmpfs is resident")
	}
	if !Resident("/dev/shm") {
		t.Skip("/dev/shm is no tmpfs here")
	}
	disk := t.TempDir()
	if Resident(disk) && !Resident("/") {
		t.Skip("the test's folder is on a tmpfs")
	}
	s := Sandbox{Tree: "/dev/shm", GoCache: disk}
	roots := s.evictRoots()
	if len(roots) != 1 || roots[0] != disk {
		t.Fatalf("evictRoots = %v, want only %s", roots, disk)
	}
}
