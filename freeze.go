package flakegate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Triple names one seeded property test: the property path, the test's
// name in it ("" when the config entry has none), the fixture digest and
// the seed. A freeze covers exactly one triple. (The spec's triple is
// path, fixture and seed; the name tells apart tests of one file.)
type Triple struct {
	PropertyPath  string `json:"property_path"`
	Name          string `json:"name,omitempty"`
	Seed          Seed   `json:"seed"`
	FixtureSHA256 string `json:"fixture_sha256"`
}

// Key is a stable string form of the triple, used to sort and index.
func (t Triple) Key() string {
	return t.PropertyPath + "\x00" + t.Name + "\x00" + string(t.Seed) + "\x00" + t.FixtureSHA256
}

// Less orders triples by property path, then seed text, then digest.
func (t Triple) Less(u Triple) bool { return t.Key() < u.Key() }

// Freeze is one entry of the freeze ledger: a SCHEDULER triple that may be
// skipped for ExpiresAfterRuns more runs.
//
// RunSHA256 and PropertyEntrySHA256 bind the freeze to the argv template
// and the config entry of the frozen run (the record's extra keys
// "run_sha256" and "property_entry_sha256"); a check whose command or
// entry differs voids the freeze. They are "" for a record without them.
type Freeze struct {
	Label            Label     `json:"label"`
	PropertyPath     string    `json:"property_path"`
	Name             string    `json:"name,omitempty"`
	Seed             Seed      `json:"seed"`
	FixtureSHA256    string    `json:"fixture_sha256"`
	ExpiresAfterRuns int       `json:"expires_after_runs"`
	Owner            string    `json:"owner"`
	RecordSHA256     string    `json:"record_sha256"`
	PropertySHA256   string    `json:"property_sha256"`
	GrantedAt        time.Time `json:"granted_at"`
	GrantedBy        string    `json:"granted_by"`

	RunSHA256           string `json:"run_sha256,omitempty"`
	PropertyEntrySHA256 string `json:"property_entry_sha256,omitempty"`
	// CandidateSHA is the candidate sha of the record that earned the
	// freeze ("" for a record without one, or a freeze granted before it
	// was kept).
	CandidateSHA string `json:"candidate_sha,omitempty"`
}

// Triple returns the triple the freeze covers.
func (f Freeze) Triple() Triple {
	return Triple{PropertyPath: f.PropertyPath, Name: f.Name, Seed: f.Seed, FixtureSHA256: f.FixtureSHA256}
}

// SameFreeze reports whether a and b are the same entry: equal fields, and
// GrantedAt the same instant (whatever its time zone).
func SameFreeze(a, b Freeze) bool {
	if !a.GrantedAt.Equal(b.GrantedAt) {
		return false
	}
	a.GrantedAt, b.GrantedAt = time.Time{}, time.Time{}
	return a == b
}

// FreezeDiff names the first field where the ledger's entry (got) differs
// from the audit log's (want), for messages; "" when they are the same.
func FreezeDiff(got, want Freeze) string {
	type field struct {
		name      string
		got, want any
	}
	for _, f := range []field{
		{"label", got.Label, want.Label},
		{"expires_after_runs", got.ExpiresAfterRuns, want.ExpiresAfterRuns},
		{"owner", got.Owner, want.Owner},
		{"record_sha256", got.RecordSHA256, want.RecordSHA256},
		{"property_sha256", got.PropertySHA256, want.PropertySHA256},
		{"granted_by", got.GrantedBy, want.GrantedBy},
		{"run_sha256", got.RunSHA256, want.RunSHA256},
		{"property_entry_sha256", got.PropertyEntrySHA256, want.PropertyEntrySHA256},
		{"candidate_sha", got.CandidateSHA, want.CandidateSHA},
	} {
		if f.got != f.want {
			return fmt.Sprintf("%s is %v in the ledger but %v in the audit log", f.name, f.got, f.want)
		}
	}
	if !got.GrantedAt.Equal(want.GrantedAt) {
		return fmt.Sprintf("granted_at is %s in the ledger but %s in the audit log",
			got.GrantedAt.UTC().Format(time.RFC3339), want.GrantedAt.UTC().Format(time.RFC3339))
	}
	return ""
}

// String writes the triple as a user reads it: path, seed and digest.
func (t Triple) String() string {
	if t.Name != "" {
		return fmt.Sprintf("%s::%s seed %s fixture %s", t.PropertyPath, t.Name, t.Seed.String(), ShortSHA(t.FixtureSHA256))
	}
	return fmt.Sprintf("%s seed %s fixture %s", t.PropertyPath, t.Seed.String(), ShortSHA(t.FixtureSHA256))
}

func (t Triple) validate() error {
	switch {
	case strings.TrimSpace(t.PropertyPath) == "":
		return Errorf(EINVALID, "property_path is empty")
	case !t.Seed.Valid():
		return Errorf(EINVALID, "seed %q is not an integer or a seed string", string(t.Seed))
	case t.FixtureSHA256 == "":
		return Errorf(EINVALID, "fixture_sha256 is empty")
	case t.Name != strings.TrimSpace(t.Name) || strings.ContainsAny(t.Name, "\x00\n\r"):
		return Errorf(EINVALID, "name %q has surrounding spaces or a control character", t.Name)
	}
	return nil
}

// Validate checks a freeze before it is written: the label is SCHEDULER,
// the triple is well formed, at least one run is left, the owner is named,
// the record is named by a sha256, the property digest and grant time are
// set.
func (f Freeze) Validate() error {
	if f.Label != Scheduler {
		return Errorf(EINVALID, "freeze label is %q; only SCHEDULER may enter the ledger", f.Label)
	}
	if err := f.Triple().validate(); err != nil {
		return err
	}
	switch {
	case f.ExpiresAfterRuns < 1:
		return Errorf(EINVALID, "freeze for %s: expires_after_runs is %d, want 1 or more", f.Triple(), f.ExpiresAfterRuns)
	case strings.TrimSpace(f.Owner) == "":
		return Errorf(EINVALID, "freeze for %s: owner is empty", f.Triple())
	case !ValidSHA256(f.RecordSHA256):
		return Errorf(EINVALID, "freeze for %s: record_sha256 %q is not a sha256", f.Triple(), f.RecordSHA256)
	case f.PropertySHA256 == "":
		return Errorf(EINVALID, "freeze for %s: property_sha256 is empty", f.Triple())
	case f.GrantedAt.IsZero():
		return Errorf(EINVALID, "freeze for %s: granted_at is not set", f.Triple())
	case f.CandidateSHA != "" && !ValidCommitSHA(f.CandidateSHA):
		return Errorf(EINVALID, "freeze for %s: candidate_sha %q is not a commit hash", f.Triple(), f.CandidateSHA)
	case f.RunSHA256 != "" && !ValidSHA256(f.RunSHA256):
		return Errorf(EINVALID, "freeze for %s: run_sha256 %q is not a sha256", f.Triple(), f.RunSHA256)
	case f.PropertyEntrySHA256 != "" && !ValidSHA256(f.PropertyEntrySHA256):
		return Errorf(EINVALID, "freeze for %s: property_entry_sha256 %q is not a sha256", f.Triple(), f.PropertyEntrySHA256)
	}
	return nil
}

// MaxFreezeRuns is the default policy maximum for a freeze's run count.
const MaxFreezeRuns = 100

// AuditAction is what happened to a freeze.
type AuditAction string

// The audit actions. Every change to the ledger appends one event.
const (
	ActionGrant  AuditAction = "grant"  // a freeze was written (or replaced)
	ActionSkip   AuditAction = "skip"   // a run skipped the triple; runs_left after it
	ActionExpire AuditAction = "expire" // the count reached zero; the freeze is gone
	ActionVoid   AuditAction = "void"   // a check failed; the freeze is gone
	ActionRevoke AuditAction = "revoke" // a person removed the freeze
)

// AuditEvent is one line of the audit log.
type AuditEvent struct {
	Action   AuditAction `json:"action"`
	At       time.Time   `json:"at"`
	By       string      `json:"by,omitempty"`
	Triple   Triple      `json:"triple"`
	RunsLeft int         `json:"runs_left"`
	Reason   string      `json:"reason,omitempty"`
	// Freeze is the entry written, on grant events only.
	Freeze *Freeze `json:"freeze,omitempty"`
	// PrevSHA256 is the sha256 of the previous line of the log ("" first).
	PrevSHA256 string `json:"prev_sha256"`
}

// BaseReplay is the first base result stored for a replay key.
type BaseReplay struct {
	Result      string    `json:"result"` // "pass", "fail" or "error"
	WallSeconds float64   `json:"wall_seconds"`
	RunID       string    `json:"run_id"`
	At          time.Time `json:"at"`
}

// Ledger holds the freezes, one per triple. Every change appends an audit
// event in the same atomic step, so the log replays to the ledger.
type Ledger interface {
	// ListFreezes returns every freeze, sorted by triple.
	ListFreezes(ctx context.Context) ([]Freeze, error)

	// GetFreeze returns the freeze for t, or an error with code ENOTFOUND.
	GetFreeze(ctx context.Context, t Triple) (Freeze, error)

	// Grant writes f and a grant event. If a freeze for the triple exists it
	// returns ECONFLICT, unless replace is true. A freeze that fails
	// f.Validate is EINVALID. The grant event carries By f.GrantedBy,
	// RunsLeft f.ExpiresAfterRuns, the freeze itself, and a Reason when it
	// replaced an entry.
	Grant(ctx context.Context, f Freeze, replace bool) error

	// Consume counts one skip of t: it decrements the freeze's runs left if
	// the freeze exists, names recordSHA256 and has runs left, and deletes
	// it when the count reaches zero (a skip event, then an expire event).
	// It returns the runs left after the skip, or ENOTFOUND when no such
	// freeze could be consumed. Concurrent callers never lose or double a
	// decrement. Consume does not check the record; Skip does that first.
	Consume(ctx context.Context, t Triple, recordSHA256, by string) (int, error)

	// Remove deletes t's freeze with action ActionVoid or ActionRevoke and
	// a reason. ENOTFOUND if there is none; EINVALID for another action.
	Remove(ctx context.Context, t Triple, action AuditAction, by, reason string) error
}

// AuditLog reads the append-only log of ledger changes.
type AuditLog interface {
	// AuditLines returns every event line, oldest first, as stored bytes
	// without a newline. Each line is written by AuditEvent.Line, chained
	// to the line before it, in the same atomic step as the ledger change.
	AuditLines(ctx context.Context) ([][]byte, error)
}

// RecordStore keeps run records by their record_sha256, byte for byte.
type RecordStore interface {
	// PutRecord stores raw under sha. Storing the same sha again keeps the
	// first bytes and is not an error. A sha that is not 64 lowercase hex
	// digits (ValidSHA256) is EINVALID, here and in GetRecord. The store
	// does not hash raw: readers of a record check it (Skip does).
	PutRecord(ctx context.Context, sha string, raw []byte) error

	// GetRecord returns the stored bytes, or ENOTFOUND.
	GetRecord(ctx context.Context, sha string) ([]byte, error)

	// EachRecord calls fn for every stored record (order unspecified) until
	// fn returns an error.
	EachRecord(ctx context.Context, fn func(sha string, raw []byte) error) error
}

// ReplayCache keeps the first base result per replay key; it is never
// overwritten, so a base that failed once stays failed.
type ReplayCache interface {
	// GetReplay returns the stored result and true, or false if absent.
	GetReplay(ctx context.Context, key string) (BaseReplay, bool, error)

	// PutReplay stores r under key unless a result is there already; it
	// returns the result that is stored after the call (the first one).
	PutReplay(ctx context.Context, key string, r BaseReplay) (BaseReplay, error)

	// LockReplay blocks until the caller holds the lock of key, which
	// excludes every other holder of the same key in any process using
	// the store (goroutines of one process included); other keys are not
	// blocked. A check holds it from GetReplay through PutReplay, so two
	// checks that miss the cache together replay the base once. It returns
	// an error, holding nothing, when ctx ends first or the store fails.
	// release gives the lock back; it is safe to call once, from any
	// goroutine, and never leaves the lock held (a holder whose process
	// or connection dies loses the lock too).
	LockReplay(ctx context.Context, key string) (release func(), err error)
}

// ErrUnauthenticated is wrapped by a store's error for a row whose
// authenticator does not match the ledger key: a row written by someone
// who could write the database but does not hold the key. Skip refuses
// what such a row says.
var ErrUnauthenticated = errors.New("the row is not authenticated by the ledger key")

// Vouching is implemented by a store that may be unable to vouch for
// its rows (PostgreSQL without a ledger key).
type Vouching interface {
	// Unvouched says why no freeze of the store may let a triple skip,
	// or "" when its rows are authenticated.
	Unvouched() string
}

// SeedSecretSize is the length in bytes of a store's seed secret.
const SeedSecretSize = 32

// SeedSecretStore holds the secret that drawn seeds (random_seeds) are
// keyed by, so that a patch author, who controls the candidate's commit
// sha, cannot compute the seeds a check will draw for it.
type SeedSecretStore interface {
	// SeedSecret returns the store's SeedSecretSize secret bytes. The
	// first call on a store makes them (crypto/rand) and stores them;
	// callers that start at once on a new store, in any process, all get
	// the one secret that was stored. A stored secret is never changed or
	// replaced: one that is not SeedSecretSize bytes is EINVALID with a
	// hint, never made anew. The secret must not be written anywhere
	// else (records, summaries, logs, the attempts' environment).
	SeedSecret(ctx context.Context) ([]byte, error)
}

// The failure corpus's bounds. A property's seeds (its key's) are at most
// MaxCorpusSeeds, the whole corpus at most MaxCorpusTotal; a seed leaves
// only by age, once the store's checks have run on MaxCorpusAge bases
// since its newest failure. Nothing else removes one: a full corpus
// refuses a new seed rather than dropping an older one, so a patch that
// fails on purpose cannot push out the seed that caught a regression.
const (
	MaxCorpusSeeds = 32
	MaxCorpusTotal = 16384
	MaxCorpusAge   = 100
)

// CorpusEntry is one seed of a property's failure corpus.
type CorpusEntry struct {
	Seed Seed `json:"seed"`
	// FirstBaseSHA is the base of the seed's first failure. A check on
	// that base runs the seed anyway (drawn seeds are the base's), so the
	// corpus adds it only to checks of other bases.
	FirstBaseSHA string `json:"first_base_sha"`
	// CandidateSHA and FailedAt are those of the newest failure.
	CandidateSHA string    `json:"candidate_sha"`
	FailedAt     time.Time `json:"failed_at"`
	// AddedBy is the candidate whose failure put the seed in (a corpus
	// kept before it was recorded names its newest failure's): one
	// candidate adds at most one seed per key.
	AddedBy string `json:"added_by"`
	// FailedEpoch is the corpus's age (CorpusBase: how many bases its
	// checks ran on) at the seed's newest failure; the seed leaves at
	// FailedEpoch + MaxCorpusAge.
	FailedEpoch int64 `json:"failed_epoch"`
}

// CorpusAdd says what AddFailure did with a failing seed.
type CorpusAdd string

// What AddFailure did: the seed was added, or it was held already and
// its newest failure moved (renewed) or did not (an older failure), or
// it was refused, and why.
const (
	CorpusAdded     CorpusAdd = "added"
	CorpusRenewed   CorpusAdd = "renewed"
	CorpusUnchanged CorpusAdd = "unchanged"
	// CorpusOnePerCandidate: the candidate added a seed of this key already.
	CorpusOnePerCandidate CorpusAdd = "one-per-candidate"
	// CorpusKeyFull: the key holds MaxCorpusSeeds seeds.
	CorpusKeyFull CorpusAdd = "key-full"
	// CorpusFull: the corpus holds MaxCorpusTotal seeds.
	CorpusFull CorpusAdd = "full"
)

// Kept reports whether the seed is in the corpus after AddFailure.
func (a CorpusAdd) Kept() bool {
	return a == CorpusAdded || a == CorpusRenewed || a == CorpusUnchanged
}

// FailureCorpus keeps, per property, the seeds that failed a candidate,
// like Hypothesis's example database: a check runs them again for every
// later candidate, so a seed that caught a regression once keeps
// catching it, whatever seeds are drawn.
//
// What a candidate can do to it is bounded so that no patch can empty
// it: a candidate adds at most one new seed per key; a key and the
// corpus have bounds that refuse new seeds, never evict old ones; and a
// seed ages only as the store's checks move on to bases a patch cannot
// make (the base is the gate's own revision), counted from its newest
// failure.
type FailureCorpus interface {
	// CorpusBase says that a check runs on base; a check calls it once,
	// before it reads the corpus. A base the corpus has not seen among
	// its last 2*MaxCorpusAge makes the corpus one base older (its epoch
	// grows by one), and the seeds whose newest failure is MaxCorpusAge
	// bases old leave; it returns how many left. A base seen already
	// changes nothing, so every shard and runner of one check may call
	// it. An empty base is EINVALID.
	CorpusBase(ctx context.Context, base string) (int, error)

	// AddFailure records that e.Seed failed e.CandidateSHA, a candidate
	// of the property key, at e.FailedAt, and says what it did. A seed
	// the corpus holds is renewed when e is newer: CandidateSHA and
	// FailedAt move to e's and its age starts again (FailedEpoch is the
	// corpus's epoch); FirstBaseSHA and AddedBy stay. A new seed is
	// added (AddedBy e.CandidateSHA) unless the candidate added one of
	// this key already, the key holds MaxCorpusSeeds seeds or the corpus
	// MaxCorpusTotal: then it is refused and nothing changes. An empty
	// key or candidate, an invalid seed or a zero time is EINVALID.
	AddFailure(ctx context.Context, key string, e CorpusEntry) (CorpusAdd, error)

	// Failures returns key's entries, the most recently failed first
	// (ties by seed text), none for an unknown key.
	Failures(ctx context.Context, key string) ([]CorpusEntry, error)
}

// ValidateCorpusEntry checks what AddFailure requires.
func ValidateCorpusEntry(key string, e CorpusEntry) error {
	switch {
	case key == "":
		return Errorf(EINVALID, "failure corpus: empty key")
	case e.CandidateSHA == "":
		return Errorf(EINVALID, "failure corpus: the failure names no candidate")
	case !e.Seed.Valid():
		return Errorf(EINVALID, "failure corpus: seed %q is not a seed", string(e.Seed))
	case e.FailedAt.IsZero():
		return Errorf(EINVALID, "failure corpus: the failure has no time")
	}
	return nil
}

// CorpusTime is the fixed-width UTC form of a corpus time, which sorts
// as text.
const CorpusTime = "2006-01-02T15:04:05.000000000Z"

// Store is everything the check needs from a backend.
type Store interface {
	Ledger
	AuditLog
	RecordStore
	ReplayCache
	SeedSecretStore
	FailureCorpus
	Close() error
}
