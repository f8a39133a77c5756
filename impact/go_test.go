package impact_test

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/flakegate/flakegate/impact"
)

// tenPackages is a module of ten packages, each with a test: p1, p2 and
// p3 import p0; p7 embeds data.txt; p8 imports p7; p6 has a testdata
// folder.
func tenPackages() map[string]string {
	files := map[string]string{"go.mod": "module example.com/ten\n\ngo 1.22\n"}
	for i := range 10 {
		p := fmt.Sprintf("p%d", i)
		src := fmt.Sprintf("package %s\n\nfunc F() int { return %d }\n", p, i)
		switch i {
		case 1, 2, 3:
			src = fmt.Sprintf("package %s\n\nimport \"example.com/ten/p0\"\n\nfunc F() int { return p0.F() + %d }\n", p, i)
		case 7:
			src = "package p7\n\nimport _ \"embed\"\n\n//go:embed data.txt\nvar data string\n\nfunc F() int { return len(data) }\n"
			files["p7/data.txt"] = "seven\n"
		case 8:
			src = "package p8\n\nimport \"example.com/ten/p7\"\n\nfunc F() int { return p7.F() }\n"
		case 6:
			files["p6/testdata/input.txt"] = "six\n"
		}
		files[p+"/"+p+".go"] = src
		files[p+"/"+p+"_test.go"] = fmt.Sprintf("package %s\n\nimport \"testing\"\n\nfunc TestF(t *testing.T) { _ = F() }\n", p)
	}
	return files
}

func TestGoReachability(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name   string
		change map[string]string
		want   []string // the affected packages
		input  string   // the first differing input named for the first of them
	}
	all := []string{"./p0", "./p1", "./p2", "./p3", "./p4", "./p5", "./p6", "./p7", "./p8", "./p9"}
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		b, c := twoTrees(t, tenPackages(), tc.change)
		base, cand := listGo(t, b), listGo(t, c)
		if got := base.Packages(); !reflect.DeepEqual(got, all) {
			t.Fatalf("packages with a test binary: %q", got)
		}
		vs, err := impact.Go(impact.GoInput{Trees: compare(t, b, c), Base: base, Candidate: cand, Reads: noReads(all)})
		if err != nil {
			t.Fatal(err)
		}
		if got := affectedUnits(vs); !reflect.DeepEqual(got, tc.want) {
			t.Fatalf("affected %q, want %q\n%+v", got, tc.want, vs)
		}
		for _, v := range vs {
			if v.Affected && v.Unit == tc.want[0] && v.Input != tc.input {
				t.Errorf("%s: first differing input %q, want %q (%s)", v.Unit, v.Input, tc.input, v.Why)
			}
			if !v.Affected && !strings.HasPrefix(v.Why, "inputs identical to the base's") {
				t.Errorf("%s: unaffected because %q", v.Unit, v.Why)
			}
		}
	}
	for _, tc := range []testCase{
		{name: "one package of ten", change: map[string]string{"p5/p5.go": "package p5\n\nfunc F() int { return 55 }\n"},
			want: []string{"./p5"}, input: "p5/p5.go"},
		{name: "a package three others import", change: map[string]string{"p0/p0.go": "package p0\n\nfunc F() int { return 100 }\n"},
			want: []string{"./p0", "./p1", "./p2", "./p3"}, input: "p0/p0.go"},
		{name: "go.mod", change: map[string]string{"go.mod": "module example.com/ten\n\ngo 1.23\n"},
			want: all, input: "go.mod"},
		{name: "go.sum added", change: map[string]string{"go.sum": "\n"},
			want: all, input: "go.sum"},
		// A data file reaches every package (rule 7): code that runs
		// before the test log starts may read it unseen. (A check's
		// graded tree holds the base's testdata: a patch cannot change it.)
		{name: "testdata", change: map[string]string{"p6/testdata/input.txt": "SIX\n"},
			want: all, input: "p6/testdata/input.txt"},
		{name: "an embedded file", change: map[string]string{"p7/data.txt": "SEVEN\n"},
			want: all, input: "p7/data.txt"},
		{name: "a data file outside every package", change: map[string]string{"conf/limit.txt": "11\n"},
			want: all, input: "conf/limit.txt"},
		{name: "a new import", change: map[string]string{"p9/p9.go": "package p9\n\nimport \"example.com/ten/p4\"\n\nfunc F() int { return p4.F() }\n"},
			want: []string{"./p9"}, input: "p9/p9.go"},
		{name: "a file the build ignores, in the package's folder", change: map[string]string{"p4/gen.go": "//go:build ignore\n\npackage main\n"},
			want: []string{"./p4"}, input: "p4/gen.go"},
		{name: "nothing", change: nil, want: nil},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// readingModule is a module whose tests read outside their folders: a
// reads ../common/data.go; b reads nothing; c may start a process; d
// changes to ../common and lists the folder listed. What they read are
// Go files (code): a change to a data file reaches every package (rule
// 7), so the test log decides only code read as data.
func readingModule() map[string]string {
	return map[string]string{
		"go.mod":               "module example.com/reads\n\ngo 1.22\n",
		"common/data.go":       "package common\n",
		"common/other.go":      "package common\n",
		"common/listed/one.go": "package listed\n",
		"a/a.go":               "package a\n",
		"a/a_test.go": "package a\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\n" +
			"func TestRead(t *testing.T) {\n\tif _, err := os.ReadFile(\"../common/data.go\"); err != nil {\n\t\tt.Fatal(err)\n\t}\n}\n",
		"b/b.go":      "package b\n",
		"b/b_test.go": "package b\n\nimport \"testing\"\n\nfunc TestNothing(t *testing.T) {}\n",
		"c/c.go":      "package c\n",
		"c/c_test.go": "package c\n\nimport (\n\t\"os/exec\"\n\t\"testing\"\n)\n\nfunc TestLook(t *testing.T) { _, _ = exec.LookPath(\"sh\") }\n",
		"d/d.go":      "package d\n",
		"d/d_test.go": "package d\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\n" +
			"func TestList(t *testing.T) {\n\tt.Chdir(\"../common\")\n\tif _, err := os.ReadDir(\"listed\"); err != nil {\n\t\tt.Fatal(err)\n\t}\n}\n",
	}
}

// TestGoTestlog runs the base's tests with their test log kept
// (GoTestlogArgv), reads what each package read, and decides changes
// outside every package's folder by it.
func TestGoTestlog(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs four test binaries; run without -short")
	}
	t.Parallel()
	baseDir := filepath.Join(t.TempDir(), "base")
	writeTree(t, baseDir, readingModule())
	base := listGo(t, baseDir)
	out, err := runIn(baseDir)(context.Background(), impact.GoTestlogArgv(base.Packages(), "-shuffle=1"))
	if err != nil {
		t.Fatal(err)
	}
	reads, err := impact.ReadGoTestlogs(bytes.NewReader(out), base)
	if err != nil {
		t.Fatal(err)
	}
	if len(reads) != 4 || !reads["./a"].Paths["common/data.go"] || !reads["./d"].Paths["common/listed"] || reads["./b"] == nil {
		t.Fatalf("reads: %v\n%s", reads, out)
	}
	if took, err := impact.ReadGoElapsed(bytes.NewReader(out), base); err != nil || len(took) != 4 || took["./a"] < 0 {
		t.Fatalf("elapsed: %v, %v", took, err)
	}
	type testCase struct {
		name   string
		change map[string]string
		reads  map[string]*impact.GoReads
		want   []string
	}
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		candDir := filepath.Join(t.TempDir(), "cand")
		cand := readingModule()
		maps.Copy(cand, tc.change)
		writeTree(t, candDir, cand)
		vs, err := impact.Go(impact.GoInput{Trees: compare(t, baseDir, candDir), Base: base, Candidate: listGo(t, candDir), Reads: tc.reads})
		if err != nil {
			t.Fatal(err)
		}
		if got := affectedUnits(vs); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("affected %q, want %q\n%+v", got, tc.want, vs)
		}
	}
	for _, tc := range []testCase{
		{name: "a file one package reads", change: map[string]string{"common/data.go": "package common\n\n// Data.\n"}, reads: reads,
			want: []string{"./a", "./c"}},
		{name: "a file no package reads", change: map[string]string{"common/other.go": "package common\n\n// Other.\n"}, reads: reads,
			want: []string{"./c"}},
		{name: "a file added to a folder one package lists", change: map[string]string{"common/listed/two.go": "package listed\n"}, reads: reads,
			want: []string{"./c", "./d"}},
		{name: "a data file no package reads", change: map[string]string{"common/notes.txt": "notes\n"}, reads: reads,
			want: []string{"./a", "./b", "./c", "./d"}},
		{name: "no test log", change: map[string]string{"common/other.go": "package common\n\n// Other.\n"}, reads: nil,
			want: []string{"./a", "./b", "./c", "./d"}},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}
