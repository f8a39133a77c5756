package check

import (
	"path/filepath"
	"reflect"
	"testing"
)

// TestSuiteListKept: a go suite's listing reads back as it was written,
// and every field of suiteList is either kept or named here as pytest's
// alone: a new field must be kept too (or the kept listing would lose it).
func TestSuiteListKept(t *testing.T) {
	list := &suiteList{
		tests:    []suiteTest{{pkg: "./a", file: "a/a_test.go", name: "TestA"}, {pkg: ".", file: "x_test.go", name: "TestX"}},
		pkgTests: map[string][]string{"./a": {"TestA", "ExampleA"}, ".": {"TestX"}},
		rapid:    map[string]bool{"./a": true},
	}
	file := filepath.Join(t.TempDir(), "suitelist", "k.json")
	writeSuiteList(file, list)
	got, ok := readSuiteList(file)
	if !ok || !reflect.DeepEqual(got, list) {
		t.Fatalf("read back %+v, %v; want %+v", got, ok, list)
	}
	kept := map[string]bool{"tests": true, "pkgTests": true, "rapid": true, "python": false, "hypothesis": false, "unnamed": false, "unnamedSome": false}
	typ := reflect.TypeOf(suiteList{})
	for i := range typ.NumField() {
		if _, ok := kept[typ.Field(i).Name]; !ok {
			t.Errorf("suiteList.%s is new: keep it in suiteListFile (suitecache.go), or name it here if only pytest's listing sets it", typ.Field(i).Name)
		}
	}
	if _, ok := readSuiteList(filepath.Join(t.TempDir(), "none.json")); ok {
		t.Fatal("a missing kept listing reads as one")
	}
}
