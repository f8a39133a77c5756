package e2e_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flakegate/flakegate"
	"golang.org/x/net/html"
)

// TestExampleRecords: each hand-written record under examples/records
// classifies as the label its file name starts with.
func TestExampleRecords(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("..", "examples", "records", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no example records: %v", err)
	}
	seen := map[flakegate.Label]bool{}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			want := flakegate.Label(strings.ToUpper(strings.SplitN(strings.TrimSuffix(filepath.Base(f), ".json"), "-", 2)[0]))
			d := flakegate.ClassifyBytes(raw)
			if d.Label != want {
				t.Errorf("label %s (row %d, %s), want %s", d.Label, d.Row, d.Reason, want)
			}
			seen[d.Label] = true
		})
	}
	for _, l := range flakegate.Labels {
		if !seen[l] {
			t.Errorf("no example record for %s", l)
		}
	}
}

// TestDemo runs the demo `make demo` runs, with the test's binary, and
// reads what it promises from what it wrote, not from its text: each
// property's label from its run records (classified again here), the freeze
// of the SCHEDULER record from the ledger (freeze list --json), and that
// freeze on the ledger's HTML page.
func TestDemo(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end: the demo")
	}
	dir := filepath.Join(t.TempDir(), "demo")
	cmd := exec.Command(filepath.Join("..", "examples", "demo", "run-demo.sh"), flakegateBin, dir)
	cmd.Env = cleanEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("run-demo.sh: %v\n%s", err, out)
	}
	want := map[string]flakegate.Label{
		"props/pass.sh": flakegate.Pass, "props/scheduler.sh": flakegate.Scheduler,
		"props/property.sh": flakegate.Property, "props/budget.sh": flakegate.Budget,
		"props/crash.sh": flakegate.Incomplete, "props/fixture.sh": flakegate.Fixture,
		"props/contaminated.sh": flakegate.Contaminated,
	}
	scheduler := demoLabels(t, filepath.Join(dir, "out", "candidate"), want, out)
	demoFreeze(t, dir, scheduler)
}

// demoLabels classifies every run record of the demo's candidate check and
// checks each property's label against want (both seeds of each); it
// returns the record_sha256 of seed 1400's SCHEDULER record.
func demoLabels(t *testing.T, dir string, want map[string]flakegate.Label, out []byte) string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*-seed-*[0-9].json"))
	if err != nil || len(files) != 14 {
		t.Fatalf("%d run records in %s (%v), want 14 (two seeds of seven properties)\n%s", len(files), dir, err, out)
	}
	seen := map[flakegate.Label]int{}
	var scheduler string
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var rec flakegate.RunRecord
		if err := json.Unmarshal(raw, &rec); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		d := flakegate.ClassifyBytes(raw)
		if d.Label != want[rec.PropertyPath] {
			t.Errorf("%s seed %v: %s (%s), want %s", rec.PropertyPath, rec.Seed, d.Label, d.Reason, want[rec.PropertyPath])
		}
		seen[d.Label]++
		if d.Label == flakegate.Scheduler && rec.Seed.String() == "1400" {
			scheduler = d.RecordSHA256
		}
	}
	for _, l := range flakegate.Labels {
		if seen[l] != 2 {
			t.Errorf("the demo's records show %s %d times, want 2 (one property, two seeds)", l, seen[l])
		}
	}
	if scheduler == "" {
		t.Fatalf("no SCHEDULER record of props/scheduler.sh seed 1400\n%s", out)
	}
	return scheduler
}

// demoFreeze checks that the demo's ledger holds exactly one freeze, of the
// SCHEDULER record recordSHA, and that the ledger's HTML page shows it.
func demoFreeze(t *testing.T, dir, recordSHA string) {
	t.Helper()
	cmd := exec.Command(flakegateBin, "freeze", "list", "--json")
	cmd.Dir = filepath.Join(dir, "repo")
	cmd.Env = cleanEnv()
	raw, err := cmd.Output()
	if err != nil {
		t.Fatalf("freeze list: %v", err)
	}
	var freezes []struct {
		Label        string `json:"label"`
		PropertyPath string `json:"property_path"`
		Seed         int    `json:"seed"`
		RecordSHA256 string `json:"record_sha256"`
		Owner        string `json:"owner"`
	}
	if err := json.Unmarshal(raw, &freezes); err != nil {
		t.Fatalf("freeze list --json: %v\n%s", err, raw)
	}
	if len(freezes) != 1 || freezes[0].Label != "SCHEDULER" || freezes[0].PropertyPath != "props/scheduler.sh" ||
		freezes[0].Seed != 1400 || freezes[0].RecordSHA256 != recordSHA || freezes[0].Owner != "demo@example.com" {
		t.Fatalf("the ledger's freezes are %s, want one of props/scheduler.sh seed 1400, record %s, owner demo@example.com", raw, recordSHA)
	}
	page, err := os.ReadFile(filepath.Join(dir, "out", "ledger.html"))
	if err != nil {
		t.Fatal(err)
	}
	rows := htmlTableRows(t, page, "freeze-table")
	if len(rows) != 1 || len(rows[0]) < 6 || rows[0][0] != "props/scheduler.sh" || rows[0][1] != "1400" ||
		!strings.HasPrefix(recordSHA, rows[0][5]) {
		t.Errorf("the ledger page's freezes are %q, want one row of props/scheduler.sh seed 1400, record %s", rows, recordSHA[:12])
	}
}

// htmlTableRows returns the text of each cell of each body row of the
// table whose id is id, or none when the page has no such table.
func htmlTableRows(t *testing.T, page []byte, id string) [][]string {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	var table *html.Node
	for n := range doc.Descendants() {
		if n.Type == html.ElementNode && n.Data == "table" && htmlAttr(n, "id") == id {
			table = n
			break
		}
	}
	if table == nil {
		return nil
	}
	var rows [][]string
	for tr := range table.Descendants() {
		if tr.Type != html.ElementNode || tr.Data != "tr" || tr.Parent == nil || tr.Parent.Data != "tbody" {
			continue
		}
		var cells []string
		for td := range tr.ChildNodes() {
			if td.Type == html.ElementNode && td.Data == "td" {
				cells = append(cells, strings.Join(strings.Fields(htmlText(td)), " "))
			}
		}
		rows = append(rows, cells)
	}
	return rows
}

func htmlAttr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func htmlText(n *html.Node) string {
	var b strings.Builder
	for d := range n.Descendants() {
		if d.Type == html.TextNode {
			b.WriteString(d.Data)
		}
	}
	return b.String()
}
