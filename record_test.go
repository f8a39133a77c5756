package flakegate

import "testing"

func TestKnownKeyIndex(t *testing.T) {
	for i, k := range knownKeys {
		if j, ok := knownKeyIndex(k); !ok || j != i {
			t.Fatalf("knownKeyIndex(%q) = %d, %v; want %d", k, j, ok, i)
		}
	}
	if _, ok := knownKeyIndex("schema"); ok {
		t.Fatal("schema is not a key the table reads")
	}
}
