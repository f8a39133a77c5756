package flakegate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"
)

// TripleID is the identity of one triple of a check across runners and
// shards: its property path, the property's test name ("" when it has
// none) and the seed, as one string. Shards are cut and queue rows keyed
// by it, so every runner of one check names a triple the same way. The
// fixture digest is not part of it: it is a result of the run, the same
// on every runner of one candidate.
func TripleID(propertyPath, name string, seed Seed) string {
	b, _ := json.Marshal([]string{propertyPath, name, string(seed)})
	return string(b)
}

// Shard says which part of a check a summary covers (check --shard I/N).
type Shard struct {
	Index int `json:"index"` // 1..Count
	Count int `json:"count"`
	// Triples is how many triples the whole check has.
	Triples int `json:"triples"`
	// Positions are the config positions (0-based, of the whole check) of
	// the summary's results, in the same order.
	Positions []int `json:"positions"`
	// PartitionSHA256 digests the whole partition (every shard's triple
	// ids), so shards cut from different duration histories are told apart.
	PartitionSHA256 string `json:"partition_sha256"`
}

// QueuedCheck is one check run by many runners through a shared queue
// (check --join): what every runner must agree on.
type QueuedCheck struct {
	ID           string `json:"check_id"`
	BaseSHA      string `json:"base"`
	CandidateSHA string `json:"candidate"`
	ConfigSHA256 string `json:"config_sha256"`
	// TriplesSHA256 digests the ordered triple ids (QueuedTriplesSHA256).
	TriplesSHA256 string `json:"triples_sha256"`
	// MaxLeaseExpiries is K: a triple whose lease expired more than K
	// times is labelled INCOMPLETE instead of being run again.
	MaxLeaseExpiries int       `json:"max_lease_expiries"`
	CreatedBy        string    `json:"created_by"`
	CreatedAt        time.Time `json:"created_at"`
}

// QueuedTriple is one triple of a queued check.
type QueuedTriple struct {
	ID           string `json:"triple_id"` // TripleID
	Position     int    `json:"position"`  // config order, from 0
	PropertyPath string `json:"property_path"`
	Name         string `json:"name,omitempty"`
	Seed         Seed   `json:"seed"`
}

// QueuedTriplesSHA256 digests the triple ids in order.
func QueuedTriplesSHA256(ts []QueuedTriple) string {
	h := sha256.New()
	for _, t := range ts {
		h.Write([]byte(t.ID))
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Runner names one process working on a queued check.
type Runner struct {
	ID   string `json:"runner_id"`
	Host string `json:"runner_host"`
}

// TripleLease is a claimed triple: the runner holding Token may run it
// until the lease ends, and renews it while it runs.
type TripleLease struct {
	TripleID string
	Position int
	Token    string
	// Expiries counts the leases of this triple that ended without a
	// label (their runner died or stalled), this takeover included.
	Expiries int
	// Runners lists the runners whose leases expired, oldest first.
	Runners []string
}

// Triple states of a queued check.
const (
	TripleQueued  = "queued"
	TripleClaimed = "claimed"
	TripleDone    = "done"
)

// QueuedTripleState is a triple of a queued check as the queue holds it.
type QueuedTripleState struct {
	QueuedTriple
	State    string `json:"state"`
	Runner   Runner `json:"runner"` // the holder, or who labelled it
	Expiries int    `json:"expiries"`
	// Result is the summary line (a Result, as JSON) once done.
	Result json.RawMessage `json:"result,omitempty"`
}

// RunnerProgress counts one runner's triples of a queued check.
type RunnerProgress struct {
	Runner
	Done, Claimed int
}

// CheckProgress is how far a queued check is.
type CheckProgress struct {
	Check                 QueuedCheck
	Total                 int
	Done, Claimed, Queued int
	Runners               []RunnerProgress // by runner id
}

// Finished reports whether every triple is labelled.
func (p CheckProgress) Finished() bool { return p.Done == p.Total }

// CheckQueue shares the triples of one check among many runners
// (PostgreSQL). Every method is safe to call from many processes at once.
type CheckQueue interface {
	// Enqueue creates the check and its triples, once. When the check
	// exists already it only verifies that c names the same base,
	// candidate, config digest, triples and K, and changes nothing; a
	// difference is EINVALID naming what differs. created says whether
	// this call created it.
	Enqueue(ctx context.Context, c QueuedCheck, triples []QueuedTriple) (created bool, err error)

	// Claim takes one triple of the check for r under a lease of the
	// given length: a queued one, or one whose lease has expired (its
	// runner is gone). Locked rows are skipped, so runners never wait on
	// each other. ok is false when nothing is claimable now.
	Claim(ctx context.Context, checkID string, r Runner, lease time.Duration) (l TripleLease, ok bool, err error)

	// Renew extends a lease held by token. ECONFLICT when the lease is no
	// longer the caller's (it expired and another runner took the triple).
	Renew(ctx context.Context, checkID string, l TripleLease, lease time.Duration) error

	// Complete labels the triple with res, in one transaction with the
	// lease check: it stores the record (raw, under res.RecordSHA256; nil
	// for a frozen skip) and the summary line only if l.Token still holds
	// the lease; else ECONFLICT and nothing is written. A triple is
	// labelled at most once.
	Complete(ctx context.Context, checkID string, l TripleLease, res Result, raw []byte) error

	// CheckState returns the check and its triples in position order;
	// ENOTFOUND for an unknown check id.
	CheckState(ctx context.Context, checkID string) (QueuedCheck, []QueuedTripleState, error)

	// Progress counts done, claimed and queued triples per check and per
	// runner: of checkID, or of the newest checks when checkID is "".
	// ENOTFOUND for an unknown check id.
	Progress(ctx context.Context, checkID string) ([]CheckProgress, error)
}

// GroupQueue is a CheckQueue that claims the triples of one batch at
// once (check --join runs a batch group as one process, as a check
// alone does).
type GroupQueue interface {
	CheckQueue
	// ClaimGroup claims, in one transaction, the first claimable triple
	// of the check, as Claim does, and then every triple of its group
	// (group gives the positions of the batch the first one is in) that
	// is claimable too: each under a lease of its own, with its own
	// token, renewed, completed and taken over after an expiry one by
	// one exactly as a triple Claim took. The first lease comes first;
	// the others follow in position order. Triples another runner holds
	// are skipped, never waited for. Empty when nothing is claimable.
	ClaimGroup(ctx context.Context, checkID string, r Runner, lease time.Duration, group func(position int) []int) ([]TripleLease, error)
}
