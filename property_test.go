package flakegate_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/flakegate/flakegate"
	"pgregory.net/rapid"
)

// jsonNode is a JSON value as these tests build it: objects keep their
// members in the order drawn, numbers keep their literal text, so one node
// can be written out in many byte layouts that mean the same record.
type jsonNode struct {
	kind  jsonKind
	text  string // number literal or string value
	b     bool
	elems []jsonNode
	keys  []string
	vals  []jsonNode
}

type jsonKind uint8

const (
	jNull jsonKind = iota
	jBool
	jNum
	jStr
	jArr
	jObj
)

func jStrNode(s string) jsonNode  { return jsonNode{kind: jStr, text: s} }
func jNumNode(s string) jsonNode  { return jsonNode{kind: jNum, text: s} }
func jBoolNode(b bool) jsonNode   { return jsonNode{kind: jBool, b: b} }
func jStrs(ss ...string) jsonNode { return jsonNode{kind: jArr, elems: strNodes(ss)} }

func strNodes(ss []string) []jsonNode {
	out := make([]jsonNode, len(ss))
	for i, s := range ss {
		out[i] = jStrNode(s)
	}
	return out
}

// set adds or replaces a member of an object node.
func (n *jsonNode) set(key string, v jsonNode) {
	for i, k := range n.keys {
		if k == key {
			n.vals[i] = v
			return
		}
	}
	n.keys = append(n.keys, key)
	n.vals = append(n.vals, v)
}

func (n *jsonNode) has(key string) bool {
	for _, k := range n.keys {
		if k == key {
			return true
		}
	}
	return false
}

// insertAt adds a member at position i of an object node.
func (n *jsonNode) insertAt(i int, key string, v jsonNode) {
	n.keys = append(n.keys[:i:i], append([]string{key}, n.keys[i:]...)...)
	n.vals = append(n.vals[:i:i], append([]jsonNode{v}, n.vals[i:]...)...)
}

// jsonLayout is how a node is written. The zero layout writes members in
// stored order, no whitespace and only the escapes JSON requires.
type jsonLayout struct {
	rnd     *rand.Rand
	reorder bool // members of every object in a random order
	reverse bool // members of every object in reverse order
	spaces  bool // random whitespace between tokens
	escapes bool // random \uXXXX, \/ and short escapes
}

func layoutFrom(seed uint64, reorder, spaces, escapes bool) *jsonLayout {
	return &jsonLayout{rnd: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), reorder: reorder, spaces: spaces, escapes: escapes}
}

func (n jsonNode) encode(l *jsonLayout) []byte {
	if l == nil {
		l = &jsonLayout{}
	}
	var b bytes.Buffer
	l.ws(&b)
	l.write(&b, n)
	l.ws(&b)
	return b.Bytes()
}

var jsonSpaces = []string{"", " ", "\n", "\t", "\r\n", "  ", " \n\t "}

func (l *jsonLayout) ws(b *bytes.Buffer) {
	if l.spaces {
		b.WriteString(jsonSpaces[l.rnd.IntN(len(jsonSpaces))])
	}
}

func (l *jsonLayout) write(b *bytes.Buffer, n jsonNode) {
	switch n.kind {
	case jNull:
		b.WriteString("null")
	case jBool:
		b.WriteString(strconv.FormatBool(n.b))
	case jNum:
		b.WriteString(n.text)
	case jStr:
		l.writeString(b, n.text)
	case jArr:
		b.WriteByte('[')
		for i, e := range n.elems {
			if i > 0 {
				l.ws(b)
				b.WriteByte(',')
			}
			l.ws(b)
			l.write(b, e)
			l.ws(b)
		}
		b.WriteByte(']')
	case jObj:
		order := make([]int, len(n.keys))
		for i := range order {
			order[i] = i
		}
		switch {
		case l.reorder:
			l.rnd.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		case l.reverse:
			for i, j := 0, len(order)-1; i < j; i, j = i+1, j-1 {
				order[i], order[j] = order[j], order[i]
			}
		}
		b.WriteByte('{')
		for i, k := range order {
			if i > 0 {
				b.WriteByte(',')
			}
			l.ws(b)
			l.writeString(b, n.keys[k])
			l.ws(b)
			b.WriteByte(':')
			l.ws(b)
			l.write(b, n.vals[k])
			l.ws(b)
		}
		b.WriteByte('}')
	}
}

func (l *jsonLayout) writeString(b *bytes.Buffer, s string) {
	b.WriteByte('"')
	for _, r := range s {
		escape := l.escapes && l.rnd.IntN(3) == 0
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || escape:
			if short, ok := shortEscapes[r]; ok && (!escape || l.rnd.IntN(2) == 0) {
				b.WriteString(short)
				continue
			}
			if r == '/' {
				b.WriteString(`\/`)
				continue
			}
			if r >= 0x10000 {
				r -= 0x10000
				writeU(b, 0xD800+(r>>10), l)
				writeU(b, 0xDC00+(r&0x3FF), l)
				continue
			}
			writeU(b, r, l)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}

var shortEscapes = map[rune]string{'\b': `\b`, '\f': `\f`, '\n': `\n`, '\r': `\r`, '\t': `\t`}

func writeU(b *bytes.Buffer, r rune, l *jsonLayout) {
	s := fmt.Sprintf(`\u%04x`, r)
	if l.escapes && l.rnd.IntN(2) == 0 {
		s = `\u` + strings.ToUpper(s[2:])
	}
	b.WriteString(s)
}

// Generators.

var propRunes = []rune{'"', '\\', '/', 0, 0x1f, 0x7f, 'a', 'Z', ' ', 0xe9, 0x4e2d, 0x1f600, 0x2028, 0xffff, 0x10ffff}

func drawString(t *rapid.T, label string) string {
	return rapid.StringOfN(rapid.RuneFrom(propRunes, unicode.Latin, unicode.Han, unicode.So, unicode.Cc, unicode.Zs, unicode.Zl), 0, 8, -1).Draw(t, label)
}

var specialNumbers = []string{
	"0", "-0", "1", "-1", "1402", "1.0", "-0.0", "0.0", "0e0", "1e-05", "1e+16", "1E2", "5e-324",
	"1.7976931348623157e+308", "9007199254740993.0", "0.1", "1e22", "123456789012345678.0",
	"-1.5e-7", "1e-400", "1e15", "0.0001", "10.50",
}

func drawNumber(t *rapid.T, label string) string {
	switch rapid.IntRange(0, 4).Draw(t, label+" form") {
	case 0:
		return rapid.SampledFrom(specialNumbers).Draw(t, label)
	case 1:
		return strconv.Itoa(rapid.IntRange(-1_000_000, 1_000_000).Draw(t, label))
	case 2:
		digits := rapid.StringOfN(rapid.RuneFrom([]rune("0123456789")), 15, 300, -1).Draw(t, label)
		sign := rapid.SampledFrom([]string{"", "-"}).Draw(t, label+" sign")
		return sign + "1" + digits
	default:
		f := rapid.Float64().Draw(t, label)
		s := strconv.FormatFloat(f, rapid.SampledFrom([]byte("eg")).Draw(t, label+" fmt"), -1, 64)
		if rapid.Bool().Draw(t, label+" respell") {
			// The same float, spelled differently: upper-case E, padded mantissa.
			mant, exp, ok := strings.Cut(s, "e")
			if !strings.Contains(mant, ".") {
				mant += "."
			}
			mant += "000"
			if ok {
				s = mant + "E" + exp
			} else {
				s = mant
			}
		}
		return s
	}
}

func drawValue(t *rapid.T, label string, depth int) jsonNode {
	max := 5
	if depth <= 0 {
		max = 3
	}
	switch rapid.IntRange(0, max).Draw(t, label+" kind") {
	case 0:
		return jsonNode{kind: jNull}
	case 1:
		return jBoolNode(rapid.Bool().Draw(t, label))
	case 2:
		return jNumNode(drawNumber(t, label))
	case 3:
		return jStrNode(drawString(t, label))
	case 4:
		n := jsonNode{kind: jArr}
		for i := range rapid.IntRange(0, 4).Draw(t, label+" len") {
			n.elems = append(n.elems, drawValue(t, fmt.Sprintf("%s[%d]", label, i), depth-1))
		}
		return n
	default:
		n := jsonNode{kind: jObj}
		for i := range rapid.IntRange(0, 4).Draw(t, label+" len") {
			k := drawString(t, fmt.Sprintf("%s key %d", label, i))
			if !n.has(k) {
				n.set(k, drawValue(t, label+"."+k, depth-1))
			}
		}
		return n
	}
}

var (
	recPropPath = "tests/props/test_retry_budget.py"
	recGenPath  = "tools/gen_retry_fixture.py"
	recPaths    = []string{"src/retry.py", recGenPath, "docs/é.md", "tests/fixtures/retry/a.json"}
	recUnclean  = []string{"./" + recPropPath, "tests//props/test_retry_budget.py", "./src/retry.py"}
	recRetries  = [][]string{{"pass"}, {"fail", "pass"}, {}, {"fail"}, {"fail", "fail", "pass"}, {"pass", "fail"}}
)

// drawRecord draws a run record that reaches every row of the table: most
// keys well-typed from small domains, now and then a key missing or of a
// random type, plus unknown keys of random values.
func drawRecord(t *rapid.T) jsonNode {
	rec, _ := drawRunRecord(t)
	return rec
}

// drawRunRecord is drawRecord, and also reports whether the record is
// plain: no key of a random type, every path already clean, no watch_paths
// and no envs. On a plain record the contract (docs/design.md) is no
// stricter than the listing, so both must give the same label.
func drawRunRecord(t *rapid.T) (jsonNode, bool) {
	rec := jsonNode{kind: jObj}
	plain := true
	clean := func(paths ...string) {
		for _, p := range paths {
			if strings.HasPrefix(p, "./") || strings.Contains(p, "//") {
				plain = false
			}
		}
	}
	put := func(key string, v jsonNode) {
		// rapid favours the ends of a range: the rare cases sit in the middle.
		switch rapid.IntRange(0, 99).Draw(t, key+" mode") {
		case 37: // missing
		case 63:
			plain = false
			rec.set(key, drawValue(t, key+" odd", 1))
		default:
			rec.set(key, v)
		}
	}
	var seed jsonNode
	if rapid.Bool().Draw(t, "int seed") {
		seed = jNumNode(drawNumber(t, "seed"))
		if strings.ContainsAny(seed.text, ".eE") {
			seed = jNumNode(strconv.Itoa(rapid.IntRange(-5, 5000).Draw(t, "seed int")))
		}
	} else {
		seed = jStrNode(rapid.StringMatching(`[A-Za-z0-9._:-]{1,12}`).Draw(t, "seed"))
	}
	put("run_id", jStrNode("run-"+strconv.Itoa(rapid.IntRange(0, 999).Draw(t, "run"))))
	put("seed", seed)
	propPath := rapid.SampledFrom([]string{recPropPath, "tests/props/other.py", "./" + recPropPath, "tests/props/other.py", recPropPath}).Draw(t, "property_path")
	clean(propPath)
	put("property_path", jStrNode(propPath))
	put("property_sha256", jStrNode(strings.Repeat("p", 64)))
	put("fixture_sha256", jStrNode(rapid.SampledFrom([]string{strings.Repeat("f", 64), strings.Repeat("f", 64), strings.Repeat("e", 64)}).Draw(t, "fixture")))
	put("base_fixture_sha256", jStrNode(strings.Repeat("f", 64)))
	diff := rapid.SliceOfN(rapid.SampledFrom(recPaths), 0, 3).Draw(t, "diff_paths")
	if rapid.IntRange(0, 9).Draw(t, "unclean diff") == 4 {
		diff = append(diff, rapid.SampledFrom(recUnclean).Draw(t, "unclean path"))
	}
	clean(diff...)
	put("diff_paths", jStrs(diff...))
	if rapid.IntRange(0, 9).Draw(t, "contaminate") == 4 {
		rec.set("diff_paths", jStrs(recPropPath))
	}
	put("candidate_result", jStrNode(rapid.SampledFrom([]string{"fail", "pass", "fail"}).Draw(t, "candidate")))
	put("base_seed_result", jStrNode(rapid.SampledFrom([]string{"pass", "pass", "fail", "not_run"}).Draw(t, "base")))
	put("retry_results", jStrs(rapid.SampledFrom(recRetries).Draw(t, "retries")...))
	put("retry_cap", jNumNode(rapid.SampledFrom([]string{"2", "1", "0", "3", "-0"}).Draw(t, "cap")))
	put("budget_ok", jBoolNode(rapid.IntRange(0, 9).Draw(t, "budget") != 4))
	put("transcript_complete", jBoolNode(rapid.IntRange(0, 9).Draw(t, "transcript") != 6))
	if rapid.Bool().Draw(t, "generator") {
		gen := rapid.SampledFrom([]jsonNode{{kind: jNull}, jStrNode(recGenPath), jStrNode("./" + recGenPath), jStrNode(recGenPath), {kind: jNull}}).Draw(t, "generator path")
		clean(gen.text)
		rec.set("fixture_generator_path", gen)
	}
	if rapid.IntRange(0, 9).Draw(t, "watch") == 3 {
		plain = false
		rec.set("watch_paths", jStrs(rapid.SliceOfN(rapid.SampledFrom([]string{"src/", "src/retry.py", "tests/fixtures/", "docs"}), 0, 2).Draw(t, "watch_paths")...))
	}
	env := func(label string) jsonNode {
		n := jsonNode{kind: jObj}
		n.set("workers", jNumNode(rapid.SampledFrom([]string{"1", "1", "2"}).Draw(t, label+" workers")))
		n.set("clock_budget_s", jNumNode(rapid.SampledFrom([]string{"60", "60", "60.0", "90"}).Draw(t, label+" clock")))
		n.set("filesystem", jStrNode(rapid.SampledFrom([]string{"ext4", "ext4", "tmpfs"}).Draw(t, label+" fs")))
		return n
	}
	switch rapid.IntRange(0, 9).Draw(t, "envs") {
	case 3, 4:
		plain = false
		rec.set("candidate_env", env("candidate"))
		rec.set("base_env", env("base"))
	case 5:
		plain = false
		rec.set(rapid.SampledFrom([]string{"candidate_env", "base_env"}).Draw(t, "one env"), env("one"))
	}
	for i := range rapid.IntRange(0, 3).Draw(t, "unknown keys") {
		k := "x_" + drawString(t, fmt.Sprintf("unknown key %d", i))
		if !rec.has(k) {
			rec.set(k, drawValue(t, k, 3))
		}
	}
	// Members in a drawn order, so "stored order" is itself arbitrary.
	perm := rapid.Permutation(indexes(len(rec.keys))).Draw(t, "member order")
	out := jsonNode{kind: jObj}
	for _, i := range perm {
		out.set(rec.keys[i], rec.vals[i])
	}
	return out, plain
}

func indexes(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// Properties.

func TestPropertyFreezeExactlyForScheduler(t *testing.T) {
	check := func(t *rapid.T, raw []byte) {
		d := flakegate.ClassifyBytes(raw)
		if !d.Label.Known() {
			t.Fatalf("label %q is not one of the seven for %q", d.Label, raw)
		}
		if d.Freeze != (d.Label == flakegate.Scheduler) {
			t.Fatalf("label %s with freeze=%v for %q", d.Label, d.Freeze, raw)
		}
	}
	t.Run("records", rapid.MakeCheck(func(t *rapid.T) {
		check(t, drawRecord(t).encode(nil))
	}))
	t.Run("any bytes", rapid.MakeCheck(func(t *rapid.T) {
		check(t, rapid.SliceOfN(rapid.Byte(), 0, 64).Draw(t, "bytes"))
	}))
	t.Run("any JSON value", rapid.MakeCheck(func(t *rapid.T) {
		check(t, drawValue(t, "value", 4).encode(nil))
	}))
	t.Run("cut records", rapid.MakeCheck(func(t *rapid.T) {
		raw := drawRecord(t).encode(nil)
		cut := rapid.IntRange(0, len(raw)).Draw(t, "cut")
		check(t, raw[:cut])
	}))
}

func TestPropertyUnrelatedKeyKeepsLabel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		rec := drawRecord(t)
		before := flakegate.ClassifyBytes(rec.encode(nil))
		key := "zz_unrelated_" + drawString(t, "key")
		if rec.has(key) {
			t.Skip("key drawn twice")
		}
		rec.insertAt(rapid.IntRange(0, len(rec.keys)).Draw(t, "at"), key, drawValue(t, "value", 3))
		after := flakegate.ClassifyBytes(rec.encode(nil))
		if after.Label != before.Label || after.Freeze != before.Freeze {
			t.Fatalf("adding %q changed %s/%v to %s/%v (%s)", key, before.Label, before.Freeze, after.Label, after.Freeze, after.Reason)
		}
	})
}

// sameRecordTwice classifies two layouts of one record and wants the same
// hash and label.
func sameRecordTwice(t *rapid.T, a, b []byte) {
	da, db := flakegate.ClassifyBytes(a), flakegate.ClassifyBytes(b)
	if da.RecordSHA256 == "" {
		t.Fatalf("no hash for a generated record: %s\n%s", da.Reason, a)
	}
	if da.RecordSHA256 != db.RecordSHA256 || da.Label != db.Label {
		t.Fatalf("two layouts of one record differ: %s %s vs %s %s\n%s\n%s", da.Label, da.RecordSHA256, db.Label, db.RecordSHA256, a, b)
	}
	ha, erra := flakegate.RecordSHA256(a)
	hb, errb := flakegate.RecordSHA256(b)
	if erra != nil || errb != nil || ha != da.RecordSHA256 || hb != ha {
		t.Fatalf("RecordSHA256 disagrees with ClassifyBytes: %s %v / %s %v / %s", ha, erra, hb, errb, da.RecordSHA256)
	}
}

func TestPropertyKeyOrderKeepsHash(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		rec := drawRecord(t)
		seed := rapid.Uint64().Draw(t, "layout seed")
		sameRecordTwice(t, rec.encode(nil), rec.encode(layoutFrom(seed, true, false, false)))
	})
}

func TestPropertyWhitespaceKeepsHash(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		rec := drawRecord(t)
		seed := rapid.Uint64().Draw(t, "layout seed")
		sameRecordTwice(t, rec.encode(nil), rec.encode(layoutFrom(seed, false, true, false)))
	})
}

func TestPropertyEscapesKeepHash(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		rec := drawRecord(t)
		seed := rapid.Uint64().Draw(t, "layout seed")
		sameRecordTwice(t, rec.encode(nil), rec.encode(layoutFrom(seed, false, false, true)))
	})
}

type drawnRecord struct {
	raw   []byte
	plain bool
}

// listingRecords are 300 records drawn from fixed seeds, each written in a
// layout of its own, so the run is the same every time.
func listingRecords() ([][]byte, []bool) {
	gen := rapid.Custom(func(t *rapid.T) drawnRecord {
		rec, plain := drawRunRecord(t)
		seed := rapid.Uint64().Draw(t, "layout seed")
		return drawnRecord{rec.encode(layoutFrom(seed, true, false, true)), plain}
	})
	raws, plains := make([][]byte, 300), make([]bool, 300)
	for i := range raws {
		r := gen.Example(1400 + i)
		raws[i], plains[i] = r.raw, r.plain
	}
	return raws, plains
}

// updateListing regenerates testdata/listing/ from the spec's listing.
var updateListing = flag.Bool("update-listing", false,
	"regenerate testdata/listing/*.jsonl by running the spec's listing through testdata/vectors/gen.py "+
		"(the spec's path in FLAKEGATE_SPEC, default ../shared/spec/flake-freeze-ledger.txt)")

// listingCase is one line of testdata/listing/NAME.jsonl: an input drawn
// by these tests and what the spec's listing printed for it: its hash
// (gen.py --hash) and, for records, its decision (gen.py --decide). The
// tests read only these committed lines; -update-listing draws the inputs
// again and runs the listing to rewrite them.
type listingCase struct {
	Input    string `json:"input"`
	Plain    bool   `json:"plain,omitempty"`
	Hash     string `json:"hash"`
	Decision string `json:"decision,omitempty"`
}

// listingCases returns the committed cases of testdata/listing/NAME.jsonl,
// or with -update-listing draws them (draw), runs the listing over them
// (with decisions when decide is set) and writes the file first.
func listingCases(t *testing.T, name string, decide bool, draw func() ([][]byte, []bool)) []listingCase {
	t.Helper()
	file := filepath.Join("testdata", "listing", name+".jsonl")
	if *updateListing {
		inputs, plain := draw()
		hashes := runListing(t, "--hash", inputs)
		var decisions []string
		if decide {
			decisions = runListing(t, "--decide", inputs)
		}
		var b bytes.Buffer
		for i, in := range inputs {
			if !utf8.Valid(in) || bytes.ContainsAny(in, "\r\n") {
				t.Fatalf("drawn input %d is not one line of UTF-8: %q", i, in)
			}
			c := listingCase{Input: string(in), Hash: hashes[i]}
			if decide {
				c.Decision = decisions[i]
			}
			if plain != nil {
				c.Plain = plain[i]
			}
			line, err := json.Marshal(c)
			if err != nil {
				t.Fatal(err)
			}
			b.Write(line)
			b.WriteByte('\n')
		}
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (go test -run %s -update-listing writes it, given the spec)", err, t.Name())
	}
	var cases []listingCase
	for i, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
		var c listingCase
		if err := json.Unmarshal(line, &c); err != nil {
			t.Fatalf("%s line %d: %v", file, i+1, err)
		}
		cases = append(cases, c)
	}
	return cases
}

// runListing runs testdata/vectors/gen.py in the given mode with lines on
// stdin and returns its output lines; only -update-listing calls it.
func runListing(t *testing.T, mode string, lines [][]byte) []string {
	t.Helper()
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("-update-listing needs python3")
	}
	spec := os.Getenv("FLAKEGATE_SPEC")
	if spec == "" {
		spec = filepath.Join("..", "shared", "spec", "flake-freeze-ledger.txt")
	}
	if _, err := os.Stat(spec); err != nil {
		t.Fatalf("-update-listing needs the spec: %v (set FLAKEGATE_SPEC)", err)
	}
	cmd := exec.Command(python, filepath.Join("testdata", "vectors", "gen.py"), mode, "--spec", spec)
	cmd.Stdin = bytes.NewReader(append(bytes.Join(lines, []byte("\n")), '\n'))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("gen.py %s: %v\n%s", mode, err, stderr.Bytes())
	}
	var got []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		got = append(got, sc.Text())
	}
	if len(got) != len(lines) {
		t.Fatalf("gen.py %s: %d lines out for %d in", mode, len(got), len(lines))
	}
	return got
}

func TestPropertyHashMatchesListing(t *testing.T) {
	cases := listingCases(t, "records", true, listingRecords)
	if len(cases) < 300 {
		t.Fatalf("%d cases, want 300", len(cases))
	}
	for i, c := range cases {
		raw, want := []byte(c.Input), c.Hash
		got, err := flakegate.RecordSHA256(raw)
		if strings.HasPrefix(want, "error: ") {
			if err == nil {
				t.Errorf("record %d: the listing cannot read it (%s), flakegate hashes it %s\n%s", i, want, got, raw)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("record %d: flakegate %s (err %v), listing %s\n%s", i, got, err, want, raw)
		}
	}
}

// listingDecision is one line of gen.py --decide.
type listingDecision struct {
	Error        string `json:"error"`
	Label        string `json:"label"`
	Freeze       bool   `json:"freeze"`
	RecordSHA256 string `json:"record_sha256"`
}

// TestPropertyListingLabels: on 300 drawn records flakegate never gives a
// PASS or a freeze the listing does not, and on plain records (see
// drawRunRecord) it gives the listing's label.
func TestPropertyListingLabels(t *testing.T) {
	cases := listingCases(t, "records", true, listingRecords)
	labels := map[flakegate.Label]int{}
	nplain := 0
	for i, c := range cases {
		raw := []byte(c.Input)
		var l listingDecision
		if err := json.Unmarshal([]byte(c.Decision), &l); err != nil {
			t.Fatalf("record %d: gen.py --decide wrote %q: %v", i, c.Decision, err)
		}
		d := flakegate.ClassifyBytes(raw)
		labels[d.Label]++
		if d.Label == flakegate.Pass && l.Label != "PASS" {
			t.Errorf("record %d: flakegate PASS where the listing says %s%s\n%s", i, l.Label, l.Error, raw)
		}
		if d.Freeze && !l.Freeze {
			t.Errorf("record %d: flakegate freezes where the listing says %s%s\n%s", i, l.Label, l.Error, raw)
		}
		if c.Plain {
			nplain++
			if string(d.Label) != l.Label {
				t.Errorf("record %d is plain: flakegate %s (%s), listing %s%s\n%s", i, d.Label, d.Reason, l.Label, l.Error, raw)
			}
		}
	}
	if nplain < 100 {
		t.Errorf("only %d of %d drawn records are plain", nplain, len(cases))
	}
	t.Logf("labels of the drawn records: %v; %d plain", labels, nplain)
	// The generator must reach every label, or this test proves little.
	for _, want := range flakegate.Labels {
		if labels[want] == 0 {
			t.Errorf("no generated record labelled %s (got %v)", want, labels)
		}
	}
}

// TestPropertyScalarsMatchListing hashes 3,000 lone floats and strings,
// drawn from fixed seeds over the whole float64 range and the whole of
// Unicode, and wants the listing's digest for each.
func TestPropertyScalarsMatchListing(t *testing.T) {
	cases := listingCases(t, "scalars", false, drawScalars)
	if len(cases) != 3000 {
		t.Fatalf("%d scalars, want 3000", len(cases))
	}
	bad := 0
	for _, c := range cases {
		got, err := flakegate.RecordSHA256([]byte(c.Input))
		if err != nil || got != c.Hash {
			if bad++; bad <= 20 {
				t.Errorf("%q: flakegate %s (err %v), listing %s", c.Input, got, err, c.Hash)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d scalars hash differently from the listing", bad, len(cases))
	}
}

// drawScalars draws 3,000 lone floats and strings from fixed seeds, over
// the whole float64 range and the whole of Unicode.
func drawScalars() ([][]byte, []bool) {
	rnd := rand.New(rand.NewPCG(1402, 7))
	var lines [][]byte
	for len(lines) < 1000 { // any bit pattern, written shortest
		f := math.Float64frombits(rnd.Uint64())
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		lines = append(lines, []byte("["+strconv.FormatFloat(f, 'g', -1, 64)+"]"))
	}
	for len(lines) < 2000 { // decimal literals of up to 25 digits, any exponent
		digits := strconv.FormatUint(rnd.Uint64(), 10) + strconv.FormatUint(rnd.Uint64N(1e9), 10)
		lit := digits[:1+rnd.IntN(len(digits)-1)]
		if dot := rnd.IntN(len(lit) + 1); dot > 0 && dot < len(lit) {
			lit = lit[:dot] + "." + lit[dot:]
		} else {
			lit += ".0"
		}
		lit += "e" + strconv.Itoa(rnd.IntN(660)-340)
		if _, err := strconv.ParseFloat(lit, 64); err != nil {
			continue // beyond float64: flakegate refuses, Python reads inf
		}
		lines = append(lines, []byte("["+lit+"]"))
	}
	for len(lines) < 3000 { // strings of any scalar values, raw or escaped
		var b bytes.Buffer
		l := layoutFrom(rnd.Uint64(), false, false, rnd.IntN(2) == 0)
		var s strings.Builder
		for range 1 + rnd.IntN(6) {
			r := rune(rnd.IntN(0x110000))
			if r >= 0xD800 && r < 0xE000 {
				continue
			}
			s.WriteRune(r)
		}
		b.WriteByte('[')
		l.writeString(&b, s.String())
		b.WriteByte(']')
		lines = append(lines, b.Bytes())
	}
	return lines, nil
}
