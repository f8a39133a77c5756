package gocache

import (
	"os"
	"testing"

	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/impact"
)

// TestBaseReads: what a fill with a test log keeps reads back by its key
// only; two suites' reads of one package merge; a file that does not
// read back, or an entry without its maps, is not known.
func TestBaseReads(t *testing.T) {
	gc := &Caches{base: "abc", dir: t.TempDir()}
	suites := []config.Suite{{Path: "./...", Framework: config.FrameworkGo}}
	gc.UseSuites(suites, false)
	plain := gc.FillKey()
	gc.UseSuites(suites, true)
	if gc.FillKey() == plain {
		t.Fatal("a fill with a test log has the key of one without")
	}
	reads := func(paths ...string) *impact.GoReads {
		r := &impact.GoReads{Paths: map[string]bool{}, Env: map[string]bool{"HOME": true}}
		for _, p := range paths {
			r.Paths[p] = true
		}
		return r
	}
	merged := mergeBaseReads([]*BaseReads{
		{Reads: map[string]*impact.GoReads{"./a": reads("a/x"), "./b": reads()}, Seconds: map[string]float64{"./a": 1, "./b": 2}},
		{Reads: map[string]*impact.GoReads{"./a": reads("data/y")}, Seconds: map[string]float64{"./a": 3}},
	})
	if err := gc.writeBaseReads(merged); err != nil {
		t.Fatal(err)
	}
	got, ok := gc.BaseReads(gc.FillKey())
	if !ok || !got.Reads["./a"].Paths["a/x"] || !got.Reads["./a"].Paths["data/y"] || got.Reads["./b"] == nil || got.Seconds["./a"] != 3 {
		t.Fatalf("read back %+v, %v", got, ok)
	}
	if _, ok := gc.BaseReads(plain); ok {
		t.Fatal("the reads of a fill with a test log read back under another key")
	}
	if err := gc.writeBaseReads(nil); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{`{"reads": {"./a": {"Paths": null, "Env": {}}}, "seconds": {}}`, `{not json`, `{"seconds": {}}`} {
		if err := os.WriteFile(gc.readsFile(gc.FillKey()), []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		got, ok := gc.BaseReads(gc.FillKey())
		if ok && got.Reads["./a"] != nil {
			t.Fatalf("%s read back as %+v", bad, got)
		}
	}
	var nilCaches *Caches
	if _, ok := nilCaches.BaseReads("x"); ok {
		t.Fatal("no caches, yet reads")
	}
}
