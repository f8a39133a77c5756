package e2e_test

import (
	"os"
	"strings"
	"testing"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/check"
)

// TestBatchRecordsInProcess runs a check of one Go batch in process (so
// the race detector sees the finisher write a batch's records a few at
// a time) and verifies each record: its label from its own bytes, its
// file, and its progress in the batch's order.
func TestBatchRecordsInProcess(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end: runs git and go test")
	}
	needTool(t, "go")
	test := func(pkg string) string {
		return "package " + pkg + "\n\nimport (\n\t\"flag\"\n\t\"testing\"\n)\n\n" + goSeedFlag +
			"func TestOne(t *testing.T) {\n\tif Double(2) != 4 {\n\t\tt.Fatal(\"Double(2) is not 4\")\n\t}\n}\n\nfunc TestTwo(t *testing.T) {}\n\nfunc TestThree(t *testing.T) {}\n"
	}
	cfg := strings.Replace(goBatchHead, "version: 1\n", "version: 1\nsandbox:\n  mode: none\n", 1)
	for _, pkg := range []string{"p1", "p2", "p3"} {
		for _, name := range []string{"TestOne", "TestTwo", "TestThree"} {
			cfg += goBatchEntry(pkg, name, "")
		}
	}
	files := map[string]string{"go.mod": "module example.com/inproc\n\ngo 1.21\n", "README.md": "in process\n", "flakegate.yaml": cfg}
	for _, pkg := range []string{"p1", "p2", "p3"} {
		files[pkg+"/"+pkg+".go"] = "package " + pkg + "\n\nfunc Double(x int) int { return 2 * x }\n"
		files[pkg+"/"+pkg+"_test.go"] = test(pkg)
	}
	r := newRepo(t, files)
	r.candidate("bad", map[string]string{"p2/p2.go": "package p2\n\nfunc Double(x int) int { return x * x * x }\n"})
	h := &batchHandler{}
	sum, err := check.Run(t.Context(), check.Options{
		Dir: r.dir, Base: "base", Candidate: "bad", Env: cleanEnv(), Progress: h,
		OpenStore: openEmbeddedStore,
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "PASS,PASS,PASS,PROPERTY,PASS,PASS,PASS,PASS,PASS"
	var got []string
	for _, res := range sum.Results {
		got = append(got, string(res.Label))
		raw, err := os.ReadFile(res.Record)
		if err != nil {
			t.Fatal(err)
		}
		if sha, err := flakegate.RecordSHA256(raw); err != nil || sha != res.RecordSHA256 || flakegate.ClassifyBytes(raw).Label != res.Label {
			t.Errorf("%s: the record file does not give its result (%v)", res.Name, err)
		}
	}
	if strings.Join(got, ",") != want {
		t.Fatalf("labels %s, want %s", strings.Join(got, ","), want)
	}
	if len(h.batches) != 1 || h.batches[0] != want {
		t.Errorf("batch progress %v, want one batch %s", h.batches, want)
	}
}

// batchHandler keeps each batch's labels (BatchDone).
type batchHandler struct {
	recordingHandler
	batches []string
}

func (h *batchHandler) BatchDone(head string, rs []flakegate.Result) {
	var ls []string
	for _, r := range rs {
		ls = append(ls, string(r.Label))
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.batches = append(h.batches, strings.Join(ls, ","))
}
