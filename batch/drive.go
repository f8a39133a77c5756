package batch

import (
	"context"
	"sort"
	"time"

	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/transcript"
)

// NotRun is the base seed result of a triple whose base seed did not
// run: skipped, interrupted or given up on. The table reads it as no
// base replay (INCOMPLETE), never as a pass.
const NotRun = "not_run"

// Tally is what a triple's attempts decided: the run record's result
// fields.
type Tally struct {
	Candidate string   // pass, fail or error
	Retries   []string // pass, fail or error; never nil once driven
	Base      string   // pass, fail, error, timeout or not_run
	FromCache bool     // the base result is the replay cache's
	BudgetOK  bool
	// Complete says the transcript is whole: a failed write, or a check
	// cancelled under an attempt, clears it (the Runner's business).
	Complete bool
	// Probes are the flake probe's results, nil when none ran; Origin is
	// "base", "new" or "unknown" for a run with the SCHEDULER signals,
	// OriginWhy says why and OriginCounts gives the counts alone.
	Probes                          []string
	Origin, OriginWhy, OriginCounts string
}

// A Member is one triple of a batch; a triple alone is a batch of one.
type Member struct {
	Key       string // the replay cache key of its base seed
	ProbeRuns int    // its property's flake_probe_runs
	*Tally           // what its attempts decided
	// absent is set once a process says the test is not there: later
	// processes (retries, probes) run without it.
	absent bool
}

// An Attempt is one process the Driver asks for.
type Attempt struct {
	Side    string    // transcript.SideCandidate, SideBase or SideProbe
	Index   int       // 0 first; i retry i; i probe i
	Members []*Member // in the batch's order: every one runs, in its place
	// Take says which members take a result from the process (nil:
	// every one); the others run but nothing is written for them.
	Take func(*Member) bool
}

// Takes reports whether m takes a result from the attempt.
func (a Attempt) Takes(m *Member) bool { return a.Take == nil || a.Take(m) }

// Results are what one process said: each taking member's result, and
// the taking members the process never started (nothing was written for
// them).
type Results struct {
	Of        map[*Member]Outcome
	Unstarted []*Member
}

// An Outcome is one member's result in one process.
type Outcome struct {
	Result string // attempt.Pass, Fail, Timeout or Errored
	Absent bool   // the test is not there: later processes run without it
}

// A Runner makes the attempts the Driver asks for: one process per
// call, in the tree the side's next attempt takes, written to each
// taking member's transcript. An error is flakegate's own failure and
// ends the drive.
type Runner interface {
	Attempt(ctx context.Context, a Attempt) (Results, error)
	// Note writes an attempt of m that ran in no process, with result
	// and why.
	Note(m *Member, side string, index int, result, why string)
	// BaseKnown writes m's base seed result (m.Base, m.FromCache).
	BaseKnown(m *Member)
}

// A Cache is the replay cache as the Driver uses it. Lock takes a key's
// replay lock; an error with ctx ended is an interruption, not a
// failure.
type Cache interface {
	Lock(ctx context.Context, m *Member) (release func(), err error)
	Get(ctx context.Context, m *Member) (result string, ok bool, err error)
	// Put stores m's base result, run at; it returns the stored result,
	// another check's when it stored one first.
	Put(ctx context.Context, m *Member, result string, at time.Time) (stored string, err error)
}

// A Driver runs the attempts of a batch in the order that decides the
// labels.
type Driver struct {
	RetryCap int
	Runner   Runner
	Cache    Cache // nil: no replay cache (--no-replay-cache)
	// Keep says base results may be stored: the attempts are sandboxed.
	Keep bool
	// History is what earlier records of m's triple on this base say.
	History func(ctx context.Context, m *Member) (History, error)
	// NoRetry, when set, names a failed member that takes no retry
	// although its base passed (the patch edited what grades it).
	NoRetry func(m *Member) bool
}

// Drive runs the members' first attempt, their base seeds, the retries
// and the probes, and sets each member's Tally. Rules (each once):
//   - the first candidate attempt: a timeout is a failure that misses
//     the budget;
//   - the base seed of every member is settled before any retry (bases);
//   - only a member whose first attempt failed within its budget, and
//     whose base did not fail, is retried: the whole batch again
//     (retries);
//   - the members with the SCHEDULER signals are probed on the base and
//     get a flake origin (probes).
func (d *Driver) Drive(ctx context.Context, members []*Member) error {
	for _, m := range members {
		m.BudgetOK = true
		if m.Retries == nil {
			m.Retries = []string{}
		}
	}
	if err := d.first(ctx, members); err != nil {
		return err
	}
	if err := d.bases(ctx, members); err != nil {
		return err
	}
	if err := d.retries(ctx, members); err != nil {
		return err
	}
	return d.probes(ctx, members)
}

// first makes the first candidate attempt of every member.
func (d *Driver) first(ctx context.Context, members []*Member) error {
	res, err := d.settle(ctx, Attempt{Side: transcript.SideCandidate, Members: members})
	if err != nil {
		return err
	}
	for _, m := range members {
		switch res[m] {
		case attempt.Pass:
			m.Candidate = attempt.Pass
		case attempt.Fail:
			m.Candidate = attempt.Fail
		case attempt.Timeout:
			m.Candidate, m.BudgetOK = attempt.Fail, false
		default:
			m.Candidate = attempt.Errored
		}
	}
	return nil
}

// killedBeforeAny is why a member of a process killed before any member
// started has a timeout.
const killedBeforeAny = "the batch was killed at its budget before this test started"

// settle makes attempt a and returns each taking member's result.
// Members a killed process never started run again in a process of
// their own, a fresh attempt with the same index, until each has a
// result; when the process started none of its members (a build as long
// as the budget) each is a timeout: no smaller batch would do better.
func (d *Driver) settle(ctx context.Context, a Attempt) (map[*Member]string, error) {
	results := map[*Member]string{}
	for len(a.Members) > 0 {
		res, err := d.Runner.Attempt(ctx, a)
		if err != nil {
			return nil, err
		}
		for m, o := range res.Of {
			results[m] = o.Result
			if o.Absent {
				m.absent = true
			}
		}
		if len(res.Unstarted) == 0 {
			break
		}
		if len(res.Unstarted) == len(a.Members) {
			for _, m := range res.Unstarted {
				d.Runner.Note(m, a.Side, a.Index, attempt.Timeout, killedBeforeAny)
				results[m] = attempt.Timeout
			}
			break
		}
		a.Members = res.Unstarted
	}
	return results, nil
}

// bases sets every member's base seed result: from the replay cache
// (under each key's replay lock, taken in key order so that two checks
// never wait for each other, and held until the result is stored), else
// from one base attempt of the members the cache does not have. An
// interrupted check leaves every base not_run, none from the cache.
func (d *Driver) bases(ctx context.Context, members []*Member) error {
	if ctx.Err() != nil {
		setNotRun(members)
		return nil
	}
	need := members
	if d.Cache != nil {
		cached, release, err := d.cached(ctx, members)
		defer release()
		if err != nil {
			return err
		}
		if cached == nil { // interrupted while it took the locks
			setNotRun(members)
			return nil
		}
		need = nil
		for _, m := range members {
			if !cached[m] {
				need = append(need, m)
			}
		}
	}
	if len(need) > 0 {
		if err := d.replay(ctx, need); err != nil {
			return err
		}
	}
	for _, m := range members {
		if ctx.Err() != nil && m.Base == "" {
			m.Base = NotRun
		}
		if m.Base != NotRun {
			d.Runner.BaseKnown(m)
		}
	}
	return nil
}

// setNotRun leaves the base of every member not_run: none is known, not
// even one read from the cache before an interruption.
func setNotRun(members []*Member) {
	for _, m := range members {
		m.Base, m.FromCache = NotRun, false
	}
}

// cached takes the members' replay locks in key order and reads the
// cache under them; release gives the locks back in reverse order. A
// nil cached (and nil error) says the check was interrupted while it
// waited for a lock.
func (d *Driver) cached(ctx context.Context, members []*Member) (cached map[*Member]bool, release func(), err error) {
	order := append([]*Member(nil), members...)
	sort.SliceStable(order, func(i, k int) bool { return order[i].Key < order[k].Key })
	var releases []func()
	release = func() {
		for i := len(releases) - 1; i >= 0; i-- {
			releases[i]()
		}
	}
	cached = map[*Member]bool{}
	for _, m := range order {
		rel, err := d.Cache.Lock(ctx, m)
		if err != nil {
			if ctx.Err() != nil {
				return nil, release, nil
			}
			return nil, release, err
		}
		releases = append(releases, rel)
		got, ok, err := d.Cache.Get(ctx, m)
		if err != nil {
			return nil, release, err
		}
		if ok {
			m.Base, m.FromCache = got, true
			cached[m] = true
		}
	}
	return cached, release, nil
}

// replay runs the base seed of need in one base attempt and keeps each
// result in the cache: only a pass or a fail that a sandboxed attempt
// of a live check gave (an error or a timeout may be the machine's, an
// unsandboxed attempt may have been tampered with). The stored result
// wins: the first check to store one rules.
func (d *Driver) replay(ctx context.Context, need []*Member) error {
	started := time.Now()
	res, err := d.settle(ctx, Attempt{Side: transcript.SideBase, Members: need})
	if err != nil {
		return err
	}
	for _, m := range need {
		m.Base = res[m]
		if d.Cache == nil || !d.Keep || ctx.Err() != nil || (res[m] != attempt.Pass && res[m] != attempt.Fail) {
			continue
		}
		stored, err := d.Cache.Put(ctx, m, res[m], started)
		if err != nil {
			return err
		}
		if stored != res[m] {
			m.Base, m.FromCache = stored, true
		}
	}
	return nil
}

// retries runs the whole batch again, up to retry_cap times, while a
// member whose first attempt failed within its budget (and whose base
// seed did not fail: else it is PROPERTY whatever a retry says) has not
// passed. Only those members take results. A timeout is a failure that
// misses the budget; a pass ends a member's retries, and so does an
// error (it ends the decision).
func (d *Driver) retries(ctx context.Context, members []*Member) error {
	want := map[*Member]bool{}
	for _, m := range members {
		if m.Candidate == attempt.Fail && m.BudgetOK && m.Base != attempt.Fail && (d.NoRetry == nil || !d.NoRetry(m)) {
			want[m] = true
		}
	}
	for i := 1; i <= d.RetryCap && len(want) > 0 && ctx.Err() == nil; i++ {
		res, err := d.retry(ctx, i, members, want)
		if err != nil {
			return err
		}
		for _, m := range members {
			if !want[m] {
				continue
			}
			r := res[m]
			if r == attempt.Timeout {
				m.BudgetOK = false
				r = attempt.Fail
			}
			m.Retries = append(m.Retries, r)
			if r != attempt.Fail {
				delete(want, m)
			}
		}
	}
	return nil
}

// notInRetry is why a member a killed retry never reached is an error.
const notInRetry = "this test did not run in the retry batch (it was killed at its budget, or stopped, before the test)"

// retry runs retry i: every present member, in order, on the candidate
// tree; the members of want take attempt i. A member the process never
// reached is an error for that retry: it never runs again in a smaller
// batch (a retry that ran it alone could pass it, and turn a failure
// that needs the tests before it into SCHEDULER).
func (d *Driver) retry(ctx context.Context, i int, members []*Member, want map[*Member]bool) (map[*Member]string, error) {
	a := Attempt{Side: transcript.SideCandidate, Index: i, Members: present(members), Take: func(m *Member) bool { return want[m] }}
	res, err := d.Runner.Attempt(ctx, a)
	if err != nil {
		return nil, err
	}
	results := map[*Member]string{}
	for m, o := range res.Of {
		results[m] = o.Result
		if o.Absent {
			m.absent = true
		}
	}
	for _, m := range res.Unstarted {
		d.Runner.Note(m, transcript.SideCandidate, i, attempt.Errored, notInRetry)
		results[m] = attempt.Errored
	}
	return results, nil
}

// present are the members, in order, but those a process said are not
// there.
func present(members []*Member) []*Member {
	var out []*Member
	for _, m := range members {
		if !m.absent {
			out = append(out, m)
		}
	}
	return out
}

// probes runs the flake probe for the members with the SCHEDULER
// signals: the present members on the base tree, up to the largest
// flake_probe_runs, each such member stopping at its own count or its
// first base failure (a probe never turns a base failure into a pass:
// it only looks for them). Then each such member gets its flake origin
// ("unknown" without probe runs), unless the check was interrupted.
func (d *Driver) probes(ctx context.Context, members []*Member) error {
	want := map[*Member]bool{}
	var likely []*Member
	k := 0
	for _, m := range members {
		if !SchedulerLikely(m.Tally) {
			continue
		}
		likely = append(likely, m)
		if m.ProbeRuns > 0 {
			want[m] = true
			m.Probes = []string{}
			k = max(k, m.ProbeRuns)
		}
	}
	if len(likely) == 0 || ctx.Err() != nil {
		return nil
	}
	for i := 1; i <= k && len(want) > 0 && ctx.Err() == nil; i++ {
		res, err := d.settle(ctx, Attempt{Side: transcript.SideProbe, Index: i, Members: present(members), Take: func(m *Member) bool { return want[m] }})
		if err != nil {
			return err
		}
		for _, m := range members {
			if want[m] {
				m.Probes = append(m.Probes, res[m])
				if res[m] == attempt.Fail || len(m.Probes) >= m.ProbeRuns {
					delete(want, m)
				}
			}
		}
	}
	if ctx.Err() != nil {
		return nil
	}
	return d.origins(ctx, likely)
}

// origins sets the flake origin of each member of likely.
func (d *Driver) origins(ctx context.Context, likely []*Member) error {
	for _, m := range likely {
		h, err := d.History(ctx, m)
		if err != nil {
			return err
		}
		m.Origin, m.OriginWhy, m.OriginCounts = Origin(m.ProbeRuns > 0, !m.FromCache, m.Probes, h, CandidateRunsOf(m.Tally))
	}
	return nil
}
