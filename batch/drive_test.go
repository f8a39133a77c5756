package batch

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flakegate/flakegate"
)

// fakeRunner answers each Attempt from a script and records what it was
// asked, in the members' labels.
type fakeRunner struct {
	t        *testing.T
	label    map[*Member]string
	hide     string              // a label left out of calls (the parity rows' extra member)
	script   []map[string]string // per call: label -> pass, fail, timeout, error, unstarted or absent
	calls    []string            // "candidate#1 a,b take b"
	notes    []string            // "candidate#1 b error: why"
	bases    []string            // "a pass cache"
	cancel   func()
	cancelAt int // cancel the context at the end of this call (1 is the first)
}

func (f *fakeRunner) names(ms []*Member, keep func(*Member) bool) string {
	var out []string
	for _, m := range ms {
		if f.label[m] != f.hide && (keep == nil || keep(m)) {
			out = append(out, f.label[m])
		}
	}
	return strings.Join(out, ",")
}

func (f *fakeRunner) Attempt(ctx context.Context, a Attempt) (Results, error) {
	n := len(f.calls)
	f.calls = append(f.calls, fmt.Sprintf("%s#%d %s take %s", a.Side, a.Index, f.names(a.Members, nil), f.names(a.Members, a.Takes)))
	if n >= len(f.script) {
		f.t.Fatalf("call %d (%s) is not in the script", n+1, f.calls[n])
	}
	res := Results{Of: map[*Member]Outcome{}}
	for _, m := range a.Members {
		if !a.Takes(m) {
			continue
		}
		switch say := f.script[n][f.label[m]]; say {
		case "":
			f.t.Fatalf("call %d (%s): the script says nothing of %s", n+1, f.calls[n], f.label[m])
		case "unstarted":
			res.Unstarted = append(res.Unstarted, m)
		case "absent":
			res.Of[m] = Outcome{Result: "error", Absent: true}
		default:
			res.Of[m] = Outcome{Result: say}
		}
	}
	if n+1 == f.cancelAt {
		f.cancel()
	}
	return res, nil
}

func (f *fakeRunner) Note(m *Member, side string, index int, result, why string) {
	f.notes = append(f.notes, fmt.Sprintf("%s#%d %s %s: %s", side, index, f.label[m], result, why))
}

func (f *fakeRunner) BaseKnown(m *Member) {
	if f.label[m] == f.hide {
		return
	}
	s := f.label[m] + " " + m.Base
	if m.FromCache {
		s += " cache"
	}
	f.bases = append(f.bases, s)
}

// fakeCache is a replay cache by member label.
type fakeCache struct {
	label     map[*Member]string
	have      map[string]string // what the cache holds
	stored    map[string]string // what another check stored first
	locks     []string          // "lock a", "release a", in order
	puts      []string          // "a pass"
	cancelFor string            // cancel the context while waiting for this lock
	cancel    func()
}

func (c *fakeCache) Lock(ctx context.Context, m *Member) (func(), error) {
	l := c.label[m]
	if l == c.cancelFor {
		c.cancel()
		return nil, ctx.Err()
	}
	c.locks = append(c.locks, "lock "+l)
	return func() { c.locks = append(c.locks, "release "+l) }, nil
}

func (c *fakeCache) Get(_ context.Context, m *Member) (string, bool, error) {
	r, ok := c.have[c.label[m]]
	return r, ok, nil
}

func (c *fakeCache) Put(_ context.Context, m *Member, result string, _ time.Time) (string, error) {
	c.puts = append(c.puts, c.label[m]+" "+result)
	if s, ok := c.stored[c.label[m]]; ok {
		return s, nil
	}
	return result, nil
}

type driveCase struct {
	name      string
	members   []string          // labels in batch order; one: a triple alone
	keys      map[string]string // label -> replay key (default "k-"+label)
	probeRuns map[string]int
	retryCap  int
	cache     map[string]string // label -> cached base result (nil: no Cache)
	stored    map[string]string // what another check stored first
	keep      bool
	cancelFor string // the lock whose wait the check's end interrupts
	noRetry   string // a member the grader edits keep from retries
	script    []map[string]string
	cancelAt  int
	history   map[string]History
	wantCalls []string
	wantNotes []string
	wantBases []string
	wantLocks []string
	wantPuts  []string
	want      map[string]Tally // OriginWhy and OriginCounts are TestOrigin's
}

// drive runs c with hide, when set, as one more member of the batch
// (after the others) and returns the runner, the cache and each
// member's tally.
func drive(t *testing.T, c driveCase, hide string) (*fakeRunner, *fakeCache, map[string]Tally) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	labels := map[*Member]string{}
	byLabel := map[string]*Member{}
	var members []*Member
	for _, l := range append(slices.Clone(c.members), hide) {
		if l == "" {
			continue
		}
		key := "k-" + l
		if k, ok := c.keys[l]; ok {
			key = k
		}
		m := &Member{Key: key, ProbeRuns: c.probeRuns[l], Tally: &Tally{Complete: true}}
		labels[m], byLabel[l] = l, m
		members = append(members, m)
	}
	f := &fakeRunner{t: t, label: labels, hide: hide, script: c.script, cancel: cancel, cancelAt: c.cancelAt}
	d := &Driver{RetryCap: c.retryCap, Runner: f, Keep: c.keep,
		History: func(_ context.Context, m *Member) (History, error) { return c.history[labels[m]], nil }}
	if c.noRetry != "" {
		d.NoRetry = func(m *Member) bool { return labels[m] == c.noRetry }
	}
	var fc *fakeCache
	if c.cache != nil {
		fc = &fakeCache{label: labels, have: c.cache, stored: c.stored, cancelFor: c.cancelFor, cancel: cancel}
		d.Cache = fc
	}
	if err := d.Drive(ctx, members); err != nil {
		t.Fatal(err)
	}
	got := map[string]Tally{}
	for _, l := range c.members {
		tl := *byLabel[l].Tally
		tl.OriginWhy, tl.OriginCounts = "", ""
		got[l] = tl
	}
	return f, fc, got
}

func check(t *testing.T, c driveCase, f *fakeRunner, fc *fakeCache, got map[string]Tally) {
	t.Helper()
	same := func(what string, got, want []string) {
		if !slices.Equal(got, want) {
			t.Errorf("%s:\n got %q\nwant %q", what, got, want)
		}
	}
	same("calls", f.calls, c.wantCalls)
	same("notes", f.notes, c.wantNotes)
	same("bases", f.bases, c.wantBases)
	if fc != nil {
		same("locks", fc.locks, c.wantLocks)
		same("puts", fc.puts, c.wantPuts)
	}
	for _, l := range c.members {
		if !reflect.DeepEqual(got[l], c.want[l]) {
			t.Errorf("%s:\n got %+v\nwant %+v", l, got[l], c.want[l])
		}
	}
}

// tally is a member's expected Tally: the candidate, the base and the
// retries, within budget, transcript complete.
func tally(cand, base string, retries ...string) Tally {
	return Tally{Candidate: cand, Base: base, Retries: append([]string{}, retries...), BudgetOK: true, Complete: true}
}

// with returns t changed by f.
func with(t Tally, f func(*Tally)) Tally {
	f(&t)
	return t
}

func origin(o string, probes ...string) func(*Tally) {
	return func(t *Tally) {
		t.Origin = o
		if probes != nil {
			t.Probes = probes
		}
	}
}

func overBudget(t *Tally) { t.BudgetOK = false }

// one is a script step with every member of labels saying say.
func one(say string, labels ...string) map[string]string {
	m := map[string]string{}
	for _, l := range labels {
		m[l] = say
	}
	return m
}

const (
	killedNote  = ": " + killedBeforeAny
	notInRetryN = ": " + notInRetry
)

var a = []string{"a"}

var driveCases = []driveCase{{
	name: "1 alone pass, base pass", members: a, retryCap: 3,
	script:    []map[string]string{one("pass", "a"), one("pass", "a")},
	wantCalls: []string{"candidate#0 a take a", "base#0 a take a"}, wantBases: []string{"a pass"},
	want: map[string]Tally{"a": tally("pass", "pass")},
}, {
	name: "2 alone fail, base fail: no retry, no probe", members: a, retryCap: 3, probeRuns: map[string]int{"a": 2},
	script:    []map[string]string{one("fail", "a"), one("fail", "a")},
	wantCalls: []string{"candidate#0 a take a", "base#0 a take a"}, wantBases: []string{"a fail"},
	want: map[string]Tally{"a": tally("fail", "fail")},
}, {
	name: "3 alone fail, base pass, retry pass, probes pass", members: a, retryCap: 3, probeRuns: map[string]int{"a": 2},
	history:   map[string]History{"a": {Passes: 3, Records: 2}},
	script:    []map[string]string{one("fail", "a"), one("pass", "a"), one("pass", "a"), one("pass", "a"), one("pass", "a")},
	wantCalls: []string{"candidate#0 a take a", "base#0 a take a", "candidate#1 a take a", "probe#1 a take a", "probe#2 a take a"},
	wantBases: []string{"a pass"},
	want:      map[string]Tally{"a": with(tally("fail", "pass", "pass"), origin("new", "pass", "pass"))},
}, {
	name: "4 alone retries fail up to the cap: no probe", members: a, retryCap: 3, probeRuns: map[string]int{"a": 2},
	script:    []map[string]string{one("fail", "a"), one("pass", "a"), one("fail", "a"), one("fail", "a"), one("fail", "a")},
	wantCalls: []string{"candidate#0 a take a", "base#0 a take a", "candidate#1 a take a", "candidate#2 a take a", "candidate#3 a take a"},
	wantBases: []string{"a pass"},
	want:      map[string]Tally{"a": tally("fail", "pass", "fail", "fail", "fail")},
}, {
	name: "5 alone first timeout: a failure over budget, no retry", members: a, retryCap: 3,
	script:    []map[string]string{one("timeout", "a"), one("pass", "a")},
	wantCalls: []string{"candidate#0 a take a", "base#0 a take a"}, wantBases: []string{"a pass"},
	want: map[string]Tally{"a": with(tally("fail", "pass"), overBudget)},
}, {
	name: "6 alone retry timeout then pass: over budget, no probe", members: a, retryCap: 3, probeRuns: map[string]int{"a": 2},
	script:    []map[string]string{one("fail", "a"), one("pass", "a"), one("timeout", "a"), one("pass", "a")},
	wantCalls: []string{"candidate#0 a take a", "base#0 a take a", "candidate#1 a take a", "candidate#2 a take a"},
	wantBases: []string{"a pass"},
	want:      map[string]Tally{"a": with(tally("fail", "pass", "fail", "pass"), overBudget)},
}, {
	name: "7 alone retry error ends the retries", members: a, retryCap: 3,
	script:    []map[string]string{one("fail", "a"), one("pass", "a"), one("error", "a")},
	wantCalls: []string{"candidate#0 a take a", "base#0 a take a", "candidate#1 a take a"}, wantBases: []string{"a pass"},
	want: map[string]Tally{"a": tally("fail", "pass", "error")},
}, {
	name: "8 base error: retries run, no probe", members: a, retryCap: 2, probeRuns: map[string]int{"a": 2},
	script:    []map[string]string{one("fail", "a"), one("error", "a"), one("fail", "a"), one("pass", "a")},
	wantCalls: []string{"candidate#0 a take a", "base#0 a take a", "candidate#1 a take a", "candidate#2 a take a"},
	wantBases: []string{"a error"},
	want:      map[string]Tally{"a": tally("fail", "error", "fail", "pass")},
}, {
	name: "9a cache hit: no base attempt, not counted in the origin", members: a, retryCap: 1, cache: map[string]string{"a": "pass"}, keep: true,
	script:    []map[string]string{one("fail", "a"), one("pass", "a")},
	wantCalls: []string{"candidate#0 a take a", "candidate#1 a take a"}, wantBases: []string{"a pass cache"},
	wantLocks: []string{"lock a", "release a"},
	want:      map[string]Tally{"a": with(tally("fail", "pass", "pass"), func(t *Tally) { t.FromCache, t.Origin = true, "unknown" })},
}, {
	name: "9b cache hit for b only: the base batch runs a alone", members: []string{"a", "b"}, cache: map[string]string{"b": "fail"}, keep: true,
	script:    []map[string]string{one("pass", "a", "b"), one("pass", "a")},
	wantCalls: []string{"candidate#0 a,b take a,b", "base#0 a take a"}, wantBases: []string{"a pass", "b fail cache"},
	wantLocks: []string{"lock a", "lock b", "release b", "release a"}, wantPuts: []string{"a pass"},
	want: map[string]Tally{"a": tally("pass", "pass"), "b": with(tally("pass", "fail"), func(t *Tally) { t.FromCache = true })},
}, {
	name: "10a put only pass and fail; the stored copy wins", members: []string{"a", "b", "c", "d"}, cache: map[string]string{}, keep: true,
	stored:    map[string]string{"a": "fail"},
	script:    []map[string]string{one("pass", "a", "b", "c", "d"), {"a": "pass", "b": "fail", "c": "error", "d": "timeout"}},
	wantCalls: []string{"candidate#0 a,b,c,d take a,b,c,d", "base#0 a,b,c,d take a,b,c,d"},
	wantBases: []string{"a fail cache", "b fail", "c error", "d timeout"},
	wantLocks: []string{"lock a", "lock b", "lock c", "lock d", "release d", "release c", "release b", "release a"},
	wantPuts:  []string{"a pass", "b fail"},
	want: map[string]Tally{"a": with(tally("pass", "fail"), func(t *Tally) { t.FromCache = true }), "b": tally("pass", "fail"),
		"c": tally("pass", "error"), "d": tally("pass", "timeout")},
}, {
	name: "10b no put unless the attempts may be kept", members: a, cache: map[string]string{},
	script:    []map[string]string{one("pass", "a"), one("pass", "a")},
	wantCalls: []string{"candidate#0 a take a", "base#0 a take a"}, wantBases: []string{"a pass"},
	wantLocks: []string{"lock a", "release a"},
	want:      map[string]Tally{"a": tally("pass", "pass")},
}, {
	name: "10c no put after the check ended", members: a, retryCap: 3, cache: map[string]string{}, keep: true, cancelAt: 2,
	script:    []map[string]string{one("fail", "a"), one("pass", "a")},
	wantCalls: []string{"candidate#0 a take a", "base#0 a take a"}, wantBases: []string{"a pass"},
	wantLocks: []string{"lock a", "release a"},
	want:      map[string]Tally{"a": tally("fail", "pass")},
}, {
	name: "11a locks in key order, released in reverse", members: []string{"a", "b", "c"}, keys: map[string]string{"a": "k3", "b": "k1", "c": "k2"},
	cache:     map[string]string{},
	script:    []map[string]string{one("pass", "a", "b", "c"), one("pass", "a", "b", "c")},
	wantCalls: []string{"candidate#0 a,b,c take a,b,c", "base#0 a,b,c take a,b,c"}, wantBases: []string{"a pass", "b pass", "c pass"},
	wantLocks: []string{"lock b", "lock c", "lock a", "release a", "release c", "release b"},
	want:      map[string]Tally{"a": tally("pass", "pass"), "b": tally("pass", "pass"), "c": tally("pass", "pass")},
}, {
	name: "11b interrupted while locking: not_run for all, none from the cache", members: []string{"a", "b"}, retryCap: 3,
	cache: map[string]string{"a": "pass"}, cancelFor: "b",
	script:    []map[string]string{one("fail", "a", "b")},
	wantCalls: []string{"candidate#0 a,b take a,b"},
	wantLocks: []string{"lock a", "release a"},
	want:      map[string]Tally{"a": tally("fail", NotRun), "b": tally("fail", NotRun)},
}, {
	name: "12 a retry is the same batch: only the failed member takes", members: []string{"a", "b", "c"}, retryCap: 3,
	script:    []map[string]string{{"a": "pass", "b": "fail", "c": "pass"}, one("pass", "a", "b", "c"), one("pass", "b")},
	wantCalls: []string{"candidate#0 a,b,c take a,b,c", "base#0 a,b,c take a,b,c", "candidate#1 a,b,c take b"},
	wantBases: []string{"a pass", "b pass", "c pass"},
	want: map[string]Tally{"a": tally("pass", "pass"), "b": with(tally("fail", "pass", "pass"), origin("unknown")),
		"c": tally("pass", "pass")},
}, {
	name: "13 an absent member leaves the retries and probes, not the base", members: []string{"a", "b", "c"}, retryCap: 2,
	probeRuns: map[string]int{"a": 1, "c": 1},
	script: []map[string]string{{"a": "fail", "b": "absent", "c": "fail"}, one("pass", "a", "b", "c"), {"a": "fail", "c": "pass"},
		one("pass", "a"), {"a": "pass", "c": "fail"}},
	wantCalls: []string{"candidate#0 a,b,c take a,b,c", "base#0 a,b,c take a,b,c", "candidate#1 a,c take a,c", "candidate#2 a,c take a",
		"probe#1 a,c take a,c"},
	wantBases: []string{"a pass", "b pass", "c pass"},
	want: map[string]Tally{"a": with(tally("fail", "pass", "fail", "pass"), origin("unknown", "pass")), "b": tally("error", "pass"),
		"c": with(tally("fail", "pass", "pass"), origin("base", "fail"))},
}, {
	name: "14a killed batch: the unstarted members run again", members: []string{"a", "b", "c"},
	script:    []map[string]string{{"a": "pass", "b": "unstarted", "c": "unstarted"}, {"b": "pass", "c": "fail"}, one("pass", "a", "b", "c")},
	wantCalls: []string{"candidate#0 a,b,c take a,b,c", "candidate#0 b,c take b,c", "base#0 a,b,c take a,b,c"},
	wantBases: []string{"a pass", "b pass", "c pass"},
	want:      map[string]Tally{"a": tally("pass", "pass"), "b": tally("pass", "pass"), "c": tally("fail", "pass")},
}, {
	name: "14b killed before any member started: each a timeout", members: []string{"a", "b"}, retryCap: 3,
	script:    []map[string]string{one("unstarted", "a", "b"), one("pass", "a", "b")},
	wantCalls: []string{"candidate#0 a,b take a,b", "base#0 a,b take a,b"},
	wantNotes: []string{"candidate#0 a timeout" + killedNote, "candidate#0 b timeout" + killedNote},
	wantBases: []string{"a pass", "b pass"},
	want:      map[string]Tally{"a": with(tally("fail", "pass"), overBudget), "b": with(tally("fail", "pass"), overBudget)},
}, {
	name: "14c a probe's unstarted taker runs again without the others", members: []string{"a", "b"}, retryCap: 1, probeRuns: map[string]int{"a": 1},
	history: map[string]History{"a": {Passes: 20}},
	script: []map[string]string{{"a": "fail", "b": "pass"}, one("pass", "a", "b"), one("pass", "a"), one("unstarted", "a"),
		one("pass", "a")},
	wantCalls: []string{"candidate#0 a,b take a,b", "base#0 a,b take a,b", "candidate#1 a,b take a", "probe#1 a,b take a",
		"probe#1 a take a"},
	wantBases: []string{"a pass", "b pass"},
	want:      map[string]Tally{"a": with(tally("fail", "pass", "pass"), origin("new", "pass")), "b": tally("pass", "pass")},
}, {
	name: "16 a retry's unstarted member is an error, never run again", members: []string{"a", "b"}, retryCap: 1,
	script:    []map[string]string{one("fail", "a", "b"), one("pass", "a", "b"), {"a": "pass", "b": "unstarted"}},
	wantCalls: []string{"candidate#0 a,b take a,b", "base#0 a,b take a,b", "candidate#1 a,b take a,b"},
	wantNotes: []string{"candidate#1 b error" + notInRetryN},
	wantBases: []string{"a pass", "b pass"},
	want:      map[string]Tally{"a": with(tally("fail", "pass", "pass"), origin("unknown")), "b": tally("fail", "pass", "error")},
}, {
	name: "17 probes: k is the largest count, each stops at its own or its first failure", members: []string{"a", "b", "c"}, retryCap: 1,
	probeRuns: map[string]int{"a": 3, "b": 2}, history: map[string]History{"a": {Passes: 10, Records: 5}},
	script: []map[string]string{one("fail", "a", "b", "c"), one("pass", "a", "b", "c"), one("pass", "a", "b", "c"),
		one("pass", "a", "b"), {"a": "pass", "b": "fail"}, one("pass", "a")},
	wantCalls: []string{"candidate#0 a,b,c take a,b,c", "base#0 a,b,c take a,b,c", "candidate#1 a,b,c take a,b,c",
		"probe#1 a,b,c take a,b", "probe#2 a,b,c take a,b", "probe#3 a,b,c take a"},
	wantBases: []string{"a pass", "b pass", "c pass"},
	want: map[string]Tally{"a": with(tally("fail", "pass", "pass"), origin("new", "pass", "pass", "pass")),
		"b": with(tally("fail", "pass", "pass"), origin("base", "pass", "fail")), "c": with(tally("fail", "pass", "pass"), origin("unknown"))},
}, {
	name: "18 interrupted after the first attempt: base not_run, no retry", members: []string{"a", "b"}, retryCap: 3, cancelAt: 1,
	script:    []map[string]string{{"a": "fail", "b": "pass"}},
	wantCalls: []string{"candidate#0 a,b take a,b"},
	want:      map[string]Tally{"a": tally("fail", NotRun), "b": tally("pass", NotRun)},
}, {
	name: "20 the grader's edits keep a failed member from retries", members: a, retryCap: 3, noRetry: "a", probeRuns: map[string]int{"a": 2},
	script:    []map[string]string{one("fail", "a"), one("pass", "a")},
	wantCalls: []string{"candidate#0 a take a", "base#0 a take a"}, wantBases: []string{"a pass"},
	want: map[string]Tally{"a": tally("fail", "pass")},
}, {
	name: "21 interrupted under the probes: no origin", members: a, retryCap: 1, probeRuns: map[string]int{"a": 3}, cancelAt: 4,
	script:    []map[string]string{one("fail", "a"), one("pass", "a"), one("pass", "a"), one("pass", "a")},
	wantCalls: []string{"candidate#0 a take a", "base#0 a take a", "candidate#1 a take a", "probe#1 a take a"},
	wantBases: []string{"a pass"},
	want:      map[string]Tally{"a": with(tally("fail", "pass", "pass"), func(t *Tally) { t.Probes = []string{"pass"} })},
}}

// TestDrive runs each row of the attempt sequence's rules (the numbers
// are the rules' rows in the plan).
func TestDrive(t *testing.T) {
	for _, c := range driveCases {
		t.Run(c.name, func(t *testing.T) {
			f, fc, got := drive(t, c, "")
			check(t, c, f, fc, got)
		})
	}
}

// TestDriveAloneIsABatchOfOne (row 19): every row of a triple alone
// gives the same calls and tally when the triple is a member of a
// batch whose other member passes: a member's attempts do not depend on
// the batch it is in.
func TestDriveAloneIsABatchOfOne(t *testing.T) {
	for _, c := range driveCases {
		if len(c.members) != 1 || c.cache != nil {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			var script []map[string]string
			for _, step := range c.script {
				s := map[string]string{"z": "pass"}
				for k, v := range step {
					s[k] = v
				}
				script = append(script, s)
			}
			c.script = script
			f, fc, got := drive(t, c, "z")
			check(t, c, f, fc, got)
		})
	}
}

func TestOrigin(t *testing.T) {
	for _, c := range []struct {
		name        string
		probed      bool
		countReplay bool
		probes      []string
		h           History
		cand        CandidateRuns
		origin, why string
	}{
		{"a probe failure", true, true, []string{"pass", "fail"}, History{Passes: 1, Records: 1}, CandidateRuns{2, 1}, flakegate.FlakeOriginBase,
			"flake on base: this base failed the seed 1 of 4 times (1 in 2 probe runs, 0 in 1 earlier records of this base)"},
		{"an earlier record's failure", false, true, nil, History{Fails: 1, Records: 3}, CandidateRuns{2, 1}, flakegate.FlakeOriginBase,
			"flake on base: this base failed the seed 1 of 2 times (0 in 0 probe runs, 1 in 3 earlier records of this base)"},
		{"new at the confidence", true, true, []string{"pass", "pass", "pass"}, History{}, CandidateRuns{2, 1}, flakegate.FlakeOriginNew,
			"new flake: base passed 4 of 4; a 1-in-2 flake would show in 4 runs with 94% probability; this patch may have introduced it"},
		{"unknown below it", true, true, []string{"pass"}, History{}, CandidateRuns{2, 1}, flakegate.FlakeOriginUnknown,
			"unknown flake origin: base passed 2 of 2; a 1-in-2 flake would show in 2 runs with 75% probability, less than the 90% that would tell a new flake"},
		{"the cached replay is not counted", true, false, []string{"pass", "pass", "pass"}, History{}, CandidateRuns{4, 1}, flakegate.FlakeOriginUnknown,
			"unknown flake origin: base passed 3 of 3; a 1-in-4 flake would show in 3 runs with 58% probability, less than the 90% that would tell a new flake"},
		{"a 1-in-1.5 candidate", true, false, []string{"pass", "pass", "pass"}, History{}, CandidateRuns{3, 2}, flakegate.FlakeOriginNew,
			"new flake: base passed 3 of 3; a 1-in-1.5 flake would show in 3 runs with 96% probability; this patch may have introduced it"},
		{"no probe runs", false, true, nil, History{Passes: 30}, CandidateRuns{2, 1}, flakegate.FlakeOriginUnknown,
			"unknown flake origin: flake_probe_runs is 0, the base seed was not probed; base passed 31 of 31; a 1-in-2 flake would show in 31 runs with 100% probability"},
	} {
		origin, why, counts := Origin(c.probed, c.countReplay, c.probes, c.h, c.cand)
		if origin != c.origin || why != c.why || !strings.Contains(why, counts) {
			t.Errorf("%s: got %q %q (counts %q), want %q %q", c.name, origin, why, counts, c.origin, c.why)
		}
	}
}

func TestSchedulerLikely(t *testing.T) {
	likely := tally("fail", "pass", "fail", "pass")
	for _, c := range []struct {
		name string
		t    Tally
		want bool
	}{
		{"failed, base passed, a retry passed", likely, true},
		{"the candidate passed", tally("pass", "pass"), false},
		{"base failed", with(likely, func(t *Tally) { t.Base = "fail" }), false},
		{"base not run", with(likely, func(t *Tally) { t.Base = NotRun }), false},
		{"over budget", with(likely, overBudget), false},
		{"transcript incomplete", with(likely, func(t *Tally) { t.Complete = false }), false},
		{"no retry", tally("fail", "pass"), false},
		{"the last retry failed", tally("fail", "pass", "pass", "fail"), false},
		{"the last retry errored", tally("fail", "pass", "error"), false},
	} {
		if got := SchedulerLikely(&c.t); got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}

// errCache fails every lock with the check still live: the store failed,
// or the lock's deadline passed.
type errCache struct{ fakeCache }

var errLock = errors.New("gave up waiting for the replay lock")

func (*errCache) Lock(context.Context, *Member) (func(), error) { return nil, errLock }

// TestDriveLockFailureEndsTheDrive: a lock that fails while the check
// lives is flakegate's own failure (exit 3), never a base not_run.
func TestDriveLockFailureEndsTheDrive(t *testing.T) {
	m := &Member{Key: "k", Tally: &Tally{Complete: true}}
	f := &fakeRunner{t: t, label: map[*Member]string{m: "a"}, script: []map[string]string{one("fail", "a")}}
	d := &Driver{RetryCap: 3, Runner: f, Cache: &errCache{}}
	if err := d.Drive(context.Background(), []*Member{m}); !errors.Is(err, errLock) {
		t.Fatalf("Drive: %v, want the lock's error", err)
	}
	if len(f.calls) != 1 || m.Base != "" {
		t.Errorf("calls %q, base %q: want the first attempt only, no base", f.calls, m.Base)
	}
}
