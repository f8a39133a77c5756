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

// corpusVersion is the version of corpus.json this flakegate writes.
// Version 1 (each property's 32 most recently failed seeds, with no
// bases and no adder) is read and written back as version 2 by the next
// change: every entry kept, its adder its newest failure's candidate,
// its age starting at the corpus's first base.
const corpusVersion = 2

// corpusDoc is the JSON of corpus.json: the corpus's epoch (how many
// bases its checks ran on), the last 2*MaxCorpusAge of those bases
// (oldest first), and each property's failing seeds, the most recently
// failed first.
type corpusDoc struct {
	Version    int                                `json:"version"`
	Epoch      int64                              `json:"epoch"`
	Bases      []string                           `json:"bases"`
	Properties map[string][]flakegate.CorpusEntry `json:"properties"`
}

// CorpusBase says that a check runs on base: a base not among the last
// 2*MaxCorpusAge seen makes the corpus one base older, and the seeds
// whose newest failure is MaxCorpusAge bases old leave.
func (s *Store) CorpusBase(ctx context.Context, base string) (int, error) {
	if base == "" {
		return 0, flakegate.Errorf(flakegate.EINVALID, "failure corpus: empty base")
	}
	removed := 0
	err := s.changeCorpus(ctx, func(doc *corpusDoc) bool {
		// An empty corpus has nothing to age: the file is not written
		// (a check that fails before its first triple leaves a store it
		// never added to as it was). AddFailure counts the base then.
		if len(doc.Properties) == 0 || slices.Contains(doc.Bases, base) {
			return false
		}
		removed = newBase(doc, base)
		return true
	})
	return removed, err
}

// newBase counts base as the corpus's next base and removes the seeds
// that are flakegate.MaxCorpusAge bases old; it returns how many left.
func newBase(doc *corpusDoc, base string) int {
	removed := 0
	doc.Epoch++
	doc.Bases = append(doc.Bases, base)
	if n := len(doc.Bases) - 2*flakegate.MaxCorpusAge; n > 0 {
		doc.Bases = slices.Delete(doc.Bases, 0, n)
	}
	for key, es := range doc.Properties {
		kept := slices.DeleteFunc(es, func(e flakegate.CorpusEntry) bool { return e.FailedEpoch+flakegate.MaxCorpusAge <= doc.Epoch })
		removed += len(es) - len(kept)
		if len(kept) == 0 {
			delete(doc.Properties, key)
			continue
		}
		doc.Properties[key] = kept
	}
	return removed
}

// AddFailure records a failing seed of the property key: corpus.json is
// read and rewritten atomically under the store's lock (not rewritten
// when nothing changes).
func (s *Store) AddFailure(ctx context.Context, key string, e flakegate.CorpusEntry) (flakegate.CorpusAdd, error) {
	if err := flakegate.ValidateCorpusEntry(key, e); err != nil {
		return "", err
	}
	e.FailedAt = e.FailedAt.UTC()
	var did flakegate.CorpusAdd
	err := s.changeCorpus(ctx, func(doc *corpusDoc) bool {
		entries := doc.Properties[key]
		if i := slices.IndexFunc(entries, func(o flakegate.CorpusEntry) bool { return o.Seed == e.Seed }); i >= 0 {
			old := &entries[i]
			if !e.FailedAt.After(old.FailedAt) {
				did = flakegate.CorpusUnchanged
				return false
			}
			old.CandidateSHA, old.FailedAt, old.FailedEpoch = e.CandidateSHA, e.FailedAt, doc.Epoch
			sortCorpus(entries)
			did = flakegate.CorpusRenewed
			return true
		}
		did = refuseSeed(doc, entries, e.CandidateSHA)
		if did != "" {
			return false
		}
		if !slices.Contains(doc.Bases, e.FirstBaseSHA) {
			newBase(doc, e.FirstBaseSHA) // the corpus was empty when CorpusBase ran
			entries = doc.Properties[key]
		}
		e.AddedBy, e.FailedEpoch = e.CandidateSHA, doc.Epoch
		entries = append(entries, e)
		sortCorpus(entries)
		doc.Properties[key] = entries
		did = flakegate.CorpusAdded
		return true
	})
	return did, err
}

// refuseSeed says why a new seed of a key whose entries are these is not
// added for candidate, "" when it is.
func refuseSeed(doc *corpusDoc, entries []flakegate.CorpusEntry, candidate string) flakegate.CorpusAdd {
	switch {
	case slices.ContainsFunc(entries, func(o flakegate.CorpusEntry) bool { return o.AddedBy == candidate }):
		return flakegate.CorpusOnePerCandidate
	case len(entries) >= flakegate.MaxCorpusSeeds:
		return flakegate.CorpusKeyFull
	}
	total := 0
	for _, es := range doc.Properties {
		total += len(es)
	}
	if total >= flakegate.MaxCorpusTotal {
		return flakegate.CorpusFull
	}
	return ""
}

// changeCorpus reads corpus.json under the store's lock, lets change edit
// it, and writes it back atomically when change reports a change.
func (s *Store) changeCorpus(ctx context.Context, change func(*corpusDoc) bool) error {
	unlock, err := s.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	doc, err := s.readCorpus()
	if err != nil {
		return err
	}
	if !change(doc) {
		return nil
	}
	doc.Version = corpusVersion
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

// readCorpus reads corpus.json, version 1 or 2; a version 1 corpus comes
// back converted (see corpusVersion).
func (s *Store) readCorpus() (*corpusDoc, error) {
	path := filepath.Join(s.dir, CorpusFile)
	doc := &corpusDoc{Version: corpusVersion, Properties: map[string][]flakegate.CorpusEntry{}}
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return doc, nil
	} else if err != nil {
		return nil, fsError("read the failure corpus", path, err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(doc); err != nil || doc.Version < 1 || doc.Version > corpusVersion || doc.Properties == nil || doc.Epoch < 0 {
		return nil, &flakegate.Error{Code: flakegate.EINVALID, Op: "read the failure corpus", Path: path,
			Message: "not a failure corpus of this flakegate (version 1 or 2)",
			Hint:    "restore the file from a backup of the ledger folder, or move it aside (the seeds that failed earlier candidates are then forgotten)"}
	}
	if doc.Version == 1 {
		for _, es := range doc.Properties {
			for i := range es {
				es[i].AddedBy = cmp.Or(es[i].AddedBy, es[i].CandidateSHA)
			}
		}
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
