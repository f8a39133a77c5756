package filestore

import (
	"context"
	"fmt"

	"github.com/flakegate/flakegate"
)

// ListFreezes returns every freeze, sorted by triple.
func (s *Store) ListFreezes(ctx context.Context) ([]flakegate.Freeze, error) {
	st, unlock, err := s.begin(ctx, false)
	if err != nil {
		return nil, err
	}
	defer unlock()
	return sorted(st.freezes), nil
}

// GetFreeze returns t's freeze, or ENOTFOUND.
func (s *Store) GetFreeze(ctx context.Context, t flakegate.Triple) (flakegate.Freeze, error) {
	st, unlock, err := s.begin(ctx, false)
	if err != nil {
		return flakegate.Freeze{}, err
	}
	defer unlock()
	f, ok := st.freezes[t.Key()]
	if !ok {
		return flakegate.Freeze{}, notFound(t)
	}
	return f, nil
}

// Grant writes f with a grant event; ECONFLICT if t has a freeze and
// replace is false.
func (s *Store) Grant(ctx context.Context, f flakegate.Freeze, replace bool) error {
	if err := f.Validate(); err != nil {
		return err
	}
	f.GrantedAt = f.GrantedAt.UTC()
	st, unlock, err := s.begin(ctx, false)
	if err != nil {
		return err
	}
	defer unlock()
	t := f.Triple()
	e := flakegate.AuditEvent{Action: flakegate.ActionGrant, At: s.Now(), By: f.GrantedBy,
		Triple: t, RunsLeft: f.ExpiresAfterRuns, Freeze: &f}
	if old, ok := st.freezes[t.Key()]; ok {
		if !replace {
			return flakegate.Errorf(flakegate.ECONFLICT, "%s already has a freeze", t)
		}
		e.Reason = fmt.Sprintf("replaces the freeze of record %s with %d runs left", old.RecordSHA256, old.ExpiresAfterRuns)
	}
	st.freezes[t.Key()] = f
	return s.commit(st, e)
}

// Consume counts one skip of t, deleting the freeze at zero.
func (s *Store) Consume(ctx context.Context, t flakegate.Triple, recordSHA256, by string) (int, error) {
	st, unlock, err := s.begin(ctx, false)
	if err != nil {
		return 0, err
	}
	defer unlock()
	left, events, err := s.consume(st, t, recordSHA256, by)
	if err != nil {
		return 0, err
	}
	if err := s.commit(st, events...); err != nil {
		return 0, err
	}
	return left, nil
}

// consume takes one run off t's freeze in st, which must be bound to
// recordSHA256, and returns the runs left and the events to log: the
// skip, and the expiry when that was the last run (the freeze goes).
func (s *Store) consume(st *state, t flakegate.Triple, recordSHA256, by string) (int, []flakegate.AuditEvent, error) {
	f, ok := st.freezes[t.Key()]
	if !ok || f.RecordSHA256 != recordSHA256 || f.ExpiresAfterRuns < 1 {
		return 0, nil, notFound(t)
	}
	f.ExpiresAfterRuns--
	now := s.Now()
	events := []flakegate.AuditEvent{{Action: flakegate.ActionSkip, At: now, By: by, Triple: t, RunsLeft: f.ExpiresAfterRuns}}
	if f.ExpiresAfterRuns == 0 {
		delete(st.freezes, t.Key())
		events = append(events, flakegate.AuditEvent{Action: flakegate.ActionExpire, At: now, By: by, Triple: t,
			Reason: "no runs left; the triple needs a new classification"})
	} else {
		st.freezes[t.Key()] = f
	}
	return f.ExpiresAfterRuns, events, nil
}

// Remove deletes t's freeze with a void or revoke event.
func (s *Store) Remove(ctx context.Context, t flakegate.Triple, action flakegate.AuditAction, by, reason string) error {
	if action != flakegate.ActionVoid && action != flakegate.ActionRevoke {
		return flakegate.Errorf(flakegate.EINVALID, "remove a freeze: action %q, want void or revoke", action)
	}
	st, unlock, err := s.begin(ctx, false)
	if err != nil {
		return err
	}
	defer unlock()
	f, ok := st.freezes[t.Key()]
	if !ok {
		return notFound(t)
	}
	delete(st.freezes, t.Key())
	return s.commit(st, flakegate.AuditEvent{Action: action, At: s.Now(), By: by, Triple: t,
		RunsLeft: f.ExpiresAfterRuns, Reason: reason})
}

// AuditLines returns the audit log's lines, oldest first.
func (s *Store) AuditLines(ctx context.Context) ([][]byte, error) {
	st, unlock, err := s.begin(ctx, true)
	if err != nil {
		return nil, err
	}
	defer unlock()
	return st.lines, nil
}

// begin takes the lock and loads the state, with every audit line if
// withLines; the caller must unlock.
func (s *Store) begin(ctx context.Context, withLines bool) (*state, func(), error) {
	unlock, err := s.lock(ctx)
	if err != nil {
		return nil, nil, err
	}
	st, err := s.load(withLines)
	if err != nil {
		unlock()
		return nil, nil, err
	}
	return st, unlock, nil
}

func notFound(t flakegate.Triple) error {
	return flakegate.Errorf(flakegate.ENOTFOUND, "no freeze for %s", t)
}
