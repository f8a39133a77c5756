package filestore

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/flakegate/flakegate"
)

// corpusDoc is the JSON of corpus.json: each property's failing seeds,
// the most recently failed first.
type corpusDoc struct {
	Version    int                                `json:"version"`
	Properties map[string][]flakegate.CorpusEntry `json:"properties"`
}

// AddFailure records a failing seed of the property key: corpus.json is
// read and rewritten atomically under the store's lock.
func (s *Store) AddFailure(ctx context.Context, key string, e flakegate.CorpusEntry) error {
	if err := flakegate.ValidateCorpusEntry(key, e); err != nil {
		return err
	}
	e.FailedAt = e.FailedAt.UTC()
	unlock, err := s.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	doc, err := s.readCorpus()
	if err != nil {
		return err
	}
	entries := doc.Properties[key]
	if i := slices.IndexFunc(entries, func(o flakegate.CorpusEntry) bool { return o.Seed == e.Seed }); i >= 0 {
		old := entries[i]
		if !e.FailedAt.After(old.FailedAt) {
			return nil
		}
		e.FirstBaseSHA = old.FirstBaseSHA
		entries = slices.Delete(entries, i, i+1)
	}
	entries = append(entries, e)
	sortCorpus(entries)
	if len(entries) > flakegate.MaxCorpusSeeds {
		entries = entries[:flakegate.MaxCorpusSeeds]
	}
	doc.Properties[key] = entries
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(s.dir, CorpusFile, append(data, '\n'))
}

// Failures returns key's corpus, the most recently failed first.
func (s *Store) Failures(ctx context.Context, key string) ([]flakegate.CorpusEntry, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// The file is replaced whole (by rename): no lock needed to read it.
	doc, err := s.readCorpus()
	if err != nil {
		return nil, err
	}
	return doc.Properties[key], nil
}

func (s *Store) readCorpus() (*corpusDoc, error) {
	path := filepath.Join(s.dir, CorpusFile)
	doc := &corpusDoc{Version: 1, Properties: map[string][]flakegate.CorpusEntry{}}
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return doc, nil
	} else if err != nil {
		return nil, fsError("read the failure corpus", path, err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(doc); err != nil || doc.Version != 1 || doc.Properties == nil {
		return nil, &flakegate.Error{Code: flakegate.EINVALID, Op: "read the failure corpus", Path: path,
			Message: "not a failure corpus of this flakegate (version 1)",
			Hint:    "restore the file from a backup of the ledger folder, or move it aside (the seeds that failed earlier candidates are then forgotten)"}
	}
	return doc, nil
}

func sortCorpus(es []flakegate.CorpusEntry) {
	slices.SortFunc(es, func(a, b flakegate.CorpusEntry) int {
		if c := b.FailedAt.Compare(a.FailedAt); c != 0 {
			return c
		}
		return cmp.Compare(string(a.Seed), string(b.Seed))
	})
}
