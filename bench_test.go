package flakegate_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/canonjson"
	"github.com/flakegate/flakegate/classifyjsonl"
)

// benchRecords returns n realistic run records, the same every time: the
// keys `flakegate check` writes, labels spread over the table, attempt
// wall times as floats, now and then unknown keys and non-ASCII text.
func benchRecords(n int) [][]byte {
	rnd := rand.New(rand.NewPCG(1402, 1403))
	hexd := func(k int) string {
		const digits = "0123456789abcdef"
		b := make([]byte, k)
		for i := range b {
			b[i] = digits[rnd.IntN(16)]
		}
		return string(b)
	}
	props := []string{"tests/props/test_retry_budget.py", "tests/props/test_ledger_order.py", "tests/props/test_cache_evict.py"}
	src := []string{"src/retry.py", "src/ledger/core.py", "src/cache/lru.py", "docs/README.md", "pyproject.toml"}
	notes := []string{"café au lait", "中文注释", "emoji 😀 in the tail", "plain ascii tail"}
	out := make([][]byte, n)
	for i := range out {
		prop := props[rnd.IntN(len(props))]
		fixture := hexd(64)
		baseFixture := fixture
		diff := []string{src[rnd.IntN(len(src))], src[rnd.IntN(len(src))]}
		candidate, base, retries, budget, transcript := "fail", "pass", []string{"fail", "pass"}, true, true
		switch roll := rnd.IntN(100); {
		case roll < 30: // SCHEDULER
		case roll < 50:
			base = "fail"
		case roll < 70:
			candidate, retries = "pass", nil
		case roll < 78:
			diff = append(diff, prop)
		case roll < 85:
			baseFixture = hexd(64)
		case roll < 92:
			budget = false
		case roll < 96:
			base = "not_run"
		default:
			transcript = false
		}
		rec := jsonNode{kind: jObj}
		rec.set("schema", jStrNode(flakegate.Schema))
		rec.set("run_id", jStrNode(fmt.Sprintf("run-%08d", i)))
		rec.set("seed", jNumNode(strconv.Itoa(1+rnd.IntN(100000))))
		rec.set("property_path", jStrNode(prop))
		rec.set("property_sha256", jStrNode(hexd(64)))
		rec.set("fixture_sha256", jStrNode(fixture))
		rec.set("base_fixture_sha256", jStrNode(baseFixture))
		rec.set("diff_paths", jStrs(diff...))
		rec.set("candidate_result", jStrNode(candidate))
		rec.set("base_seed_result", jStrNode(base))
		rec.set("retry_results", jStrs(retries...))
		rec.set("retry_cap", jNumNode("2"))
		rec.set("budget_ok", jBoolNode(budget))
		rec.set("transcript_complete", jBoolNode(transcript))
		env := jsonNode{kind: jObj}
		env.set("workers", jNumNode("2"))
		env.set("clock_budget_s", jNumNode("60"))
		env.set("filesystem", jStrNode("ext4"))
		rec.set("candidate_env", env)
		rec.set("base_env", env)
		rec.set("base_sha", jStrNode(hexd(40)))
		rec.set("candidate_sha", jStrNode(hexd(40)))
		rec.set("wall_budget_s", jNumNode("60.0"))
		rec.set("samples", jNumNode("200"))
		attempts := jsonNode{kind: jArr}
		for k, res := range append([]string{candidate}, retries...) {
			a := jsonNode{kind: jObj}
			a.set("side", jStrNode("candidate"))
			a.set("index", jNumNode(strconv.Itoa(k)))
			a.set("result", jStrNode(res))
			a.set("started_at", jStrNode("2026-11-30T04:00:00Z"))
			a.set("wall_seconds", jNumNode(strconv.FormatFloat(0.5+rnd.Float64()*58, 'g', -1, 64)))
			if rnd.IntN(3) == 0 {
				a.set("output_tail", jStrNode(notes[rnd.IntN(len(notes))]+"\nE   assert 1 == 2"))
			}
			attempts.elems = append(attempts.elems, a)
		}
		rec.set("attempts", attempts)
		rec.set("transcript_sha256", jStrNode(hexd(64)))
		rec.set("tool_version", jStrNode("0.1.0"))
		if rnd.IntN(4) == 0 {
			ci := jsonNode{kind: jObj}
			ci.set("job", jStrNode("failure-class"))
			ci.set("load", jsonNode{kind: jArr, elems: []jsonNode{jNumNode("0.75"), jNumNode("1e-05"), jNumNode("1e+16")}})
			rec.set("x_ci", ci)
		}
		out[i] = rec.encode(nil)
	}
	return out
}

func benchBytes(recs [][]byte) int64 {
	var n int64
	for _, r := range recs {
		n += int64(len(r))
	}
	return n / int64(len(recs))
}

func BenchmarkRead(b *testing.B) {
	recs := benchRecords(1000)
	b.SetBytes(benchBytes(recs))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := canonjson.Read(recs[i%len(recs)]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRecordSHA256(b *testing.B) {
	recs := benchRecords(1000)
	b.SetBytes(benchBytes(recs))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := flakegate.RecordSHA256(recs[i%len(recs)]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSHA256 is the hash alone, on records already read.
func BenchmarkSHA256(b *testing.B) {
	recs := benchRecords(1000)
	vals := make([]canonjson.Value, len(recs))
	for i, r := range recs {
		v, err := canonjson.Read(r)
		if err != nil {
			b.Fatal(err)
		}
		vals[i] = v
	}
	b.SetBytes(benchBytes(recs))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		canonjson.SHA256(&vals[i%len(vals)])
	}
}

// BenchmarkClassifier is one reused Classifier, as each JSONL worker has.
func BenchmarkClassifier(b *testing.B) {
	recs := benchRecords(1000)
	strs := make([]string, len(recs))
	for i, r := range recs {
		strs[i] = string(r)
	}
	var c flakegate.Classifier
	b.SetBytes(benchBytes(recs))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if d := c.Classify(strs[i%len(strs)]); !d.Label.Known() {
			b.Fatal(d.Label)
		}
	}
}

func BenchmarkClassifyBytes(b *testing.B) {
	recs := benchRecords(1000)
	b.SetBytes(benchBytes(recs))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if d := flakegate.ClassifyBytes(recs[i%len(recs)]); !d.Label.Known() {
			b.Fatal(d.Label)
		}
	}
}

// BenchmarkClassifyJSONL streams 10,000 records per iteration through
// every core; MB/s is input throughput.
func BenchmarkClassifyJSONL(b *testing.B) {
	recs := benchRecords(10000)
	in := append(bytes.Join(recs, []byte("\n")), '\n')
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if err := classifyjsonl.Run(context.Background(), bytes.NewReader(in), io.Discard, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(recs)), "ns/record")
}
