package flakegate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/flakegate/flakegate/canonjson"
)

// SkipDecision is the answer of Skip for one triple.
type SkipDecision struct {
	// Skipped is true when the run may skip the triple; the skip was
	// counted and RunsLeft runs remain (0: the freeze is gone).
	Skipped  bool `json:"skipped"`
	RunsLeft int  `json:"runs_left"`
	// Freeze is the entry as it was before the skip (zero if none).
	Freeze Freeze `json:"freeze,omitzero"`
	// Voided is true when the freeze failed a check and was removed.
	Voided bool `json:"voided"`
	// Reason says in words why the triple was, or was not, skipped.
	Reason string `json:"reason"`
}

// MarshalJSON leaves out the freeze when there was none.
func (d SkipDecision) MarshalJSON() ([]byte, error) {
	type plain struct {
		Skipped  bool    `json:"skipped"`
		RunsLeft int     `json:"runs_left"`
		Freeze   *Freeze `json:"freeze,omitempty"`
		Voided   bool    `json:"voided"`
		Reason   string  `json:"reason"`
	}
	p := plain{Skipped: d.Skipped, RunsLeft: d.RunsLeft, Voided: d.Voided, Reason: d.Reason}
	if d.Freeze.Seed != "" {
		p.Freeze = &d.Freeze
	}
	return json.Marshal(p)
}

// Skip decides whether a run may skip triple t, and counts the skip. A
// triple is skipped only if its freeze exists and has runs left, its
// stored record still hashes to record_sha256 and still classifies
// SCHEDULER for the same triple, and propertySHA256 (the property file's
// digest now) equals the property_sha256 of the frozen record. A freeze
// that fails a check is voided, never re-hashed, and the triple runs.
// Other seeds of the same property are other triples: they always run
// unless frozen themselves. by names who skips (a run id or a user).
func Skip(ctx context.Context, s Store, t Triple, propertySHA256, by string) (SkipDecision, error) {
	return skip(ctx, s, t, Binding{PropertySHA256: propertySHA256}, false, by)
}

// Binding is what a run knows about the triple it is about to run: the
// property file's digest, the digests of its argv template and config
// entry, and where its seed came from ("" for a config seed, "drawn").
type Binding struct {
	PropertySHA256      string
	RunSHA256           string
	PropertyEntrySHA256 string
	SeedOrigin          string
}

// SkipBound is Skip for a check: besides Skip's checks, the freeze must
// name the same argv template digest and config entry digest as b (a
// freeze granted without them is voided too), and the frozen record's
// seed origin must be b's: a freeze of a config seed never covers a drawn
// seed, nor the other way round.
func SkipBound(ctx context.Context, s Store, t Triple, b Binding, by string) (SkipDecision, error) {
	return skip(ctx, s, t, b, true, by)
}

func skip(ctx context.Context, s Store, t Triple, b Binding, bound bool, by string) (SkipDecision, error) {
	propertySHA256 := b.PropertySHA256
	if err := t.validate(); err != nil {
		return SkipDecision{}, err
	}
	if propertySHA256 == "" {
		return SkipDecision{}, Errorf(EINVALID, "skip %s: the property file's digest is required", t)
	}
	f, lines, reason, err := readFreeze(ctx, s, t)
	if ErrorCode(err) == ENOTFOUND {
		return SkipDecision{Reason: "no freeze for this triple"}, nil
	} else if err != nil {
		return SkipDecision{}, err
	}
	if reason == "" {
		if v, ok := s.(Vouching); ok {
			if why := v.Unvouched(); why != "" {
				// Not voided: the freeze may be good, the store cannot say.
				return SkipDecision{Freeze: f, Reason: "not skipped: " + why}, nil
			}
		}
		if reason, err = checkFreeze(ctx, s, f); err != nil {
			return SkipDecision{}, err
		}
	}
	if reason == "" {
		reason = auditPlace(lines, f)
	}
	if reason == "" && propertySHA256 != f.PropertySHA256 {
		reason = fmt.Sprintf("the property file changed: its digest is %s, the frozen record's is %s", ShortSHA(propertySHA256), ShortSHA(f.PropertySHA256))
	}
	if reason == "" && bound {
		reason, err = bindingChanged(ctx, s, f, b)
		if err != nil {
			return SkipDecision{}, err
		}
	}
	if reason != "" {
		if err := void(ctx, s, t, by, reason); err != nil {
			return SkipDecision{}, err
		}
		return SkipDecision{Freeze: f, Voided: true, Reason: "freeze voided: " + reason}, nil
	}
	n, err := s.Consume(ctx, t, f.RecordSHA256, by)
	if errors.Is(err, ErrUnauthenticated) {
		if err := void(ctx, s, t, by, err.Error()); err != nil {
			return SkipDecision{}, err
		}
		return SkipDecision{Freeze: f, Voided: true, Reason: "freeze voided: " + err.Error()}, nil
	}
	if ErrorCode(err) == ENOTFOUND {
		return SkipDecision{Freeze: f, Reason: "the freeze was used up or removed meanwhile"}, nil
	} else if err != nil {
		return SkipDecision{}, err
	}
	return SkipDecision{Skipped: true, RunsLeft: n, Freeze: f,
		Reason: fmt.Sprintf("frozen SCHEDULER (owner %s); runs left: %d", f.Owner, n)}, nil
}

// readFreeze reads t's freeze and the audit log at one moment (the log
// the same before and after the freeze is read: every change appends to
// it). A freeze or audit line the store refuses (ErrUnauthenticated) is
// no error: reason says why the freeze must be voided. ENOTFOUND when
// there is no freeze.
func readFreeze(ctx context.Context, s Store, t Triple) (f Freeze, lines [][]byte, reason string, err error) {
	for range 20 {
		before, lerr := s.AuditLines(ctx)
		if lerr != nil && !errors.Is(lerr, ErrUnauthenticated) {
			return Freeze{}, nil, "", lerr
		}
		f, err = s.GetFreeze(ctx, t)
		if errors.Is(err, ErrUnauthenticated) {
			return Freeze{Label: Scheduler, PropertyPath: t.PropertyPath, Name: t.Name, Seed: t.Seed, FixtureSHA256: t.FixtureSHA256},
				nil, err.Error(), nil
		} else if err != nil {
			return Freeze{}, nil, "", err
		}
		if lerr != nil {
			return f, nil, "the audit log cannot vouch for it: " + lerr.Error(), nil
		}
		after, lerr := s.AuditLines(ctx)
		if lerr != nil {
			return Freeze{}, nil, "", lerr
		}
		if len(before) == len(after) && (len(after) == 0 || bytes.Equal(before[len(before)-1], after[len(after)-1])) {
			return f, after, "", nil
		}
		if err := ctx.Err(); err != nil {
			return Freeze{}, nil, "", err
		}
	}
	return Freeze{}, nil, "", &Error{Code: EINTERNAL, Op: "skip", Message: "the ledger kept changing while the freeze of " + t.String() + " was read",
		Hint: "run the check again when fewer checks are running"}
}

// auditPlace returns "" when the audit log vouches for f: its chain is
// intact and replaying it gives exactly f for f's triple; else why not.
func auditPlace(lines [][]byte, f Freeze) string {
	if err := VerifyAuditChain(lines); err != nil {
		return "the audit log cannot vouch for it: " + err.Error()
	}
	logged, err := ReplayAudit(lines)
	if err != nil {
		return "the audit log cannot vouch for it: " + err.Error()
	}
	want, ok := logged[f.Triple().Key()]
	switch {
	case !ok:
		return "the audit log never granted it (added by hand, or by a client that can only write the ledger)"
	case !SameFreeze(f, want):
		return "it is not the freeze the audit log granted: " + FreezeDiff(f, want)
	}
	return ""
}

// checkFreeze returns "" when f's stored record still vouches for it, else
// why it must be voided. Errors are only failures to read the store.
func checkFreeze(ctx context.Context, s RecordStore, f Freeze) (string, error) {
	if f.ExpiresAfterRuns < 1 {
		return fmt.Sprintf("no runs left (expires_after_runs is %d)", f.ExpiresAfterRuns), nil
	}
	raw, err := s.GetRecord(ctx, f.RecordSHA256)
	if ErrorCode(err) == ENOTFOUND {
		return fmt.Sprintf("the stored record %s is missing", ShortSHA(f.RecordSHA256)), nil
	} else if errors.Is(err, ErrUnauthenticated) {
		return err.Error(), nil
	} else if err != nil {
		return "", err
	}
	sha, err := RecordSHA256(raw)
	if err != nil {
		return fmt.Sprintf("the stored record %s is no longer a JSON record: %v", ShortSHA(f.RecordSHA256), err), nil
	}
	if sha != f.RecordSHA256 {
		return fmt.Sprintf("the stored record now hashes to %s, not record_sha256 %s", ShortSHA(sha), ShortSHA(f.RecordSHA256)), nil
	}
	d := ClassifyBytes(raw)
	if d.Label != Scheduler || !d.Freeze {
		return fmt.Sprintf("the stored record now classifies %s (row %d), not SCHEDULER", d.Label, d.Row), nil
	}
	x := recordExtras(raw)
	if rt := recordTriple(d, x); rt != f.Triple() {
		return fmt.Sprintf("the stored record is for %s, not this triple", rt), nil
	}
	if p := recordPropertySHA256(raw); p != f.PropertySHA256 {
		return fmt.Sprintf("the entry's property_sha256 %s differs from the record's %s", ShortSHA(f.PropertySHA256), ShortSHA(p)), nil
	}
	if x.runSHA256 != f.RunSHA256 || x.entrySHA256 != f.PropertyEntrySHA256 {
		return "the entry's run_sha256 or property_entry_sha256 differs from the record's", nil
	}
	return "", nil
}

// bindingChanged returns why f does not cover a run bound to b, or "".
func bindingChanged(ctx context.Context, s RecordStore, f Freeze, b Binding) (string, error) {
	switch {
	case f.RunSHA256 != b.RunSHA256:
		return fmt.Sprintf("the run command changed: its argv template digest is %s, the freeze's is %s", ShortSHA(b.RunSHA256), quoteEmpty(ShortSHA(f.RunSHA256))), nil
	case f.PropertyEntrySHA256 != b.PropertyEntrySHA256:
		return fmt.Sprintf("the config entry changed: its digest is %s, the freeze's is %s", ShortSHA(b.PropertyEntrySHA256), quoteEmpty(ShortSHA(f.PropertyEntrySHA256))), nil
	}
	raw, err := s.GetRecord(ctx, f.RecordSHA256)
	if err != nil {
		return "", err // checkFreeze read it a moment ago
	}
	if o := recordExtras(raw).seedOrigin; o != b.SeedOrigin {
		return fmt.Sprintf("the freeze was granted for a %s seed, this run's seed is %s", originWord(o), originWord(b.SeedOrigin)), nil
	}
	return "", nil
}

func originWord(o string) string {
	if o == "" {
		return "config"
	}
	return o
}

// extras are the record's extra keys a freeze reads ("" when absent or
// not a string).
type extras struct {
	name, runSHA256, entrySHA256, seedOrigin string
	candidateSHA                             string
	badName                                  bool // "name" present but not a non-empty string
}

func recordExtras(raw []byte) extras {
	var x extras
	v, err := canonjson.Read(raw)
	if err != nil || v.Kind != canonjson.KindObject {
		return x
	}
	get := func(k string) (string, bool) {
		m, ok := v.Get(k)
		if !ok {
			return "", true
		}
		if m.Kind != canonjson.KindString {
			return "", false
		}
		return m.Str, true
	}
	var ok bool
	x.name, ok = get("name")
	x.badName = !ok || (x.name == "" && hasKey(&v, "name"))
	x.runSHA256, _ = get("run_sha256")
	x.entrySHA256, _ = get("property_entry_sha256")
	x.seedOrigin, _ = get("seed_origin")
	x.candidateSHA, _ = get("candidate_sha")
	return x
}

// RecordFlakeOrigin returns the record's extra key flake_origin ("base",
// "new"), "" when it has none or is not a JSON object.
func RecordFlakeOrigin(raw []byte) string {
	v, err := canonjson.Read(raw)
	if err != nil || v.Kind != canonjson.KindObject {
		return ""
	}
	m, ok := v.Get("flake_origin")
	if !ok || m.Kind != canonjson.KindString {
		return ""
	}
	return m.Str
}

func hasKey(v *canonjson.Value, k string) bool {
	_, ok := v.Get(k)
	return ok
}

// recordTriple is the triple a SCHEDULER record names, with its name.
func recordTriple(d Decision, x extras) Triple {
	t := d.Triple()
	t.Name = x.name
	return t
}

// void removes t's freeze as void. A freeze someone else removed meanwhile
// is not an error: either way the triple runs.
func void(ctx context.Context, s Ledger, t Triple, by, reason string) error {
	err := s.Remove(ctx, t, ActionVoid, by, reason)
	if ErrorCode(err) == ENOTFOUND {
		return nil
	}
	return err
}

func recordPropertySHA256(raw []byte) string {
	v, err := canonjson.Read(raw)
	if err != nil {
		return ""
	}
	return NewRecord(v).PropertySHA256
}

// GrantRecord writes a freeze for the triple a record names. The record
// is classified with the current decision table: anything but SCHEDULER
// with freeze true is refused (EREJECT). owner must be named and runs be 1
// to MaxFreezeRuns (EINVALID). A freeze for the same triple is ECONFLICT
// unless replace is true. The record is stored by its record_sha256 before
// the entry is written, so an entry never names a record that is not kept.
// by names who grants ("" means the owner); now is the grant time, kept to
// the second.
func GrantRecord(ctx context.Context, s Store, raw []byte, owner string, runs int, replace bool, by string, now time.Time) (Freeze, error) {
	owner = strings.TrimSpace(owner)
	if owner == "" {
		return Freeze{}, &Error{Code: EINVALID, Op: "freeze grant", Message: "the owner is empty",
			Hint: "name the reviewer who answers for the freeze"}
	}
	if runs < 1 || runs > MaxFreezeRuns {
		return Freeze{}, &Error{Code: EINVALID, Op: "freeze grant",
			Message: fmt.Sprintf("runs is %d; a freeze lasts 1 to %d runs", runs, MaxFreezeRuns),
			Hint:    fmt.Sprintf("choose a run count from 1 to %d", MaxFreezeRuns)}
	}
	d := ClassifyBytes(raw)
	if d.Label != Scheduler || !d.Freeze {
		msg := fmt.Sprintf("the record classifies %s (row %d", d.Label, d.Row)
		if d.Reason != "" {
			msg += ": " + d.Reason
		}
		msg += "); only SCHEDULER may enter the freeze ledger"
		return Freeze{}, &Error{Code: EREJECT, Op: "freeze grant", Message: msg,
			Hint: "fix the failure, or classify a record of a SCHEDULER run"}
	}
	x := recordExtras(raw)
	if x.badName {
		return Freeze{}, &Error{Code: EINVALID, Op: "freeze grant", Message: `the record's "name" is not a non-empty string`,
			Hint: "grant a record written by flakegate check"}
	}
	if v, ok := s.(Vouching); ok && v.Unvouched() != "" {
		return Freeze{}, &Error{Code: EINVALID, Op: "freeze grant", Message: "refused: " + v.Unvouched(),
			Hint: "set FLAKEGATE_LEDGER_KEY to the runner's ledger key (see docs/postgres.md)"}
	}
	if by == "" {
		by = owner
	}
	f := Freeze{
		Label:            Scheduler,
		PropertyPath:     d.PropertyPath,
		Name:             x.name,
		Seed:             d.Seed,
		FixtureSHA256:    d.FixtureSHA256,
		ExpiresAfterRuns: runs,
		Owner:            owner,
		RecordSHA256:     d.RecordSHA256,
		PropertySHA256:   recordPropertySHA256(raw),
		GrantedAt:        now.UTC().Truncate(time.Second),
		GrantedBy:        by,

		RunSHA256:           x.runSHA256,
		PropertyEntrySHA256: x.entrySHA256,
	}
	if ValidCommitSHA(x.candidateSHA) {
		f.CandidateSHA = x.candidateSHA
	}
	if err := f.Validate(); err != nil {
		return Freeze{}, err
	}
	// Read the ledger first: a conflict or an unreadable ledger stops the
	// grant before anything is written.
	_, err := s.GetFreeze(ctx, f.Triple())
	switch {
	case err == nil && !replace:
		return Freeze{}, conflict(f.Triple())
	case err != nil && ErrorCode(err) != ENOTFOUND:
		return Freeze{}, err
	}
	if err := s.PutRecord(ctx, f.RecordSHA256, raw); err != nil {
		return Freeze{}, err
	}
	if err := s.Grant(ctx, f, replace); err != nil {
		if ErrorCode(err) == ECONFLICT {
			return Freeze{}, conflict(f.Triple())
		}
		return Freeze{}, err
	}
	return f, nil
}

func conflict(t Triple) error {
	return &Error{Code: ECONFLICT, Op: "freeze grant", Message: fmt.Sprintf("%s already has a freeze", t),
		Hint: "replace the existing freeze, or revoke it first"}
}

// VerifyProblem is one thing VerifyLedger found wrong.
type VerifyProblem struct {
	// Triple is the freeze concerned; nil for a problem of the whole log.
	Triple *Triple `json:"triple,omitempty"`
	Reason string  `json:"reason"`
	// Voided is true when the freeze was removed for it.
	Voided bool `json:"voided"`
}

// VerifyReport is the outcome of VerifyLedger.
type VerifyReport struct {
	Freezes    int             `json:"freezes"`     // entries checked
	AuditLines int             `json:"audit_lines"` // lines of the log read
	Problems   []VerifyProblem `json:"problems"`
}

// OK reports whether nothing was wrong.
func (r VerifyReport) OK() bool { return len(r.Problems) == 0 }

// VerifyLedger checks the whole store and voids every freeze that fails:
// the audit log's chain must be intact and replaying it must give exactly
// the ledger (an entry edited by hand, to extend a freeze or change its
// owner, differs from the log); every entry's stored record must exist,
// hash to record_sha256 and classify SCHEDULER for its triple. When the
// log itself is broken no entry can be vouched for and all are voided. An
// entry the log holds but the ledger lost is restored and voided, so that
// the two agree again. by names who verifies.
func VerifyLedger(ctx context.Context, s Store, by string) (VerifyReport, error) {
	lines, freezes, err := snapshot(ctx, s)
	if errors.Is(err, ErrUnauthenticated) {
		// An audit line the store refuses: the log vouches for nothing.
		refusal := err.Error()
		if freezes, err = s.ListFreezes(ctx); err != nil {
			return VerifyReport{}, err
		}
		rep := VerifyReport{Freezes: len(freezes), Problems: []VerifyProblem{{Reason: refusal}}}
		for _, f := range freezes {
			t := f.Triple()
			reason := "the audit log cannot vouch for it: a line of it is refused"
			if err := void(ctx, s, t, by, reason); err != nil {
				return rep, err
			}
			rep.Problems = append(rep.Problems, VerifyProblem{Triple: &t, Reason: reason, Voided: true})
		}
		return rep, nil
	}
	if err != nil {
		return VerifyReport{}, err
	}
	rep := VerifyReport{Freezes: len(freezes), AuditLines: len(lines), Problems: []VerifyProblem{}}
	voidAll := func(reason string) error {
		for _, f := range freezes {
			t := f.Triple()
			if err := void(ctx, s, t, by, reason); err != nil {
				return err
			}
			rep.Problems = append(rep.Problems, VerifyProblem{Triple: &t, Reason: reason, Voided: true})
		}
		return nil
	}
	if err := VerifyAuditChain(lines); err != nil {
		rep.Problems = append(rep.Problems, VerifyProblem{Reason: err.Error()})
		return rep, voidAll("the audit log cannot vouch for it: its chain is broken")
	}
	logged, err := ReplayAudit(lines)
	if err != nil {
		rep.Problems = append(rep.Problems, VerifyProblem{Reason: err.Error()})
		return rep, voidAll("the audit log cannot vouch for it: it does not replay")
	}
	for _, f := range freezes {
		t := f.Triple()
		want, ok := logged[t.Key()]
		delete(logged, t.Key())
		reason := ""
		switch {
		case !ok:
			reason = "the audit log never granted it (added by hand)"
		case !SameFreeze(f, want):
			reason = "edited by hand: " + FreezeDiff(f, want)
		default:
			if reason, err = checkFreeze(ctx, s, f); err != nil {
				return rep, err
			}
		}
		if reason == "" {
			continue
		}
		if err := void(ctx, s, t, by, reason); err != nil {
			return rep, err
		}
		rep.Problems = append(rep.Problems, VerifyProblem{Triple: &t, Reason: reason, Voided: true})
	}
	for _, f := range sortedFreezes(logged) {
		t := f.Triple()
		reason := "removed from the ledger by hand; the audit log still holds it"
		p := VerifyProblem{Triple: &t, Reason: reason}
		// Restore it from the log and void it, so log and ledger agree.
		err := s.Grant(ctx, f, false)
		if err == nil {
			err = void(ctx, s, t, by, reason)
			p.Voided = err == nil
		}
		if err != nil && ErrorCode(err) != ECONFLICT && ErrorCode(err) != EINVALID {
			return rep, err
		}
		rep.Problems = append(rep.Problems, p)
	}
	return rep, nil
}

// snapshot reads the log and the ledger at one moment: every change
// appends to the log, so if the log is the same before and after the
// ledger is read, nothing changed in between.
func snapshot(ctx context.Context, s Store) ([][]byte, []Freeze, error) {
	for range 20 {
		before, err := s.AuditLines(ctx)
		if err != nil {
			return nil, nil, err
		}
		freezes, err := s.ListFreezes(ctx)
		if err != nil {
			return nil, nil, err
		}
		after, err := s.AuditLines(ctx)
		if err != nil {
			return nil, nil, err
		}
		if len(before) == len(after) && (len(after) == 0 || bytes.Equal(before[len(before)-1], after[len(after)-1])) {
			return after, freezes, nil
		}
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
	}
	return nil, nil, &Error{Code: EINTERNAL, Op: "verify ledger", Message: "the ledger kept changing while it was read", Hint: "run verify again when fewer checks are running"}
}

func sortedFreezes(m map[string]Freeze) []Freeze {
	out := make([]Freeze, 0, len(m))
	for _, f := range m {
		out = append(out, f)
	}
	SortFreezes(out)
	return out
}

// SortFreezes sorts fs by triple, the order ListFreezes returns.
func SortFreezes(fs []Freeze) {
	slices.SortFunc(fs, func(a, b Freeze) int { return strings.Compare(a.Triple().Key(), b.Triple().Key()) })
}
