package e2e_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/flakegate/flakegate/transcript"
)

// A jest or vitest batch writes its JSON report only when it ends. The
// attacks below hang only when the tests run together in one process
// (module state one test leaves for the next), as the project's own
// `vitest run` or `jest` runs them: each test alone passes. A batch
// killed at its budget must judge its members from that batch, never
// from runs of each test alone, which the hang never reaches.

// jsTickBase is the product code of the attacks: tick counts its calls
// in the module, as a pool, a cache or a registry does.
const jsTickBase = "let calls = 0;\nexport const tick = () => {\n  calls++;\n  return calls;\n};\n"

// jsTickTests are three tests of one file that each call tick once.
const jsTickTests = `import { test, expect } from "vitest";
import { tick } from "../src/tick.js";

test("t1", () => {
  expect(tick()).toBeGreaterThan(0);
});

test("t2", () => {
  expect(tick()).toBeGreaterThan(0);
});

test("t3", () => {
  expect(tick()).toBeGreaterThan(0);
});
`

// jsHang is a synchronous sleep of an hour: no test timeout of the
// framework ends it, only the batch's budget.
const jsHang = "Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 3600e3);"

// jsTickRepo is a project of fw whose three properties t1, t2, t3 (seed
// 7, wall_budget 15s each: the batch of three is killed at 45s) run as
// one batch, with retryCap retries and FG_STATE shared with the sandbox.
func jsTickRepo(t *testing.T, fw jsFramework, retryCap string) *repo {
	t.Helper()
	var entries []string
	for _, n := range []string{"t1", "t2", "t3"} {
		entries = append(entries, jsEntry("tests/tick.test.js", n, "15s"))
	}
	files := jsProject(t, fw, jsConfig(fw, "", entries...), map[string]string{"src/tick.js": jsTickBase, "tests/tick.test.js": jsTickTests})
	cfg := strings.Replace(files["flakegate.yaml"], "retry_cap: 2\n", "retry_cap: "+retryCap+"\n", 1)
	files["flakegate.yaml"] = strings.Replace(cfg, "sandbox:\n", "sandbox:\n  rw: [\"@FG_STATE@\"]\n  env: [FG_STATE]\n", 1)
	return newRepo(t, files)
}

// candidateBatches are the member counts of the batches each candidate
// attempt in the transcript at path ran in (0: it ran in none), in the
// transcript's order.
func candidateBatches(t *testing.T, path string) []int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []int
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev transcript.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Type != transcript.EventAttemptEnd || ev.Side != transcript.SideCandidate {
			continue
		}
		n := 0
		if ev.Batch != nil {
			n = len(ev.Batch.Members)
		}
		out = append(out, n)
	}
	return out
}

// TestAttackJSBatchHangsTogether: the candidate's tick hangs from its
// second call in a process, so the batch of t1, t2, t3 hangs in t2, as
// the project's own vitest run or jest would, and is killed at its
// budget; each test alone calls tick once and passes. The check must
// reject it: t2, the test that was running, is BUDGET, judged from the
// batch of three, never from a run of t2 alone (exit 1). Before the fix
// every member of the killed batch ran again alone and the check passed
// the hang: PASS, PASS, PASS, exit 0.
func TestAttackJSBatchHangsTogether(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real jest and vitest")
	}
	t.Parallel() // waits out a budget most of its time: beside the other waits
	for _, fw := range jsFrameworks {
		t.Run(fw.name, func(t *testing.T) {
			t.Parallel()
			r := jsTickRepo(t, fw, "2")
			hangs := strings.Replace(jsTickBase, "  calls++;\n", "  calls++;\n  if (calls >= 2) "+jsHang+"\n", 1)
			r.candidate("hangs", map[string]string{"src/tick.js": fw.source(hangs)})
			cr := r.check("--base", "base", "--candidate", "hangs")
			labels := cr.labels()
			if cr.code != 1 || len(labels) != 3 || labels[1] != "BUDGET" || strings.Contains(strings.Join(labels, ","), "SCHEDULER") {
				t.Fatalf("a batch that hangs in t2: want exit 1 and t2 BUDGET, got %v\n%s", labels, cr)
			}
			if reason := cr.summary.Results[1].Reason; !strings.Contains(reason, "killed") {
				t.Errorf("t2's reason %q does not say the batch was killed", reason)
			}
			if got := candidateBatches(t, cr.record(t, 1).TranscriptPath); len(got) == 0 || got[0] != 3 {
				t.Errorf("t2's candidate attempts ran in batches of %v members; want its first in the batch of 3", got)
			}
			verifyTranscript(t, cr.summary.Results[1].Record, cr.record(t, 1))
		})
	}
}

// TestAttackJSRetryHangsTogether: a regression that fails t2 and t3 in
// the first batch (from tick's second call in a process) and hangs the
// batch in t2 in its retry, as a race between the tests would (the
// candidate's tick counts its processes in FG_STATE, which the config
// shares with the sandbox: the first fails, every later one hangs from
// the second call). The base passes. A retry is the same batch: it hangs
// in t2 and is killed, so t2's retry is a timeout (BUDGET), and no
// member earns SCHEDULER (exit 1). Before the fix the killed retry ran
// t2 and t3 alone, where tick is called once and passes: candidate
// fail, base pass, retry pass, SCHEDULER for both, which passes the gate
// (reject_new_flakes is off) and earns a freeze.
func TestAttackJSRetryHangsTogether(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real jest and vitest")
	}
	t.Parallel() // waits out a budget most of its time: beside the other waits
	for _, fw := range jsFrameworks {
		t.Run(fw.name, func(t *testing.T) {
			t.Parallel()
			r := jsTickRepo(t, fw, "1")
			racy := `import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const seen = join(process.env.FG_STATE, "tick-processes");
const process_ = existsSync(seen) ? Number(readFileSync(seen, "utf8")) + 1 : 1;
writeFileSync(seen, String(process_));

let calls = 0;
export const tick = () => {
  calls++;
  if (calls >= 2 && process_ === 1) throw new Error("tick: call " + calls);
  if (calls >= 2) ` + jsHang + `
  return calls;
};
`
			r.candidate("racy", map[string]string{"src/tick.js": fw.source(racy)})
			cr := r.check("--base", "base", "--candidate", "racy")
			labels := cr.labels()
			if cr.code != 1 || len(labels) != 3 || labels[1] != "BUDGET" || strings.Contains(strings.Join(labels, ","), "SCHEDULER") {
				t.Fatalf("a retry batch that hangs in t2: want exit 1, t2 BUDGET and no SCHEDULER, got %v\n%s", labels, cr)
			}
			rec := cr.record(t, 1)
			if rec.CandidateResult != "fail" || rec.BaseSeedResult != "pass" || len(rec.RetryResults) != 1 || rec.RetryResults[0] == "pass" {
				t.Errorf("t2: candidate %s, base %s, retries %v; want fail, pass, and a retry that did not pass", rec.CandidateResult, rec.BaseSeedResult, rec.RetryResults)
			}
			// A retry is the same batch again: t2's first attempt and its
			// retry both ran in the batch of three.
			if got := candidateBatches(t, rec.TranscriptPath); fmt.Sprint(got) != "[3 3]" {
				t.Errorf("t2's candidate attempts ran in batches of %v members; want [3 3]", got)
			}
			verifyTranscript(t, cr.summary.Results[1].Record, rec)
		})
	}
}
