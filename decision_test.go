package flakegate

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestAppendJSONStringMatchesEncodingJSON: decisions write strings exactly
// as encoding/json does, over hand-picked and random strings.
func TestAppendJSONStringMatchesEncodingJSON(t *testing.T) {
	cases := []string{"", "plain", `say "hi"`, `back\slash`, "<a href='x'>&</a>", "tab\tnl\ncr\r\x00\x1f\x7f",
		"café 中 😀", "\u2028\u2029", "bad \xff utf-8 \xe2\x82", "\xed\xa0\x80", "\b\f"}
	rnd := rand.New(rand.NewPCG(5, 8))
	alphabet := []string{"a", "\"", "\\", "<", ">", "&", "\n", "\x01", "\x7f", "é", "中", "😀", "\u2028", "\xff", "\xc3", " "}
	for range 20000 {
		var b strings.Builder
		for n := rnd.IntN(12); n > 0; n-- {
			b.WriteString(alphabet[rnd.IntN(len(alphabet))])
		}
		cases = append(cases, b.String())
	}
	for _, s := range cases {
		want, _ := json.Marshal(s)
		if got := appendJSONString([]byte("x"), s); string(got) != "x"+string(want) {
			t.Fatalf("%q: got %s, want %s", s, got[1:], want)
		}
	}
}

// TestDecisionJSON: the decision's JSON reads back with every field.
func TestDecisionJSON(t *testing.T) {
	d := Decision{Label: Scheduler, Freeze: true, Row: 9, RecordSHA256: strings.Repeat("a", 64), Missing: []string{},
		Paths: []string{"a<b", "é"}, Reason: `want "pass"`, Seed: Seed(`"s-1"`), PropertyPath: "p.py", FixtureSHA256: "ff"}
	out, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(out, &back); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	for k, want := range map[string]any{"label": "SCHEDULER", "freeze": true, "row": 9.0, "reason": `want "pass"`, "seed": "s-1", "property_path": "p.py", "fixture_sha256": "ff"} {
		if back[k] != want {
			t.Errorf("%s: %v, want %v (%s)", k, back[k], want, out)
		}
	}
	if len(back["missing"].([]any)) != 0 || len(back["paths"].([]any)) != 2 {
		t.Errorf("missing/paths: %s", out)
	}
}
