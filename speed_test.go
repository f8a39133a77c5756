package flakegate

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"testing"
)

// benchJSONLFile is the bench script's input, when it has been generated.
const benchJSONLFile = "bench/out/records.jsonl"

// loadBenchLines returns up to n lines of the bench script's records, or
// skips the benchmark when they have not been generated.
func loadBenchLines(b *testing.B, n int) []byte {
	b.Helper()
	data, err := os.ReadFile(benchJSONLFile)
	if err != nil {
		b.Skipf("no %s (run bench/classify.sh once): %v", benchJSONLFile, err)
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

func BenchmarkClassifyJSONLFile(b *testing.B) {
	data := loadBenchLines(b, 20000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if err := ClassifyJSONL(context.Background(), bytes.NewReader(data), io.Discard, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkClassifyLineFile(b *testing.B) {
	data := loadBenchLines(b, 20000)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	var p parser
	var out bytes.Buffer
	b.SetBytes(int64(len(data)) / int64(len(lines)))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		d := p.classifyLine(lines[i%len(lines)])
		out.Reset()
		d.AppendJSON(&out)
		i++
	}
}

// BenchmarkReadLineFile is the reader alone over the bench records.
func BenchmarkReadLineFile(b *testing.B) {
	data := loadBenchLines(b, 20000)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	var p parser
	b.SetBytes(int64(len(data)) / int64(len(lines)))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		p.reset(lines[i%len(lines)])
		if _, err := p.read(); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
