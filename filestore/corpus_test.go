package filestore_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/filestore"
	"github.com/flakegate/flakegate/storetest"
)

// corpusV1 is a corpus.json as flakegate wrote it before the corpus kept
// its bases: each property's most recently failed seeds.
const corpusV1 = `{
  "version": 1,
  "properties": {
    "k1": [
      {"seed": "1402", "first_base_sha": "b1", "candidate_sha": "c2", "failed_at": "2026-01-02T03:04:06Z"},
      {"seed": "7", "first_base_sha": "b0", "candidate_sha": "c1", "failed_at": "2026-01-02T03:04:05Z"}
    ],
    "k2": [
      {"seed": "s-1", "first_base_sha": "b0", "candidate_sha": "c1", "failed_at": "2026-01-01T00:00:00Z"}
    ]
  }
}
`

// TestCorpusVersion1: an old corpus.json is read as it was, each seed
// added by its newest failure's candidate, and written back as version
// 2 by the next change with every seed kept; nothing is written by a
// read or by a change that changes nothing.
func TestCorpusVersion1(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, filestore.CorpusFile)
	if err := os.WriteFile(path, []byte(corpusV1), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := filestore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want := "k1: 1402@b1/c2+c2/2026-01-02T03:04:06Z/0 7@b0/c1+c1/2026-01-02T03:04:05Z/0; k2: s-1@b0/c1+c1/2026-01-01T00:00:00Z/0"
	read := func() string { return storetest.CorpusText(t, s, "k1", "k2") }
	if got := read(); got != want {
		t.Fatalf("version 1 read as %s, want %s", got, want)
	}
	if did, err := s.AddFailure(ctx, "k1", flakegate.CorpusEntry{Seed: "9", FirstBaseSHA: "b1", CandidateSHA: "c2", FailedAt: time.Now()}); err != nil || did != flakegate.CorpusOnePerCandidate {
		t.Fatalf("a second seed of c2: %q, %v", did, err)
	}
	if b, _ := os.ReadFile(path); string(b) != corpusV1 {
		t.Fatalf("a read or a refused seed rewrote the file:\n%s", b)
	}
	if n, err := s.CorpusBase(ctx, "b2"); err != nil || n != 0 {
		t.Fatalf("CorpusBase: %d, %v", n, err)
	}
	if got := read(); got != want {
		t.Fatalf("after the conversion: %s, want %s", got, want)
	}
	var doc struct {
		Version int      `json:"version"`
		Epoch   int      `json:"epoch"`
		Bases   []string `json:"bases"`
	}
	if b, err := os.ReadFile(path); err != nil || json.Unmarshal(b, &doc) != nil || doc.Version != 2 || doc.Epoch != 1 || len(doc.Bases) != 1 {
		t.Fatalf("written back as %+v, %v", doc, err)
	}
}

// TestCorpusTotal: a corpus of MaxCorpusTotal seeds refuses a new one of
// any key, and rewrites nothing for it; a seed it holds is still
// renewed. An unknown version is refused with a hint, never overwritten.
func TestCorpusTotal(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, filestore.CorpusFile)
	props := map[string][]flakegate.CorpusEntry{}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i := range flakegate.MaxCorpusTotal {
		key := fmt.Sprintf("k%d", i/flakegate.MaxCorpusSeeds)
		props[key] = append(props[key], flakegate.CorpusEntry{Seed: flakegate.Seed(fmt.Sprint(i)), FirstBaseSHA: "b", CandidateSHA: "c", AddedBy: fmt.Sprint("c", i), FailedAt: at})
	}
	raw, err := json.Marshal(map[string]any{"version": 2, "epoch": 3, "bases": []string{"b"}, "properties": props})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := filestore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if did, err := s.AddFailure(ctx, "new", flakegate.CorpusEntry{Seed: "1", FirstBaseSHA: "b", CandidateSHA: "x", FailedAt: at}); err != nil || did != flakegate.CorpusFull {
		t.Fatalf("a new seed of a full corpus: %q, %v", did, err)
	}
	if b, _ := os.ReadFile(path); string(b) != string(raw) {
		t.Fatal("a refused seed rewrote the corpus")
	}
	if did, err := s.AddFailure(ctx, "k0", flakegate.CorpusEntry{Seed: "0", FirstBaseSHA: "b", CandidateSHA: "y", FailedAt: at.Add(time.Hour)}); err != nil || did != flakegate.CorpusRenewed {
		t.Fatalf("a seed of a full corpus failing again: %q, %v", did, err)
	}

	if err := os.WriteFile(path, []byte(`{"version": 3, "properties": {}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddFailure(ctx, "k", flakegate.CorpusEntry{Seed: "1", CandidateSHA: "c", FailedAt: at}); flakegate.ErrorCode(err) != flakegate.EINVALID || flakegate.ErrorHint(err) == "" {
		t.Fatalf("version 3: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != `{"version": 3, "properties": {}}` {
		t.Fatalf("an unknown corpus was overwritten: %s", b)
	}
}
