// Package storetest is the one contract suite every flakegate.Store must
// pass: the embedded file store and PostgreSQL run the same tests.
//
//	func TestContract(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) flakegate.Store { return openEmptyStore(t) })
//	}
package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flakegate/flakegate"
)

// Open returns a new, empty store; it closes the store with t.Cleanup.
type Open func(t *testing.T) flakegate.Store

// Run runs every contract test against stores made by open.
func Run(t *testing.T, open Open) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s flakegate.Store)
	}{
		{"Empty", testEmpty},
		{"GrantGet", testGrantGet},
		{"GrantConflict", testGrantConflict},
		{"GrantInvalid", testGrantInvalid},
		{"ListSorted", testListSorted},
		{"ConsumeToZero", testConsumeToZero},
		{"ConsumeMismatch", testConsumeMismatch},
		{"Remove", testRemove},
		{"RecordsExact", testRecordsExact},
		{"RecordsFirstKept", testRecordsFirstKept},
		{"EachRecord", testEachRecord},
		{"ReplayFirstWins", testReplayFirstWins},
		{"ReplayConcurrent", testReplayConcurrent},
		{"ReplayLock", testReplayLock},
		{"ReplayLockExcludes", testReplayLockExcludes},
		{"AuditReplaysToLedger", testAuditReplays},
		{"ConcurrentConsume", testConcurrentConsume},
		{"ConcurrentGrant", testConcurrentGrant},
		{"NamedTriples", testNamedTriples},
		{"SkipBinding", testSkipBinding},
		{"SeedSecret", testSeedSecret},
		{"SeedSecretConcurrent", testSeedSecretConcurrent},
		{"FailureCorpus", testFailureCorpus},
		{"CorpusKeepsWhatCaught", testCorpusKeepsWhatCaught},
		{"CorpusAge", testCorpusAge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			tc.fn(t, s)
		})
	}
}

// OpenShared makes one new, empty store and returns a function that opens
// another handle on it at each call, as another process would (the
// handles are closed with t.Cleanup).
type OpenShared func(t *testing.T) func() flakegate.Store

// RunShared runs the contract tests that need several handles on one
// store: what one handle stored, another one reads.
func RunShared(t *testing.T, open OpenShared) {
	tests := []struct {
		name string
		fn   func(t *testing.T, open func() flakegate.Store)
	}{
		{"SeedSecretReopen", testSeedSecretReopen},
		{"SeedSecretFirstUseRace", testSeedSecretFirstUseRace},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.fn(t, open(t))
		})
	}
}

var ctx = context.Background()

// grantedAt is a grant time every backend keeps exactly (whole seconds).
var grantedAt = time.Date(2026, 3, 1, 12, 30, 0, 0, time.UTC)

// Sha returns a valid sha256 text made from one repeated hex digit.
func Sha(c byte) string { return strings.Repeat(string(c), 64) }

// Freeze returns a valid freeze for the seed with the given runs.
func Freeze(seed flakegate.Seed, runs int) flakegate.Freeze {
	return flakegate.Freeze{
		Label:            flakegate.Scheduler,
		PropertyPath:     "tests/props/test_retry_budget.py",
		Seed:             seed,
		FixtureSHA256:    Sha('f'),
		ExpiresAfterRuns: runs,
		Owner:            "reviewer-a",
		RecordSHA256:     Sha('a'),
		PropertySHA256:   Sha('b'),
		GrantedAt:        grantedAt,
		GrantedBy:        "grantor",
	}
}

func mustGrant(t *testing.T, s flakegate.Store, f flakegate.Freeze, replace bool) {
	t.Helper()
	if err := s.Grant(ctx, f, replace); err != nil {
		t.Fatalf("Grant(%s): %v", f.Triple(), err)
	}
}

func wantCode(t *testing.T, what string, err error, code string) {
	t.Helper()
	if got := flakegate.ErrorCode(err); got != code {
		t.Fatalf("%s: error %v (code %q), want code %q", what, err, got, code)
	}
}

func list(t *testing.T, s flakegate.Store) []flakegate.Freeze {
	t.Helper()
	fs, err := s.ListFreezes(ctx)
	if err != nil {
		t.Fatalf("ListFreezes: %v", err)
	}
	return fs
}

// events parses the audit log, checking its chain.
func events(t *testing.T, s flakegate.Store) []flakegate.AuditEvent {
	t.Helper()
	lines, err := s.AuditLines(ctx)
	if err != nil {
		t.Fatalf("AuditLines: %v", err)
	}
	if err := flakegate.VerifyAuditChain(lines); err != nil {
		t.Fatalf("audit chain: %v", err)
	}
	out := make([]flakegate.AuditEvent, len(lines))
	for i, l := range lines {
		if out[i], err = flakegate.ParseAuditLine(l); err != nil {
			t.Fatalf("audit line %d: %v", i+1, err)
		}
	}
	return out
}

func actions(es []flakegate.AuditEvent) string {
	var b strings.Builder
	for i, e := range es {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s:%d", e.Action, e.RunsLeft)
	}
	return b.String()
}

func sameFreeze(t *testing.T, what string, got, want flakegate.Freeze) {
	t.Helper()
	if !flakegate.SameFreeze(got, want) {
		t.Fatalf("%s: got %+v, want %+v", what, got, want)
	}
}

// checkReplay asserts that the audit log replays to exactly the ledger.
func checkReplay(t *testing.T, s flakegate.Store) {
	t.Helper()
	lines, err := s.AuditLines(ctx)
	if err != nil {
		t.Fatalf("AuditLines: %v", err)
	}
	if err := flakegate.VerifyAuditChain(lines); err != nil {
		t.Fatalf("audit chain: %v", err)
	}
	m, err := flakegate.ReplayAudit(lines)
	if err != nil {
		t.Fatalf("ReplayAudit: %v", err)
	}
	fs := list(t, s)
	if len(m) != len(fs) {
		t.Fatalf("the audit log replays to %d freezes, the ledger has %d", len(m), len(fs))
	}
	for _, f := range fs {
		sameFreeze(t, "replayed "+f.Triple().String(), m[f.Triple().Key()], f)
	}
}

func testEmpty(t *testing.T, s flakegate.Store) {
	f := Freeze("1402", 3)
	if fs := list(t, s); len(fs) != 0 {
		t.Fatalf("ListFreezes on an empty store: %v", fs)
	}
	_, err := s.GetFreeze(ctx, f.Triple())
	wantCode(t, "GetFreeze", err, flakegate.ENOTFOUND)
	_, err = s.Consume(ctx, f.Triple(), f.RecordSHA256, "ci")
	wantCode(t, "Consume", err, flakegate.ENOTFOUND)
	err = s.Remove(ctx, f.Triple(), flakegate.ActionRevoke, "someone", "why")
	wantCode(t, "Remove", err, flakegate.ENOTFOUND)
	_, err = s.GetRecord(ctx, Sha('a'))
	wantCode(t, "GetRecord", err, flakegate.ENOTFOUND)
	if _, ok, err := s.GetReplay(ctx, "k"); err != nil || ok {
		t.Fatalf("GetReplay on an empty store: ok=%v err=%v", ok, err)
	}
	if es := events(t, s); len(es) != 0 {
		t.Fatalf("audit log of an empty store: %s", actions(es))
	}
}

func testGrantGet(t *testing.T, s flakegate.Store) {
	f := Freeze("1402", 20)
	mustGrant(t, s, f, false)
	got, err := s.GetFreeze(ctx, f.Triple())
	if err != nil {
		t.Fatalf("GetFreeze: %v", err)
	}
	sameFreeze(t, "GetFreeze", got, f)
	fs := list(t, s)
	if len(fs) != 1 {
		t.Fatalf("ListFreezes: %d freezes, want 1", len(fs))
	}
	sameFreeze(t, "ListFreezes", fs[0], f)
	es := events(t, s)
	if actions(es) != "grant:20" {
		t.Fatalf("audit log: %s, want grant:20", actions(es))
	}
	if es[0].Freeze == nil || es[0].By != f.GrantedBy || es[0].Triple != f.Triple() || es[0].At.IsZero() {
		t.Fatalf("grant event: %+v", es[0])
	}
	sameFreeze(t, "grant event's freeze", *es[0].Freeze, f)
	// The other seed of the same property is another triple.
	_, err = s.GetFreeze(ctx, Freeze("1403", 1).Triple())
	wantCode(t, "GetFreeze of another seed", err, flakegate.ENOTFOUND)
}

func testGrantConflict(t *testing.T, s flakegate.Store) {
	f := Freeze("1402", 20)
	mustGrant(t, s, f, false)
	g := f
	g.Owner, g.ExpiresAfterRuns, g.RecordSHA256 = "reviewer-b", 5, Sha('c')
	wantCode(t, "a second Grant", s.Grant(ctx, g, false), flakegate.ECONFLICT)
	got, err := s.GetFreeze(ctx, f.Triple())
	if err != nil {
		t.Fatalf("GetFreeze: %v", err)
	}
	sameFreeze(t, "after the refused grant", got, f)
	if a := actions(events(t, s)); a != "grant:20" {
		t.Fatalf("audit log after a refused grant: %s", a)
	}
	mustGrant(t, s, g, true)
	got, err = s.GetFreeze(ctx, f.Triple())
	if err != nil {
		t.Fatalf("GetFreeze: %v", err)
	}
	sameFreeze(t, "after replace", got, g)
	es := events(t, s)
	if actions(es) != "grant:20 grant:5" || es[1].Reason == "" {
		t.Fatalf("audit log after replace: %s (reason %q), want grant:20 grant:5 with a reason", actions(es), es[1].Reason)
	}
	checkReplay(t, s)
}

func testGrantInvalid(t *testing.T, s flakegate.Store) {
	type testCase struct {
		name   string
		change func(f *flakegate.Freeze)
	}
	run := func(t *testing.T, tc testCase) {
		f := Freeze("1402", 3)
		tc.change(&f)
		wantCode(t, "Grant", s.Grant(ctx, f, true), flakegate.EINVALID)
		if fs := list(t, s); len(fs) != 0 {
			t.Fatalf("an invalid grant was written: %+v", fs)
		}
		if es := events(t, s); len(es) != 0 {
			t.Fatalf("an invalid grant was logged: %s", actions(es))
		}
	}
	for _, tc := range []testCase{
		{"label PROPERTY", func(f *flakegate.Freeze) { f.Label = flakegate.Property }},
		{"zero runs", func(f *flakegate.Freeze) { f.ExpiresAfterRuns = 0 }},
		{"negative runs", func(f *flakegate.Freeze) { f.ExpiresAfterRuns = -1 }},
		{"empty owner", func(f *flakegate.Freeze) { f.Owner = " " }},
		{"bad record sha", func(f *flakegate.Freeze) { f.RecordSHA256 = "../../etc/passwd" }},
		{"empty property digest", func(f *flakegate.Freeze) { f.PropertySHA256 = "" }},
		{"empty path", func(f *flakegate.Freeze) { f.PropertyPath = "" }},
		{"bad seed", func(f *flakegate.Freeze) { f.Seed = "1 2" }},
		{"empty fixture", func(f *flakegate.Freeze) { f.FixtureSHA256 = "" }},
		{"no grant time", func(f *flakegate.Freeze) { f.GrantedAt = time.Time{} }},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func testListSorted(t *testing.T, s flakegate.Store) {
	a := Freeze("1402", 1)
	b := Freeze(`"1402"`, 2) // the string seed "1402" is another triple
	c := Freeze("1402", 3)
	c.FixtureSHA256 = Sha('0')
	d := Freeze("1403", 4)
	d.PropertyPath = "tests/props/a.py"
	e := Freeze(`"nightly-3"`, 5)
	all := []flakegate.Freeze{e, b, d, a, c}
	for _, f := range all {
		mustGrant(t, s, f, false)
	}
	want := slices.Clone(all)
	flakegate.SortFreezes(want)
	got := list(t, s)
	if len(got) != len(want) {
		t.Fatalf("ListFreezes: %d freezes, want %d", len(got), len(want))
	}
	for i := range want {
		sameFreeze(t, fmt.Sprintf("ListFreezes[%d]", i), got[i], want[i])
	}
	for _, f := range all {
		g, err := s.GetFreeze(ctx, f.Triple())
		if err != nil {
			t.Fatalf("GetFreeze(%s): %v", f.Triple(), err)
		}
		sameFreeze(t, "GetFreeze", g, f)
	}
	checkReplay(t, s)
}

func testConsumeToZero(t *testing.T, s flakegate.Store) {
	f := Freeze("1402", 3)
	other := Freeze("1403", 2)
	mustGrant(t, s, f, false)
	mustGrant(t, s, other, false)
	for want := 2; want >= 0; want-- {
		n, err := s.Consume(ctx, f.Triple(), f.RecordSHA256, "ci-run")
		if err != nil || n != want {
			t.Fatalf("Consume: %d, %v; want %d runs left", n, err, want)
		}
		if want > 0 {
			g, err := s.GetFreeze(ctx, f.Triple())
			if err != nil || g.ExpiresAfterRuns != want {
				t.Fatalf("GetFreeze after a skip: %+v, %v; want %d runs left", g, err, want)
			}
		}
	}
	_, err := s.GetFreeze(ctx, f.Triple())
	wantCode(t, "GetFreeze at zero", err, flakegate.ENOTFOUND)
	_, err = s.Consume(ctx, f.Triple(), f.RecordSHA256, "ci-run")
	wantCode(t, "Consume at zero", err, flakegate.ENOTFOUND)
	if g, err := s.GetFreeze(ctx, other.Triple()); err != nil || g.ExpiresAfterRuns != 2 {
		t.Fatalf("the other seed's freeze changed: %+v, %v", g, err)
	}
	es := events(t, s)
	if got, want := actions(es), "grant:3 grant:2 skip:2 skip:1 skip:0 expire:0"; got != want {
		t.Fatalf("audit log: %s, want %s", got, want)
	}
	for _, e := range es[2:] {
		if e.By != "ci-run" || e.Triple != f.Triple() {
			t.Fatalf("skip event: %+v", e)
		}
	}
	checkReplay(t, s)
}

func testConsumeMismatch(t *testing.T, s flakegate.Store) {
	f := Freeze("1402", 3)
	mustGrant(t, s, f, false)
	_, err := s.Consume(ctx, f.Triple(), Sha('c'), "ci")
	wantCode(t, "Consume naming another record", err, flakegate.ENOTFOUND)
	other := f.Triple()
	other.FixtureSHA256 = Sha('e')
	_, err = s.Consume(ctx, other, f.RecordSHA256, "ci")
	wantCode(t, "Consume of a changed fixture", err, flakegate.ENOTFOUND)
	g, err := s.GetFreeze(ctx, f.Triple())
	if err != nil || g.ExpiresAfterRuns != 3 {
		t.Fatalf("freeze after refused consumes: %+v, %v; want 3 runs left", g, err)
	}
	if a := actions(events(t, s)); a != "grant:3" {
		t.Fatalf("refused consumes were logged: %s", a)
	}
}

func testRemove(t *testing.T, s flakegate.Store) {
	type testCase struct {
		action flakegate.AuditAction
		code   string
	}
	run := func(t *testing.T, tc testCase) {
		f := Freeze("1402", 4)
		mustGrant(t, s, f, true)
		err := s.Remove(ctx, f.Triple(), tc.action, "remover", "because")
		wantCode(t, "Remove", err, tc.code)
		_, gerr := s.GetFreeze(ctx, f.Triple())
		if tc.code != "" {
			if gerr != nil {
				t.Fatalf("a refused Remove deleted the freeze: %v", gerr)
			}
			return
		}
		wantCode(t, "GetFreeze after Remove", gerr, flakegate.ENOTFOUND)
		es := events(t, s)
		last := es[len(es)-1]
		if last.Action != tc.action || last.By != "remover" || last.Reason != "because" || last.RunsLeft != 4 || last.Triple != f.Triple() {
			t.Fatalf("remove event: %+v", last)
		}
		wantCode(t, "Remove again", s.Remove(ctx, f.Triple(), tc.action, "remover", "again"), flakegate.ENOTFOUND)
		checkReplay(t, s)
	}
	for _, tc := range []testCase{
		{flakegate.ActionVoid, ""},
		{flakegate.ActionRevoke, ""},
		{flakegate.ActionSkip, flakegate.EINVALID},
		{flakegate.ActionGrant, flakegate.EINVALID},
		{"delete", flakegate.EINVALID},
	} {
		t.Run(string(tc.action), func(t *testing.T) { run(t, tc) })
	}
}

func testRecordsExact(t *testing.T, s flakegate.Store) {
	type testCase struct {
		name string
		raw  []byte
	}
	run := func(t *testing.T, tc testCase) {
		sha := flakegate.AuditLineSHA256(tc.raw) // any valid sha names it
		if err := s.PutRecord(ctx, sha, tc.raw); err != nil {
			t.Fatalf("PutRecord: %v", err)
		}
		got, err := s.GetRecord(ctx, sha)
		if err != nil {
			t.Fatalf("GetRecord: %v", err)
		}
		if !bytes.Equal(got, tc.raw) {
			t.Fatalf("GetRecord: %q, want %q", got, tc.raw)
		}
	}
	for _, tc := range []testCase{
		{"compact", []byte(`{"seed":1402,"a":[1,2]}`)},
		{"indented with newline", []byte("{\n  \"seed\": 1402\n}\n")},
		{"crlf and tabs", []byte("{\r\n\t\"seed\":\t1402\r\n}\r\n")},
		{"non-ascii", []byte(`{"owner":"Zoë","emoji":"🦀","esc":"\u00e9"}`)},
		{"big integer", []byte(`{"seed":123456789012345678901234567890}`)},
		{"not json at all", []byte("\x00\xff not json")},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
	wantCode(t, "PutRecord with a bad sha", s.PutRecord(ctx, "../x", []byte("{}")), flakegate.EINVALID)
	_, err := s.GetRecord(ctx, "ABC")
	wantCode(t, "GetRecord with a bad sha", err, flakegate.EINVALID)
}

func testRecordsFirstKept(t *testing.T, s flakegate.Store) {
	first, second := []byte(`{"v":1}`), []byte(`{"v":2}`)
	if err := s.PutRecord(ctx, Sha('1'), first); err != nil {
		t.Fatalf("PutRecord: %v", err)
	}
	if err := s.PutRecord(ctx, Sha('1'), second); err != nil {
		t.Fatalf("PutRecord of the same sha again: %v", err)
	}
	got, err := s.GetRecord(ctx, Sha('1'))
	if err != nil || !bytes.Equal(got, first) {
		t.Fatalf("GetRecord: %q, %v; want the first bytes %q", got, err, first)
	}
}

func testEachRecord(t *testing.T, s flakegate.Store) {
	want := map[string][]byte{Sha('1'): []byte(`{"n":1}`), Sha('2'): []byte(`{"n":2}`), Sha('3'): []byte("{\"n\":3}\n")}
	for sha, raw := range want {
		if err := s.PutRecord(ctx, sha, raw); err != nil {
			t.Fatalf("PutRecord: %v", err)
		}
	}
	got := map[string][]byte{}
	err := s.EachRecord(ctx, func(sha string, raw []byte) error {
		got[sha] = bytes.Clone(raw)
		return nil
	})
	if err != nil {
		t.Fatalf("EachRecord: %v", err)
	}
	if len(got) != len(want) {
		t.Fatalf("EachRecord saw %d records, want %d", len(got), len(want))
	}
	for sha, raw := range want {
		if !bytes.Equal(got[sha], raw) {
			t.Fatalf("EachRecord %s: %q, want %q", sha[:4], got[sha], raw)
		}
	}
	stop := errors.New("stop")
	calls := 0
	err = s.EachRecord(ctx, func(string, []byte) error { calls++; return stop })
	if !errors.Is(err, stop) || calls != 1 {
		t.Fatalf("EachRecord after fn failed: %v after %d calls, want the fn's error after 1", err, calls)
	}
}

func replay(result string, wall float64) flakegate.BaseReplay {
	return flakegate.BaseReplay{Result: result, WallSeconds: wall, RunID: "run-" + result, At: grantedAt}
}

func sameReplay(t *testing.T, what string, got, want flakegate.BaseReplay) {
	t.Helper()
	if got.Result != want.Result || got.WallSeconds != want.WallSeconds || got.RunID != want.RunID || !got.At.Equal(want.At) {
		t.Fatalf("%s: %+v, want %+v", what, got, want)
	}
}

func testReplayFirstWins(t *testing.T, s flakegate.Store) {
	key := strings.Repeat("9", 64)
	failed, passed := replay("fail", 1.5), replay("pass", 0.25)
	got, err := s.PutReplay(ctx, key, failed)
	if err != nil {
		t.Fatalf("PutReplay: %v", err)
	}
	sameReplay(t, "first PutReplay", got, failed)
	got, err = s.PutReplay(ctx, key, passed)
	if err != nil {
		t.Fatalf("second PutReplay: %v", err)
	}
	sameReplay(t, "second PutReplay returns the first result", got, failed)
	got, ok, err := s.GetReplay(ctx, key)
	if err != nil || !ok {
		t.Fatalf("GetReplay: ok=%v err=%v", ok, err)
	}
	sameReplay(t, "GetReplay", got, failed)
	if _, ok, err := s.GetReplay(ctx, strings.Repeat("8", 64)); ok || err != nil {
		t.Fatalf("GetReplay of another key: ok=%v err=%v", ok, err)
	}
}

func testReplayConcurrent(t *testing.T, s flakegate.Store) {
	const n = 8
	key := "concurrent-key"
	results := make([]flakegate.BaseReplay, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			results[i], errs[i] = s.PutReplay(ctx, key, replay(fmt.Sprintf("r%d", i), float64(i)))
		})
	}
	wg.Wait()
	stored, ok, err := s.GetReplay(ctx, key)
	if err != nil || !ok {
		t.Fatalf("GetReplay: ok=%v err=%v", ok, err)
	}
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("PutReplay %d: %v", i, errs[i])
		}
		sameReplay(t, fmt.Sprintf("PutReplay %d", i), results[i], stored)
	}
}

// testReplayLock: while one holder has key A, a second LockReplay(A)
// waits until the release, a waiter whose context ends gets an error and
// holds nothing, and LockReplay(B) does not wait at all.
func testReplayLock(t *testing.T, s flakegate.Store) {
	// A broken lock hangs rather than fails: bound the test.
	tctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	const keyA, keyB = "replay-key-a", "replay-key-b"
	releaseA, err := s.LockReplay(tctx, keyA)
	if err != nil {
		t.Fatalf("LockReplay(A): %v", err)
	}
	type lockResult struct {
		release func()
		err     error
	}
	second := make(chan lockResult, 1)
	go func() {
		release, err := s.LockReplay(tctx, keyA)
		second <- lockResult{release, err}
	}()

	releaseB, err := s.LockReplay(tctx, keyB)
	if err != nil {
		t.Fatalf("LockReplay(B) while A is held: %v", err)
	}
	releaseB()

	// A waiter that gives up holds nothing.
	giveUp, stop := context.WithCancel(tctx)
	third := make(chan lockResult, 1)
	go func() {
		release, err := s.LockReplay(giveUp, keyA)
		third <- lockResult{release, err}
	}()
	stop()
	if r := <-third; r.err == nil {
		r.release()
		t.Fatal("LockReplay(A) returned a lock while A was held; want an error once its context ended")
	}

	select {
	case r := <-second:
		if r.err == nil {
			r.release()
		}
		t.Fatalf("a second LockReplay(A) returned while A was held (err %v)", r.err)
	default:
	}
	releaseA()
	r := <-second
	if r.err != nil {
		t.Fatalf("the waiting LockReplay(A) after the release: %v", r.err)
	}
	r.release()
	// Released by every holder and waiter: A is free again.
	again, err := s.LockReplay(tctx, keyA)
	if err != nil {
		t.Fatalf("LockReplay(A) after every release: %v", err)
	}
	again()
}

// testReplayLockExcludes: holders of one key never overlap, and a check
// holding the lock around GetReplay and PutReplay replays the base once.
func testReplayLockExcludes(t *testing.T, s flakegate.Store) {
	tctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	const n, rounds = 6, 4
	key := "replay-key-excludes"
	var (
		mu      sync.Mutex
		inside  int
		overlap bool
		ran     int
	)
	errs := make(chan error, n*rounds)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			for j := range rounds {
				release, err := s.LockReplay(tctx, key)
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				inside++
				overlap = overlap || inside > 1
				mu.Unlock()
				_, ok, err := s.GetReplay(tctx, key)
				if err == nil && !ok {
					mu.Lock()
					ran++
					mu.Unlock()
					_, err = s.PutReplay(tctx, key, replay(fmt.Sprintf("r%d-%d", i, j), 1))
				}
				mu.Lock()
				inside--
				mu.Unlock()
				release()
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("lock, get or put: %v", err)
	}
	if overlap {
		t.Error("two holders of one replay lock overlapped")
	}
	if ran != 1 {
		t.Errorf("the base ran %d times under the lock, want 1", ran)
	}
}

func testAuditReplays(t *testing.T, s flakegate.Store) {
	a, b, c := Freeze("1", 3), Freeze("2", 2), Freeze(`"nightly"`, 5)
	mustGrant(t, s, a, false)
	mustGrant(t, s, b, false)
	mustGrant(t, s, c, false)
	steps := []func() error{
		func() error { _, err := s.Consume(ctx, a.Triple(), a.RecordSHA256, "r1"); return err },
		func() error { _, err := s.Consume(ctx, b.Triple(), b.RecordSHA256, "r1"); return err },
		func() error { _, err := s.Consume(ctx, b.Triple(), b.RecordSHA256, "r2"); return err },
		func() error { return s.Remove(ctx, c.Triple(), flakegate.ActionRevoke, "lead", "fixed upstream") },
		func() error {
			g := a
			g.Owner, g.ExpiresAfterRuns = "reviewer-b", 7
			return s.Grant(ctx, g, true)
		},
		func() error { _, err := s.Consume(ctx, a.Triple(), a.RecordSHA256, "r3"); return err },
		func() error { return s.Grant(ctx, c, false) },
		func() error { return s.Remove(ctx, c.Triple(), flakegate.ActionVoid, "verify", "record changed") },
	}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("step %d: %v", i+1, err)
		}
		checkReplay(t, s)
	}
	fs := list(t, s)
	if len(fs) != 1 || fs[0].Owner != "reviewer-b" || fs[0].ExpiresAfterRuns != 6 {
		t.Fatalf("ledger at the end: %+v, want only seed 1 with owner reviewer-b and 6 runs", fs)
	}
}

func testConcurrentConsume(t *testing.T, s flakegate.Store) {
	const workers, tries, runs = 8, 10, 50
	f := Freeze("1402", runs)
	mustGrant(t, s, f, false)
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok, seen := 0, map[int]bool{}
	errs := make(chan error, workers*tries)
	for w := range workers {
		wg.Go(func() {
			for range tries {
				n, err := s.Consume(ctx, f.Triple(), f.RecordSHA256, fmt.Sprintf("worker-%d", w))
				if flakegate.ErrorCode(err) == flakegate.ENOTFOUND {
					continue
				} else if err != nil {
					errs <- err
					continue
				}
				mu.Lock()
				ok++
				if seen[n] {
					errs <- fmt.Errorf("two consumers were told %d runs left", n)
				}
				seen[n] = true
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("Consume: %v", err)
	}
	if ok != runs {
		t.Fatalf("%d consumes succeeded, want exactly %d", ok, runs)
	}
	_, err := s.GetFreeze(ctx, f.Triple())
	wantCode(t, "GetFreeze after the last skip", err, flakegate.ENOTFOUND)
	es := events(t, s)
	skips := 0
	for _, e := range es {
		if e.Action == flakegate.ActionSkip {
			skips++
		}
	}
	if skips != runs || es[len(es)-1].Action != flakegate.ActionExpire {
		t.Fatalf("audit log: %d skips, last %s; want %d skips then expire", skips, es[len(es)-1].Action, runs)
	}
	checkReplay(t, s)
}

func testConcurrentGrant(t *testing.T, s flakegate.Store) {
	const workers = 8
	codes := make([]string, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			f := Freeze("1402", w+1)
			codes[w] = flakegate.ErrorCode(s.Grant(ctx, f, false))
		})
	}
	wg.Wait()
	granted := 0
	for w, code := range codes {
		switch code {
		case "":
			granted++
		case flakegate.ECONFLICT:
		default:
			t.Fatalf("Grant %d: code %q", w, code)
		}
	}
	if granted != 1 {
		t.Fatalf("%d concurrent grants of one triple succeeded, want 1", granted)
	}
	if a := actions(events(t, s)); strings.Count(a, "grant") != 1 {
		t.Fatalf("audit log: %s, want one grant", a)
	}
	checkReplay(t, s)
}

// testNamedTriples: tests of one file (same path, seed and fixture) are
// different triples by name; the binding digests are kept as written.
func testNamedTriples(t *testing.T, s flakegate.Store) {
	plain := Freeze("1402", 3)
	a := Freeze("1402", 3)
	a.Name, a.RecordSHA256, a.RunSHA256, a.PropertyEntrySHA256 = "TestA", Sha('c'), Sha('d'), Sha('e')
	a.CandidateSHA = strings.Repeat("c", 40)
	b := Freeze("1402", 3)
	b.Name, b.RecordSHA256 = "tests/x.py::test_b", Sha('1')
	for _, f := range []flakegate.Freeze{plain, a, b} {
		mustGrant(t, s, f, false)
	}
	wantCode(t, "a second grant of TestA", s.Grant(ctx, a, false), flakegate.ECONFLICT)
	for _, f := range []flakegate.Freeze{plain, a, b} {
		got, err := s.GetFreeze(ctx, f.Triple())
		if err != nil {
			t.Fatalf("GetFreeze(%s): %v", f.Triple(), err)
		}
		sameFreeze(t, "GetFreeze "+f.Name, got, f)
	}
	other := a.Triple()
	other.Name = "TestC"
	_, err := s.GetFreeze(ctx, other)
	wantCode(t, "GetFreeze of an unfrozen name", err, flakegate.ENOTFOUND)
	if n, err := s.Consume(ctx, a.Triple(), a.RecordSHA256, "run"); err != nil || n != 2 {
		t.Fatalf("Consume(TestA) = %d, %v; want 2", n, err)
	}
	_, err = s.Consume(ctx, a.Triple(), plain.RecordSHA256, "run")
	wantCode(t, "Consume(TestA) with the unnamed freeze's record", err, flakegate.ENOTFOUND)
	if err := s.Remove(ctx, b.Triple(), flakegate.ActionRevoke, "rev", "done"); err != nil {
		t.Fatal(err)
	}
	fs := list(t, s)
	if len(fs) != 2 || fs[0].Name != "" || fs[1].Name != "TestA" || fs[1].ExpiresAfterRuns != 2 || fs[0].ExpiresAfterRuns != 3 {
		t.Fatalf("ListFreezes: %+v", fs)
	}
	if fs[1].RunSHA256 != Sha('d') || fs[1].PropertyEntrySHA256 != Sha('e') || fs[1].CandidateSHA != strings.Repeat("c", 40) || fs[0].CandidateSHA != "" {
		t.Fatalf("binding digests not kept: %+v", fs[1])
	}
	es := events(t, s)
	if es[3].Triple.Name != "TestA" || es[4].Triple.Name != "tests/x.py::test_b" {
		t.Fatalf("events name the wrong tests: %+v %+v", es[3].Triple, es[4].Triple)
	}
	checkReplay(t, s)
}

// schedulerRecord is a record that classifies SCHEDULER, with extra keys.
func schedulerRecord(seed string, extra map[string]string) []byte {
	var b strings.Builder
	b.WriteString(`{"run_id":"r1","seed":` + seed + `,"property_path":"props/p.sh","property_sha256":"` + Sha('b') +
		`","fixture_sha256":"` + Sha('f') + `","base_fixture_sha256":"` + Sha('f') +
		`","diff_paths":["src/lib.sh"],"candidate_result":"fail","base_seed_result":"pass",` +
		`"retry_results":["pass"],"retry_cap":2,"budget_ok":true,"transcript_complete":true`)
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		b.WriteString(`,"` + k + `":"` + extra[k] + `"`)
	}
	b.WriteString("}\n")
	return []byte(b.String())
}

// testSkipBinding: a freeze granted from a record binds the record's name,
// argv template digest and config entry digest; a check whose command or
// entry changed, or whose seed was drawn when the freeze's was not, voids
// it with an audit event and runs the triple.
func testSkipBinding(t *testing.T, s flakegate.Store) {
	bind := flakegate.Binding{PropertySHA256: Sha('b'), RunSHA256: Sha('1'), PropertyEntrySHA256: Sha('2')}
	raw := schedulerRecord("7", map[string]string{"name": "TestA", "run_sha256": Sha('1'), "property_entry_sha256": Sha('2'), "candidate_sha": strings.Repeat("a", 40)})
	grant := func() flakegate.Freeze {
		t.Helper()
		f, err := flakegate.GrantRecord(ctx, s, raw, "owner", 5, false, "", grantedAt)
		if err != nil {
			t.Fatalf("GrantRecord: %v", err)
		}
		return f
	}
	f := grant()
	if f.Name != "TestA" || f.RunSHA256 != Sha('1') || f.PropertyEntrySHA256 != Sha('2') || f.CandidateSHA != strings.Repeat("a", 40) {
		t.Fatalf("granted %+v", f)
	}
	unnamed := f.Triple()
	unnamed.Name = ""
	if d, err := flakegate.SkipBound(ctx, s, unnamed, bind, "run"); err != nil || d.Skipped || d.Voided {
		t.Fatalf("the unnamed triple used TestA's freeze: %+v %v", d, err)
	}
	if d, err := flakegate.SkipBound(ctx, s, f.Triple(), bind, "run"); err != nil || !d.Skipped || d.RunsLeft != 4 {
		t.Fatalf("same binding: %+v %v", d, err)
	}
	for _, c := range []struct {
		what   string
		change func(b *flakegate.Binding)
		reason string
	}{
		{"command", func(b *flakegate.Binding) { b.RunSHA256 = Sha('3') }, "the run command changed"},
		{"entry", func(b *flakegate.Binding) { b.PropertyEntrySHA256 = Sha('3') }, "the config entry changed"},
		{"drawn seed", func(b *flakegate.Binding) { b.SeedOrigin = "drawn" }, "granted for a config seed"},
	} {
		if _, err := s.GetFreeze(ctx, f.Triple()); err != nil {
			grant()
		}
		b := bind
		c.change(&b)
		d, err := flakegate.SkipBound(ctx, s, f.Triple(), b, "run")
		if err != nil || d.Skipped || !d.Voided || !strings.Contains(d.Reason, c.reason) {
			t.Fatalf("%s changed: %+v %v", c.what, d, err)
		}
		es := events(t, s)
		last := es[len(es)-1]
		if last.Action != flakegate.ActionVoid || last.Triple != f.Triple() || !strings.Contains(last.Reason, c.reason) {
			t.Fatalf("%s changed: last event %+v", c.what, last)
		}
	}
	checkReplay(t, s)
}

func seedSecret(t *testing.T, s flakegate.Store) []byte {
	t.Helper()
	secret, err := s.SeedSecret(ctx)
	if err != nil {
		t.Fatalf("SeedSecret: %v", err)
	}
	if len(secret) != flakegate.SeedSecretSize {
		t.Fatalf("SeedSecret: %d bytes, want %d", len(secret), flakegate.SeedSecretSize)
	}
	return secret
}

// testSeedSecret: the first call makes a 32-byte secret, the next ones
// return it unchanged; it is not a constant (two stores differ: see
// testSeedSecretReopen) nor all zero bytes.
func testSeedSecret(t *testing.T, s flakegate.Store) {
	first := seedSecret(t, s)
	if bytes.Equal(first, make([]byte, flakegate.SeedSecretSize)) {
		t.Fatal("SeedSecret is all zero bytes")
	}
	for i := range 3 {
		if again := seedSecret(t, s); !bytes.Equal(again, first) {
			t.Fatalf("SeedSecret call %d returned another secret", i+2)
		}
	}
	// Nothing else of the store changed: no freeze, no audit line.
	if fs := list(t, s); len(fs) != 0 {
		t.Fatalf("SeedSecret left freezes: %v", fs)
	}
	if es := events(t, s); len(es) != 0 {
		t.Fatalf("SeedSecret wrote audit lines: %s", actions(es))
	}
}

// testSeedSecretConcurrent: callers that race on a new store all get the
// one secret.
func testSeedSecretConcurrent(t *testing.T, s flakegate.Store) {
	const n = 8
	secrets := make([][]byte, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { secrets[i], errs[i] = s.SeedSecret(ctx) })
	}
	wg.Wait()
	want := seedSecret(t, s)
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("SeedSecret %d: %v", i, errs[i])
		}
		if !bytes.Equal(secrets[i], want) {
			t.Fatalf("concurrent SeedSecret %d returned another secret than the stored one", i)
		}
	}
}

// testSeedSecretReopen: a secret outlives its handle (a handle opened
// later reads it), and another store has another secret.
func testSeedSecretReopen(t *testing.T, open func() flakegate.Store) {
	a := open()
	first := seedSecret(t, a)
	a.Close()
	for i := range 2 {
		if again := seedSecret(t, open()); !bytes.Equal(again, first) {
			t.Fatalf("reopen %d: SeedSecret returned another secret", i+1)
		}
	}
}

// testSeedSecretFirstUseRace: handles opened at once on a new store (as
// checks starting together on different processes) that all ask for the
// secret at once end with one stored secret, which each of them got.
func testSeedSecretFirstUseRace(t *testing.T, open func() flakegate.Store) {
	const n = 8
	handles := make([]flakegate.Store, n)
	for i := range handles {
		handles[i] = open()
	}
	secrets := make([][]byte, n)
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			secrets[i], errs[i] = handles[i].SeedSecret(ctx)
		})
	}
	close(start)
	wg.Wait()
	want := seedSecret(t, open())
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("SeedSecret on handle %d: %v", i, errs[i])
		}
		if !bytes.Equal(secrets[i], want) {
			t.Fatalf("handle %d got another secret than the one stored", i)
		}
	}
}

// testFailureCorpus: failures come back the most recently failed first; a
// seed failing again moves to the front, keeps its first base and its
// adder, and says it was renewed (an older failure changes nothing);
// keys are apart; bad input is EINVALID.
func testFailureCorpus(t *testing.T, s flakegate.Store) {
	c := corpusT{t: t, s: s, at: time.Date(2026, 1, 2, 3, 4, 5, 600, time.UTC)}
	if got := c.seeds("p"); got != "" {
		t.Fatalf("a new store's corpus: %s", got)
	}
	c.add("p", "7", "b1", "c1", 0, flakegate.CorpusAdded)
	c.add("p", "9", "b1", "c2", time.Second, flakegate.CorpusAdded)
	c.add("p", "8", "b2", "c3", time.Second, flakegate.CorpusAdded) // a tie: by seed text
	c.add("q", "7", "b9", "c9", 0, flakegate.CorpusAdded)
	if got, want := c.seeds("p"), "8@b2/c3,9@b1/c2,7@b1/c1"; got != want {
		t.Fatalf("Failures = %s, want %s", got, want)
	}
	c.add("p", "7", "b3", "c4", 2*time.Second, flakegate.CorpusRenewed) // again, later, on another base
	c.add("p", "9", "b3", "c0", -time.Hour, flakegate.CorpusUnchanged)  // an older failure changes nothing
	if got, want := c.seeds("p"), "7@b1/c4,8@b2/c3,9@b1/c2"; got != want {
		t.Fatalf("after a repeat: Failures = %s, want %s", got, want)
	}
	if got := c.seeds("q"); got != "7@b9/c9" {
		t.Fatalf("another key: %s", got)
	}
	es, err := s.Failures(ctx, "p")
	if err != nil || !es[0].FailedAt.Equal(c.at.Add(2*time.Second)) || es[0].AddedBy != "c1" || es[0].CandidateSHA != "c4" {
		t.Fatalf("the renewed seed: %+v %v", es, err)
	}
	for _, bad := range []struct {
		key string
		e   flakegate.CorpusEntry
	}{
		{"", flakegate.CorpusEntry{Seed: "1", CandidateSHA: "c", FailedAt: c.at}},
		{"p", flakegate.CorpusEntry{Seed: "-x", CandidateSHA: "c", FailedAt: c.at}},
		{"p", flakegate.CorpusEntry{Seed: "1", CandidateSHA: "c"}},
		{"p", flakegate.CorpusEntry{Seed: "1", FailedAt: c.at}},
	} {
		if _, err := s.AddFailure(ctx, bad.key, bad.e); flakegate.ErrorCode(err) != flakegate.EINVALID {
			t.Errorf("AddFailure(%q, %+v) = %v, want EINVALID", bad.key, bad.e, err)
		}
	}
	if _, err := s.CorpusBase(ctx, ""); flakegate.ErrorCode(err) != flakegate.EINVALID {
		t.Errorf("CorpusBase(\"\") = %v, want EINVALID", err)
	}
}

// testCorpusKeepsWhatCaught: a patch that fails on purpose cannot push
// out the seed that caught a regression. One candidate adds one seed per
// key, however many it fails; a key full of seeds refuses a new one
// (and so does the corpus at MaxCorpusTotal, filestore's and postgres's
// own tests) rather than drop an older one, while a seed it holds is
// still renewed; another key's seeds are never touched.
func testCorpusKeepsWhatCaught(t *testing.T, s flakegate.Store) {
	c := corpusT{t: t, s: s, at: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	c.add("p", "1402", "b1", "regression", 0, flakegate.CorpusAdded)
	c.add("other", "5", "b1", "regression", 0, flakegate.CorpusAdded) // one per key: another key is apart
	c.add("p", "1403", "b1", "regression", time.Second, flakegate.CorpusOnePerCandidate)
	for i := range 3 * flakegate.MaxCorpusSeeds {
		// The throwaway patch fails many seeds, each of its commits
		// later than the regression's failure.
		cand := "throwaway-" + strconv.Itoa(i)
		want := flakegate.CorpusAdded
		if i >= flakegate.MaxCorpusSeeds-1 {
			want = flakegate.CorpusKeyFull
		}
		c.add("p", flakegate.Seed(strconv.Itoa(2000+i)), "b1", cand, time.Minute+time.Duration(i)*time.Second, want)
		c.add("p", flakegate.Seed(strconv.Itoa(5000+i)), "b1", cand, time.Minute+time.Duration(i)*time.Second, refusedAfter(want))
		c.add("other", flakegate.Seed(strconv.Itoa(7000+i)), "b1", cand, time.Minute, map[bool]flakegate.CorpusAdd{true: flakegate.CorpusAdded, false: flakegate.CorpusKeyFull}[i < flakegate.MaxCorpusSeeds-1])
	}
	es, err := s.Failures(ctx, "p")
	if err != nil || len(es) != flakegate.MaxCorpusSeeds {
		t.Fatalf("a full key: %d entries, %v", len(es), err)
	}
	if !slices.ContainsFunc(es, func(e flakegate.CorpusEntry) bool { return e.Seed == "1402" && e.AddedBy == "regression" }) {
		t.Fatalf("the seed that caught the regression was pushed out: %s", c.seeds("p"))
	}
	if oth, _ := s.Failures(ctx, "other"); len(oth) != flakegate.MaxCorpusSeeds || !slices.ContainsFunc(oth, func(e flakegate.CorpusEntry) bool { return e.Seed == "5" }) {
		t.Fatalf("another key lost its seed: %s", c.seeds("other"))
	}
	// A seed it holds is still renewed in a full key.
	c.add("p", "1402", "b2", "again", time.Hour, flakegate.CorpusRenewed)
	if es, _ := s.Failures(ctx, "p"); es[0].Seed != "1402" || es[0].CandidateSHA != "again" || es[0].AddedBy != "regression" {
		t.Fatalf("the renewed seed in a full key: %+v", es[0])
	}
}

// refusedAfter is what a candidate's second new seed of a key gets: one
// per candidate, unless the key was full for its first already.
func refusedAfter(first flakegate.CorpusAdd) flakegate.CorpusAdd {
	if first == flakegate.CorpusAdded {
		return flakegate.CorpusOnePerCandidate
	}
	return first
}

// testCorpusAge: a seed leaves only by age, counted in the bases the
// store's checks run on since its newest failure: a base seen already
// (every shard and runner of one check, or the same base again) counts
// once; at MaxCorpusAge bases the seed leaves and CorpusBase says how
// many left; a failure on the way starts its age again.
func testCorpusAge(t *testing.T, s flakegate.Store) {
	c := corpusT{t: t, s: s, at: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	base := func(i int) string { return fmt.Sprintf("base-%03d", i) }
	if n, err := s.CorpusBase(ctx, base(0)); err != nil || n != 0 {
		t.Fatalf("CorpusBase of a new store: %d, %v", n, err)
	}
	c.add("p", "1", base(0), "c1", 0, flakegate.CorpusAdded)
	c.add("p", "2", base(0), "c2", 0, flakegate.CorpusAdded)
	for i := 1; i < flakegate.MaxCorpusAge; i++ {
		for range 2 { // a base seen already changes nothing
			if n, err := s.CorpusBase(ctx, base(i)); err != nil || n != 0 {
				t.Fatalf("base %d: %d left, %v", i, n, err)
			}
		}
		if n, err := s.CorpusBase(ctx, base(i-1)); err != nil || n != 0 {
			t.Fatalf("base %d again: %d left, %v", i-1, n, err)
		}
		if i == flakegate.MaxCorpusAge/2 {
			c.add("p", "2", base(i), "c3", time.Hour, flakegate.CorpusRenewed) // seed 2 fails again
		}
	}
	if got := c.seeds("p"); got != "2@"+base(0)+"/c3,1@"+base(0)+"/c1" {
		t.Fatalf("before the last base: %s", got)
	}
	if n, err := s.CorpusBase(ctx, base(flakegate.MaxCorpusAge)); err != nil || n != 1 {
		t.Fatalf("base %d: %d left, %v; want seed 1", flakegate.MaxCorpusAge, n, err)
	}
	if got := c.seeds("p"); got != "2@"+base(0)+"/c3" {
		t.Fatalf("after %d bases: %s", flakegate.MaxCorpusAge, got)
	}
}

// corpusT drives a store's failure corpus in a test.
type corpusT struct {
	t  *testing.T
	s  flakegate.Store
	at time.Time
}

// add adds a failure of seed and checks what the store did.
func (c corpusT) add(key string, seed flakegate.Seed, base, cand string, d time.Duration, want flakegate.CorpusAdd) {
	c.t.Helper()
	did, err := c.s.AddFailure(ctx, key, flakegate.CorpusEntry{Seed: seed, FirstBaseSHA: base, CandidateSHA: cand, FailedAt: c.at.Add(d)})
	if err != nil || did != want {
		c.t.Fatalf("AddFailure %s %s by %s: %q, %v; want %q", key, seed, cand, did, err, want)
	}
}

// seeds lists key's corpus as seed@first-base/candidate, in order.
func (c corpusT) seeds(key string) string {
	c.t.Helper()
	es, err := c.s.Failures(ctx, key)
	if err != nil {
		c.t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, string(e.Seed)+"@"+e.FirstBaseSHA+"/"+e.CandidateSHA)
	}
	return strings.Join(out, ",")
}

// CorpusText lists the corpus of each key as "KEY: SEED@FIRST-BASE/
// CANDIDATE+ADDED-BY/FAILED-AT/EPOCH ...", keys apart by "; ": every
// field a store keeps, for tests of a store's own format and migrations.
func CorpusText(t *testing.T, s flakegate.FailureCorpus, keys ...string) string {
	t.Helper()
	var parts []string
	for _, k := range keys {
		es, err := s.Failures(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		var l []string
		for _, e := range es {
			l = append(l, fmt.Sprintf("%s@%s/%s+%s/%s/%d", e.Seed, e.FirstBaseSHA, e.CandidateSHA, e.AddedBy, e.FailedAt.Format(time.RFC3339), e.FailedEpoch))
		}
		parts = append(parts, k+": "+strings.Join(l, " "))
	}
	return strings.Join(parts, "; ")
}
