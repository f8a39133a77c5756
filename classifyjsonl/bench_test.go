package classifyjsonl_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"testing"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/classifyjsonl"
)

// loadLines returns up to n lines of a file bench/classify.sh generates,
// or skips the benchmark when it has not been generated.
func loadLines(b *testing.B, name string, n int) []byte {
	b.Helper()
	data, err := os.ReadFile("../bench/out/" + name)
	if err != nil {
		b.Skipf("no bench/out/%s (run bench/classify.sh once): %v", name, err)
	}
	end, lines := 0, 0
	for end < len(data) && lines < n {
		i := bytes.IndexByte(data[end:], '\n')
		if i < 0 {
			end = len(data)
			break
		}
		end += i + 1
		lines++
	}
	return data[:end]
}

func benchRun(b *testing.B, data []byte) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if err := classifyjsonl.Run(context.Background(), bytes.NewReader(data), io.Discard, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*bytes.Count(data, []byte("\n"))), "ns/record")
}

// BenchmarkRunLarge, BenchmarkRunSmall and BenchmarkRunPythonSpaced
// stream 20,000 of the bench script's records (about 1.5 KB, 600 bytes,
// and 800 bytes with json.dumps's default spacing, big integers and nulls)
// through every core.
func BenchmarkRunLarge(b *testing.B) { benchRun(b, loadLines(b, "records.jsonl", 20000)) }
func BenchmarkRunSmall(b *testing.B) { benchRun(b, loadLines(b, "records-small.jsonl", 20000)) }
func BenchmarkRunPythonSpaced(b *testing.B) {
	benchRun(b, loadLines(b, "records-python-spaced.jsonl", 20000))
}

// BenchmarkClassifierLarge, BenchmarkClassifierSmall and
// BenchmarkClassifierPythonSpaced are one core's loop over the records,
// decision JSON included.
func BenchmarkClassifierLarge(b *testing.B) { benchClassifier(b, "records.jsonl") }
func BenchmarkClassifierSmall(b *testing.B) { benchClassifier(b, "records-small.jsonl") }
func BenchmarkClassifierPythonSpaced(b *testing.B) {
	benchClassifier(b, "records-python-spaced.jsonl")
}

func benchClassifier(b *testing.B, name string) {
	data := loadLines(b, name, 20000)
	lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	strs := make([]string, len(lines))
	for i, l := range lines {
		strs[i] = string(l)
	}
	var c flakegate.Classifier
	var out []byte
	b.SetBytes(int64(len(data) / len(lines)))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		out = c.Classify(strs[i%len(strs)]).Append(out[:0])
	}
}

// BenchmarkRunVectors streams the conformance vectors, 40 times over.
func BenchmarkRunVectors(b *testing.B) {
	var in bytes.Buffer
	for range 40 {
		for _, v := range loadVectors(b) {
			if raw := v.raw(b); len(raw) > 0 && !bytes.ContainsAny(raw, "\r\n") {
				in.Write(raw)
				in.WriteByte('\n')
			}
		}
	}
	benchRun(b, in.Bytes())
}
