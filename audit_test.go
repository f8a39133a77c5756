package flakegate_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/flakegate/flakegate"
)

var eventTime = time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)

func testFreeze(seed string, runs int) flakegate.Freeze {
	return flakegate.Freeze{
		Label: flakegate.Scheduler, PropertyPath: "tests/props/p.py", Seed: flakegate.Seed(seed),
		FixtureSHA256: fixtureSHA, ExpiresAfterRuns: runs, Owner: "reviewer-a",
		RecordSHA256: strings.Repeat("a", 64), PropertySHA256: propSHA, GrantedAt: grantTime, GrantedBy: "grantor",
	}
}

func grantEvent(f flakegate.Freeze) flakegate.AuditEvent {
	return flakegate.AuditEvent{Action: flakegate.ActionGrant, At: eventTime, By: f.GrantedBy, Triple: f.Triple(), RunsLeft: f.ExpiresAfterRuns, Freeze: &f}
}

func event(action flakegate.AuditAction, seed string, runs int) flakegate.AuditEvent {
	return flakegate.AuditEvent{Action: action, At: eventTime, By: "ci", Triple: testFreeze(seed, 1).Triple(), RunsLeft: runs}
}

// chain encodes events as a chained log.
func chain(t *testing.T, events ...flakegate.AuditEvent) [][]byte {
	t.Helper()
	var lines [][]byte
	prev := ""
	for _, e := range events {
		line, err := e.Line(prev)
		if err != nil {
			t.Fatalf("Line(%+v): %v", e, err)
		}
		lines = append(lines, line)
		prev = flakegate.AuditLineSHA256(line)
	}
	return lines
}

func TestAuditLineRoundTrip(t *testing.T) {
	lines := chain(t,
		grantEvent(testFreeze(`"nightly-3"`, 4)),
		event(flakegate.ActionSkip, `"nightly-3"`, 3),
		event(flakegate.ActionRevoke, `"nightly-3"`, 3))
	for i, line := range lines {
		e, err := flakegate.ParseAuditLine(line)
		if err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		again, err := e.Line(e.PrevSHA256)
		if err != nil || !bytes.Equal(again, line) {
			t.Fatalf("line %d re-encodes to %s (%v), want %s", i+1, again, err, line)
		}
		if bytes.ContainsRune(line, '\n') {
			t.Fatalf("line %d holds a newline", i+1)
		}
	}
	if err := flakegate.VerifyAuditChain(lines); err != nil {
		t.Fatal(err)
	}
}

func TestVerifyAuditChain(t *testing.T) {
	type testCase struct {
		name   string
		edit   func(lines [][]byte) [][]byte
		errMsg string // "" = the chain holds
	}
	base := func(t *testing.T) [][]byte {
		return chain(t,
			grantEvent(testFreeze("1402", 3)),
			event(flakegate.ActionSkip, "1402", 2),
			grantEvent(testFreeze("1403", 5)),
			event(flakegate.ActionSkip, "1402", 1))
	}
	run := func(t *testing.T, tc testCase) {
		err := flakegate.VerifyAuditChain(tc.edit(base(t)))
		if tc.errMsg == "" {
			if err != nil {
				t.Fatalf("VerifyAuditChain: %v", err)
			}
			return
		}
		if err == nil || !strings.Contains(err.Error(), tc.errMsg) || flakegate.ErrorCode(err) != flakegate.EINVALID {
			t.Fatalf("VerifyAuditChain: %v, want EINVALID containing %q", err, tc.errMsg)
		}
	}
	for _, tc := range []testCase{
		{"intact", func(l [][]byte) [][]byte { return l }, ""},
		{"empty", func([][]byte) [][]byte { return nil }, ""},
		{"middle line edited", func(l [][]byte) [][]byte {
			l[1] = bytes.Replace(l[1], []byte(`"runs_left":2`), []byte(`"runs_left":9`), 1)
			return l
		}, "line 3: prev_sha256"},
		{"line removed", func(l [][]byte) [][]byte { return append(l[:1], l[2:]...) }, "line 2: prev_sha256"},
		{"lines swapped", func(l [][]byte) [][]byte { l[1], l[2] = l[2], l[1]; return l }, "line 2: prev_sha256"},
		{"first line removed", func(l [][]byte) [][]byte { return l[1:] }, "line 1: prev_sha256"},
		{"garbage line", func(l [][]byte) [][]byte { l[2] = []byte("{oops"); return l }, "line 3"},
		{"blank line", func(l [][]byte) [][]byte { l[2] = nil; return l }, "line 3"},
		{"unknown action", func(l [][]byte) [][]byte {
			l[3] = bytes.Replace(l[3], []byte(`"skip"`), []byte(`"extend"`), 1)
			return l
		}, `unknown action "extend"`},
		{"unknown key", func(l [][]byte) [][]byte {
			l[3] = bytes.Replace(l[3], []byte(`{"action"`), []byte(`{"x":1,"action"`), 1)
			return l
		}, "unknown field"},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func TestReplayAudit(t *testing.T) {
	type testCase struct {
		name   string
		events []flakegate.AuditEvent
		want   map[string]int // seed -> runs left
		errMsg string
	}
	g3, g5 := grantEvent(testFreeze("1402", 3)), grantEvent(testFreeze("1403", 5))
	owner := testFreeze("1402", 8)
	owner.Owner = "reviewer-b"
	run := func(t *testing.T, tc testCase) {
		m, err := flakegate.ReplayAudit(chain(t, tc.events...))
		if tc.errMsg != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errMsg) {
				t.Fatalf("ReplayAudit: %v, want an error containing %q", err, tc.errMsg)
			}
			return
		}
		if err != nil {
			t.Fatalf("ReplayAudit: %v", err)
		}
		if len(m) != len(tc.want) {
			t.Fatalf("ReplayAudit: %d freezes, want %d", len(m), len(tc.want))
		}
		for seed, runs := range tc.want {
			f, ok := m[testFreeze(seed, 1).Triple().Key()]
			if !ok || f.ExpiresAfterRuns != runs {
				t.Fatalf("seed %s: %+v (found %v), want %d runs", seed, f, ok, runs)
			}
		}
	}
	for _, tc := range []testCase{
		{"grants and skips", []flakegate.AuditEvent{g3, g5, event(flakegate.ActionSkip, "1402", 2), event(flakegate.ActionSkip, "1403", 4)},
			map[string]int{"1402": 2, "1403": 4}, ""},
		{"count to zero", []flakegate.AuditEvent{g3, event(flakegate.ActionSkip, "1402", 2), event(flakegate.ActionSkip, "1402", 1),
			event(flakegate.ActionSkip, "1402", 0), event(flakegate.ActionExpire, "1402", 0)}, map[string]int{}, ""},
		{"replace", []flakegate.AuditEvent{g3, grantEvent(owner)}, map[string]int{"1402": 8}, ""},
		{"void and revoke", []flakegate.AuditEvent{g3, g5, event(flakegate.ActionVoid, "1402", 3), event(flakegate.ActionRevoke, "1403", 5)},
			map[string]int{}, ""},
		{"void of an entry added by hand", []flakegate.AuditEvent{g3, event(flakegate.ActionVoid, "1404", 9)}, map[string]int{"1402": 3}, ""},
		{"skip that does not count down by one", []flakegate.AuditEvent{g3, event(flakegate.ActionSkip, "1402", 3)}, nil, "leaves 3 runs, but the freeze had 3"},
		{"skip that extends", []flakegate.AuditEvent{g3, event(flakegate.ActionSkip, "1402", 50)}, nil, "leaves 50 runs"},
		{"skip of nothing", []flakegate.AuditEvent{event(flakegate.ActionSkip, "1402", 2)}, nil, "has no freeze"},
		{"expire with runs left", []flakegate.AuditEvent{g3, event(flakegate.ActionExpire, "1402", 0)}, nil, "has 3 runs left"},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
	// The replayed entry keeps owner and grant time exactly.
	m, err := flakegate.ReplayAudit(chain(t, g3, grantEvent(owner)))
	if err != nil {
		t.Fatal(err)
	}
	if got := m[owner.Triple().Key()]; !flakegate.SameFreeze(got, owner) {
		t.Fatalf("replayed %+v, want %+v", got, owner)
	}
}

func TestAuditLineRefusesBadEvents(t *testing.T) {
	type testCase struct {
		name string
		e    flakegate.AuditEvent
	}
	run := func(t *testing.T, tc testCase) {
		if _, err := tc.e.Line(""); flakegate.ErrorCode(err) != flakegate.EINVALID {
			t.Fatalf("Line: %v, want EINVALID", err)
		}
	}
	g := grantEvent(testFreeze("1402", 3))
	noFreeze := g
	noFreeze.Freeze = nil
	mismatch := g
	mismatch.RunsLeft = 30
	skipWithFreeze := event(flakegate.ActionSkip, "1402", 2)
	skipWithFreeze.Freeze = g.Freeze
	for _, tc := range []testCase{
		{"unknown action", event("extend", "1402", 2)},
		{"negative runs", event(flakegate.ActionSkip, "1402", -1)},
		{"bad seed", event(flakegate.ActionSkip, "1 2", 1)},
		{"grant without freeze", noFreeze},
		{"grant runs differ", mismatch},
		{"skip with a freeze", skipWithFreeze},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// FuzzParseAuditLine: any bytes either fail cleanly or parse to an event
// whose encoding parses back to the same event.
func FuzzParseAuditLine(f *testing.F) {
	for _, e := range []flakegate.AuditEvent{grantEvent(testFreeze("1402", 3)), event(flakegate.ActionVoid, `"s"`, 0)} {
		line, err := e.Line(strings.Repeat("0", 64))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(line)
	}
	f.Add([]byte(`{"action":"skip"}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		e, err := flakegate.ParseAuditLine(line)
		if err != nil {
			return
		}
		again, err := e.Line(e.PrevSHA256)
		if err != nil {
			t.Fatalf("a parsed event does not encode: %v", err)
		}
		e2, err := flakegate.ParseAuditLine(again)
		if err != nil {
			t.Fatalf("re-encoded line does not parse: %v", err)
		}
		if again2, _ := e2.Line(e2.PrevSHA256); !bytes.Equal(again, again2) {
			t.Fatalf("encoding is not stable: %s vs %s", again, again2)
		}
	})
}
