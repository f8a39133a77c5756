package filestore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/filestore"
	"github.com/flakegate/flakegate/internal/golden"
	"github.com/flakegate/flakegate/storetest"
)

func openStore(t *testing.T) *filestore.Store {
	t.Helper()
	s, err := filestore.Open(t.TempDir())
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) flakegate.Store { return openStore(t) })
	storetest.RunShared(t, func(t *testing.T) func() flakegate.Store {
		dir := t.TempDir()
		return func() flakegate.Store {
			s, err := filestore.Open(dir)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		}
	})
}

var ctx = context.Background()

func sameFiles(t *testing.T, before, after map[string]string) {
	t.Helper()
	if len(before) != len(after) {
		t.Fatalf("files changed: %d before, %d after", len(before), len(after))
	}
	for name, b := range before {
		if after[name] != b {
			t.Fatalf("%s changed:\nbefore %q\nafter  %q", name, b, after[name])
		}
	}
}

// fixedClock stamps events with whole seconds from a fixed start.
func fixedClock() func() time.Time {
	now := time.Date(2026, 4, 2, 9, 0, 0, 0, time.UTC)
	return func() time.Time { now = now.Add(time.Second); return now }
}

func TestLedgerFileGolden(t *testing.T) {
	s := openStore(t)
	s.Now = fixedClock()
	b := storetest.Freeze(`"nightly-3"`, 5)
	a := storetest.Freeze("1402", 20)
	a.Owner = "Zoë <zoe@example.com>"
	for _, f := range []flakegate.Freeze{b, a} {
		if err := s.Grant(ctx, f, false); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Consume(ctx, a.Triple(), a.RecordSHA256, "ci-run-7"); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{filestore.LedgerFile, filestore.AuditFile} {
		got, err := os.ReadFile(filepath.Join(s.Dir(), name))
		if err != nil {
			t.Fatal(err)
		}
		golden.Assert(t, name+".golden", got)
	}
}

func TestBadLedgerFile(t *testing.T) {
	type testCase struct {
		name    string
		ledger  string // ledger.json's bytes; {{F}} is replaced by a valid entry
		message string // a part of the error message
	}
	valid := storetest.Freeze("1402", 3)
	entry, err := json.Marshal(valid)
	if err != nil {
		t.Fatal(err)
	}
	run := func(t *testing.T, tc testCase) {
		s := openStore(t)
		if err := s.Grant(ctx, valid, false); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(s.Dir(), filestore.LedgerFile)
		raw := strings.ReplaceAll(tc.ledger, "{{F}}", string(entry))
		if err := os.WriteFile(path, []byte(raw), 0o644); err != nil {
			t.Fatal(err)
		}
		before := storetest.SnapshotDir(t, s.Dir())
		ops := map[string]func() error{
			"ListFreezes": func() error { _, err := s.ListFreezes(ctx); return err },
			"GetFreeze":   func() error { _, err := s.GetFreeze(ctx, valid.Triple()); return err },
			"Grant":       func() error { return s.Grant(ctx, storetest.Freeze("7", 1), false) },
			"Consume": func() error {
				_, err := s.Consume(ctx, valid.Triple(), valid.RecordSHA256, "ci")
				return err
			},
			"Remove":     func() error { return s.Remove(ctx, valid.Triple(), flakegate.ActionRevoke, "x", "y") },
			"AuditLines": func() error { _, err := s.AuditLines(ctx); return err },
		}
		for name, op := range ops {
			err := op()
			var fe *flakegate.Error
			if !errors.As(err, &fe) || fe.Code != flakegate.EINVALID || fe.Path != path || fe.Hint == "" {
				t.Fatalf("%s: error %#v, want EINVALID naming %s with a hint", name, err, path)
			}
			if !strings.Contains(fe.Message, tc.message) {
				t.Fatalf("%s: message %q, want it to contain %q", name, fe.Message, tc.message)
			}
		}
		sameFiles(t, before, storetest.SnapshotDir(t, s.Dir()))
	}
	for _, tc := range []testCase{
		{"not json", "freezes: [oops\n", "not valid JSON at line 1, column 3"},
		{"truncated", "{\n  \"version\": 1,\n  \"freezes\": [\n", "ends at line 4"},
		{"negative count", `{"version":1,"audit_head":"","freezes":[` + strings.Replace(string(entry), `"expires_after_runs":3`, `"expires_after_runs":-3`, 1) + `]}`, "expires_after_runs is -3"},
		{"count not a number", `{"version":1,"audit_head":"","freezes":[` + strings.Replace(string(entry), `"expires_after_runs":3`, `"expires_after_runs":"many"`, 1) + `]}`, "expires_after_runs"},
		{"label property", `{"version":1,"audit_head":"","freezes":[` + strings.Replace(string(entry), `"SCHEDULER"`, `"PROPERTY"`, 1) + `]}`, "only SCHEDULER"},
		{"duplicate triple", `{"version":1,"audit_head":"","freezes":[{{F}},{{F}}]}`, "a second freeze"},
		{"unknown key", `{"version":1,"audit_head":"","freezes":[],"extra":true}`, "unknown field"},
		{"wrong version", `{"version":2,"audit_head":"","freezes":[]}`, "version is 2"},
		{"trailing data", `{"version":1,"audit_head":"","freezes":[]} {}`, "data after"},
		{"bad seed", `{"version":1,"audit_head":"","freezes":[` + strings.Replace(string(entry), `"seed":1402`, `"seed":"a b"`, 1) + `]}`, "seed"},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestRollForward cuts a change short after its append: the log has
// the new line, ledger.json does not. The next call finishes the change.
func TestRollForward(t *testing.T) {
	type testCase struct {
		name      string
		dropLedge bool // remove ledger.json too (rebuild from the log)
		wantRuns  int
	}
	run := func(t *testing.T, tc testCase) {
		s := openStore(t)
		f := storetest.Freeze("1402", 3)
		if err := s.Grant(ctx, f, false); err != nil {
			t.Fatal(err)
		}
		lines, err := s.AuditLines(ctx)
		if err != nil {
			t.Fatal(err)
		}
		e := flakegate.AuditEvent{Action: flakegate.ActionSkip, At: time.Now(), By: "killed", Triple: f.Triple(), RunsLeft: 2}
		line, err := e.Line(flakegate.AuditLineSHA256(lines[0]))
		if err != nil {
			t.Fatal(err)
		}
		auditPath := filepath.Join(s.Dir(), filestore.AuditFile)
		af, err := os.OpenFile(auditPath, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		af.Write(append(line, '\n'))
		af.Close()
		if tc.dropLedge {
			os.Remove(filepath.Join(s.Dir(), filestore.LedgerFile))
		}
		got, err := s.GetFreeze(ctx, f.Triple())
		if err != nil || got.ExpiresAfterRuns != tc.wantRuns {
			t.Fatalf("GetFreeze after the cut: %+v, %v; want %d runs", got, err, tc.wantRuns)
		}
		raw, err := os.ReadFile(filepath.Join(s.Dir(), filestore.LedgerFile))
		if err != nil || !strings.Contains(string(raw), flakegate.AuditLineSHA256(line)) {
			t.Fatalf("ledger.json was not rewritten with the new head: %v\n%s", err, raw)
		}
		rep, err := flakegate.VerifyLedger(ctx, s, "test")
		if err != nil {
			t.Fatal(err)
		}
		// The fake record is not stored, so verify voids the entry for
		// that, and for nothing else.
		if len(rep.Problems) != 1 || !strings.Contains(rep.Problems[0].Reason, "missing") {
			t.Fatalf("verify: %+v", rep.Problems)
		}
	}
	for _, tc := range []testCase{
		{"log one line ahead", false, 2},
		{"ledger removed", true, 2},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestEditedLastLine: a head that names no line is not a crash; nothing is
// rolled forward and verify reports the difference.
func TestEditedLastLine(t *testing.T) {
	s := openStore(t)
	f := storetest.Freeze("1402", 3)
	if err := s.Grant(ctx, f, false); err != nil {
		t.Fatal(err)
	}
	auditPath := filepath.Join(s.Dir(), filestore.AuditFile)
	raw, _ := os.ReadFile(auditPath)
	edited := strings.ReplaceAll(string(raw), `"expires_after_runs":3`, `"expires_after_runs":90`)
	edited = strings.ReplaceAll(edited, `"runs_left":3`, `"runs_left":90`)
	if edited == string(raw) {
		t.Fatal("the edit did not apply")
	}
	os.WriteFile(auditPath, []byte(edited), 0o644)
	got, err := s.GetFreeze(ctx, f.Triple())
	if err != nil || got.ExpiresAfterRuns != 3 {
		t.Fatalf("GetFreeze: %+v, %v; want the ledger's 3 runs", got, err)
	}
	rep, err := flakegate.VerifyLedger(ctx, s, "test")
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK() || !strings.Contains(rep.Problems[0].Reason, "expires_after_runs is 3 in the ledger but 90 in the audit log") {
		t.Fatalf("verify: %+v", rep.Problems)
	}
}

func TestOpenNotAFolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "file")
	os.WriteFile(path, []byte("x"), 0o644)
	_, err := filestore.Open(path)
	if flakegate.ErrorCode(err) != flakegate.EINVALID {
		t.Fatalf("Open(a file): %v, want EINVALID", err)
	}
}

// FuzzLedgerFile: any bytes in ledger.json either load or fail as an
// EINVALID error naming the file, and a file that fails is left as it is.
func FuzzLedgerFile(f *testing.F) {
	golden, err := os.ReadFile(filepath.Join("testdata", filestore.LedgerFile+".golden"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(golden)
	f.Add([]byte(`{"version":1,"audit_head":"","freezes":[]}`))
	f.Add([]byte(`{"version":1,"freezes":[{"seed":-0,"expires_after_runs":-1}]}`))
	f.Add([]byte("\xff"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		s, err := filestore.Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(s.Dir(), filestore.LedgerFile)
		if err := os.WriteFile(path, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		fs, err := s.ListFreezes(ctx)
		if err != nil {
			var fe *flakegate.Error
			if !errors.As(err, &fe) || fe.Code != flakegate.EINVALID || fe.Path != path {
				t.Fatalf("ListFreezes: %#v, want EINVALID naming the file", err)
			}
			if after, _ := os.ReadFile(path); !bytes.Equal(after, raw) {
				t.Fatal("a ledger that failed to load was rewritten")
			}
			return
		}
		for _, f := range fs {
			if f.ExpiresAfterRuns < 0 || f.Label != flakegate.Scheduler || !f.Seed.Valid() {
				t.Fatalf("a bad entry loaded: %+v", f)
			}
		}
	})
}
