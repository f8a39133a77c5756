package e2e_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/internal/pgtest"
)

const (
	// libBaseFlaky fails its second run of each seed (a flake the base
	// already has): the base replay passes, the first probe run fails.
	libBaseFlaky = `ok() {
	n=$(cat "$FG_STATE/base-$1" 2>/dev/null || echo 0)
	echo $((n + 1)) > "$FG_STATE/base-$1"
	[ "$n" -ne 1 ]
}
`
	// libBaseFirstFails fails the first run of each seed, ever, then passes.
	libBaseFirstFails = `ok() {
	n=$(cat "$FG_STATE/base-$1" 2>/dev/null || echo 0)
	echo $((n + 1)) > "$FG_STATE/base-$1"
	[ "$n" -ge 1 ]
}
`
)

// probeConfig is config with the flake probe at its default, 3 runs.
func probeConfig(extra string) string {
	return strings.Replace(config(extra), "flake_probe_runs: 0\n", "", 1)
}

// probeFiles is baseFiles with probeConfig.
func probeFiles(lib string) map[string]string {
	files := baseFiles(lib)
	files["flakegate.yaml"] = probeConfig("")
	return files
}

// clearState removes the property scripts' counters.
func (r *repo) clearState() {
	r.t.Helper()
	ents, err := os.ReadDir(r.state)
	if err != nil {
		r.t.Fatal(err)
	}
	for _, e := range ents {
		os.Remove(filepath.Join(r.state, e.Name()))
	}
}

// TestCheckNewFlake: a patch that adds a flake (each seed fails its first
// attempt, base never fails) is SCHEDULER, as the table says, but its
// flake_origin is "new": base passed the replay and 3 probe runs. It
// earns no freeze from --freeze-owner, freeze grant refuses its record
// unless --allow-new-flake, and reject_new_flakes makes the check exit 1.
func TestCheckNewFlake(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end")
	}
	r := newRepo(t, probeFiles(libOK))
	r.candidate("flaky", map[string]string{"src/lib.sh": libFlaky})
	cr := r.check("--base", "base", "--candidate", "flaky", "--freeze-owner", "alice")
	if cr.code != 0 || strings.Join(cr.labels(), ",") != "SCHEDULER,SCHEDULER" {
		t.Fatalf("a new flake\n%s", cr)
	}
	for i, res := range cr.summary.Results {
		rec := cr.record(t, i)
		if res.FlakeOrigin != "new" || strings.Join(res.BaseProbeResults, ",") != "pass,pass,pass" || rec.FlakeOrigin != "new" ||
			strings.Join(rec.BaseProbeResults, ",") != "pass,pass,pass" {
			t.Errorf("result %d: origin %q probes %v; record origin %q probes %v", i, res.FlakeOrigin, res.BaseProbeResults, rec.FlakeOrigin, rec.BaseProbeResults)
		}
		if !strings.Contains(res.Reason, "new flake: base passed 4 of 4; a 1-in-2 flake would show in 4 runs with 94% probability; this patch may have introduced it") || !strings.Contains(res.Reason, "no freeze granted") ||
			res.Owner != "" || res.RunsLeft != nil {
			t.Errorf("result %d: reason %q, owner %q", i, res.Reason, res.Owner)
		}
		if res.BaseAttempts != 1 || res.CandidateAttempts != 2 {
			t.Errorf("result %d: %d candidate, %d base attempts", i, res.CandidateAttempts, res.BaseAttempts)
		}
		verifyTranscript(t, res.Record, rec)
	}
	if code, out := r.run("freeze", "list"); code != 0 || !strings.Contains(out, "no freezes") {
		t.Errorf("a new flake earned a freeze: exit %d\n%s", code, out)
	}
	rec := cr.summary.Results[0].Record
	if code, out := r.run("freeze", "grant", "--record", rec, "--owner", "bob", "--runs", "2"); code != 1 || !strings.Contains(out, `flake_origin is "new"`) {
		t.Errorf("freeze grant of a new flake: exit %d\n%s", code, out)
	}
	if code, out := r.run("freeze", "grant", "--record", rec, "--owner", "bob", "--runs", "2", "--allow-new-flake"); code != 0 {
		t.Errorf("freeze grant --allow-new-flake: exit %d\n%s", code, out)
	}

	// reject_new_flakes: the same patch makes the check exit 1 (seed 11
	// is skipped under the freeze granted by hand above; seed 12 runs).
	r.clearState()
	r.rebase("base", "base-strict", map[string]string{"flakegate.yaml": probeConfig("reject_new_flakes: true\n")})
	r.rebase("base-strict", "flaky-strict", map[string]string{"src/lib.sh": libFlaky})
	strict := r.check("--base", "base-strict", "--candidate", "flaky-strict")
	if strict.code != 1 || strings.Join(strict.labels(), ",") != "SCHEDULER(skipped),SCHEDULER" || strict.summary.Verdict != flakegate.VerdictReject ||
		!strict.summary.RejectNewFlakes {
		t.Fatalf("reject_new_flakes\n%s", strict)
	}
}

// TestCheckBaseFlake: a seed that already flakes on base (the first probe
// run fails) is a "base" flake: the freeze is granted, and a later check
// that skips the triple names the candidate that earned it, the owner and
// the runs left.
func TestCheckBaseFlake(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end")
	}
	r := newRepo(t, probeFiles(libBaseFlaky))
	sha := r.candidate("flaky", map[string]string{"src/lib.sh": libFlaky})
	cr := r.check("--base", "base", "--candidate", "flaky", "--freeze-owner", "alice")
	if cr.code != 0 || strings.Join(cr.labels(), ",") != "SCHEDULER,SCHEDULER" {
		t.Fatalf("a base flake\n%s", cr)
	}
	for i, res := range cr.summary.Results {
		if res.FlakeOrigin != "base" || strings.Join(res.BaseProbeResults, ",") != "fail" || res.Owner != "alice" ||
			!strings.Contains(res.Reason, "flake on base: this base failed the seed 1 of 2 times (1 in 1 probe runs, 0 in 0 earlier records of this base)") {
			t.Errorf("result %d: origin %q, probes %v, owner %q, reason %q", i, res.FlakeOrigin, res.BaseProbeResults, res.Owner, res.Reason)
		}
		verifyTranscript(t, res.Record, cr.record(t, i))
	}
	code, out := r.run("freeze", "list", "--json")
	var fs []flakegate.Freeze
	if code != 0 || json.Unmarshal([]byte(out), &fs) != nil || len(fs) != 2 || fs[0].CandidateSHA != sha || fs[1].CandidateSHA != sha {
		t.Fatalf("freeze list: exit %d\n%s", code, out)
	}
	next := r.check("--base", "base", "--candidate", "flaky")
	if next.code != 0 || strings.Join(next.labels(), ",") != "SCHEDULER(skipped),SCHEDULER(skipped)" {
		t.Fatalf("the frozen triples\n%s", next)
	}
	if res := next.summary.Results[0]; res.FrozenCandidate != sha {
		t.Errorf("frozen_candidate %q, want %s", res.FrozenCandidate, sha)
	}
	want := "frozen from candidate " + flakegate.ShortSHA(sha) + ", owner alice, 2 runs left"
	if !strings.Contains(next.stderr, want) {
		t.Errorf("the skip line does not say %q:\n%s", want, next.stderr)
	}
}

// historyFlake: base fails the first run of each seed, ever. A first
// check of a red candidate records that base failure (PROPERTY); a later
// flaky candidate passes base in the replay and in every probe run, yet
// the store's history says the flake is the base's.
func historyFlake(t *testing.T, ledger ...string) {
	r := newRepo(t, probeFiles(libBaseFirstFails))
	r.candidate("red", map[string]string{"src/lib.sh": libRed})
	r.candidate("flaky", map[string]string{"src/lib.sh": libFlaky})
	red := r.check(append([]string{"--base", "base", "--candidate", "red"}, ledger...)...)
	if red.code != 1 || strings.Join(red.labels(), ",") != "PROPERTY,PROPERTY" {
		t.Fatalf("red candidate\n%s", red)
	}
	cr := r.check(append([]string{"--base", "base", "--candidate", "flaky", "--no-replay-cache", "--freeze-owner", "alice"}, ledger...)...)
	if cr.code != 0 || strings.Join(cr.labels(), ",") != "SCHEDULER,SCHEDULER" {
		t.Fatalf("flaky candidate\n%s", cr)
	}
	for i, res := range cr.summary.Results {
		if res.FlakeOrigin != "base" || strings.Join(res.BaseProbeResults, ",") != "pass,pass,pass" || res.Owner != "alice" ||
			!strings.Contains(res.Reason, "flake on base: this base failed the seed 1 of 5 times (0 in 3 probe runs, 1 in 1 earlier records of this base)") {
			t.Errorf("result %d: origin %q, probes %v, owner %q, reason %q", i, res.FlakeOrigin, res.BaseProbeResults, res.Owner, res.Reason)
		}
	}
}

func TestCheckFlakeHistoryFiles(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end")
	}
	historyFlake(t)
}

func TestCheckFlakeHistoryPostgres(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end: PostgreSQL")
	}
	historyFlake(t, "--ledger", pgtest.DSN(t))
}
