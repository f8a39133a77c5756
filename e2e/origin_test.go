package e2e_test

import (
	"strings"
	"testing"
)

// TestCheckOldBaseFailureIsNotHistory: the old-base-failure attack. A
// base bug (each seed fails its first run, ever) is recorded once by a
// red candidate's check, then fixed on the next base. A patch on the
// fixed base fakes a flake (each seed fails once): its history must not
// count the old base's failure, so the flake is not "base" and earns no
// freeze from --freeze-owner; the plain regression that follows is not
// skipped under one (PROPERTY, exit 1).
func TestCheckOldBaseFailureIsNotHistory(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end")
	}
	r := newRepo(t, probeFiles(libBaseFirstFails))
	r.candidate("red", map[string]string{"src/lib.sh": libRed})
	if red := r.check("--base", "base", "--candidate", "red"); red.code != 1 || strings.Join(red.labels(), ",") != "PROPERTY,PROPERTY" {
		t.Fatalf("the red candidate records the base bug\n%s", red)
	}
	r.rebase("base", "fixed", map[string]string{"src/lib.sh": libOK})
	r.rebase("fixed", "faked", map[string]string{"src/lib.sh": libFlaky})
	r.rebase("fixed", "regression", map[string]string{"src/lib.sh": libRed})
	faked := r.check("--base", "fixed", "--candidate", "faked", "--freeze-owner", "alice")
	if faked.code != 0 || strings.Join(faked.labels(), ",") != "SCHEDULER,SCHEDULER" {
		t.Fatalf("the faked flake\n%s", faked)
	}
	for i, res := range faked.summary.Results {
		if res.FlakeOrigin == "base" || res.Owner != "" || res.RunsLeft != nil || !strings.Contains(res.Reason, "no freeze granted") ||
			!strings.Contains(res.Reason, "base passed 4 of 4") {
			t.Errorf("result %d: origin %q, owner %q, reason %q", i, res.FlakeOrigin, res.Owner, res.Reason)
		}
	}
	// The summary and the progress lines state the counts.
	counts := "base passed 4 of 4; a 1-in-2 flake would show in 4 runs with 94% probability"
	if res := faked.summary.Results[0]; res.FlakeCounts != counts || !strings.Contains(faked.stderr, counts) {
		t.Errorf("flake_counts %q, want %q, in the summary and on stderr:\n%s", res.FlakeCounts, counts, faked.stderr)
	}
	if code, out := r.run("freeze", "list"); code != 0 || !strings.Contains(out, "no freezes") {
		t.Errorf("the faked flake earned a freeze: exit %d\n%s", code, out)
	}
	reg := r.check("--base", "fixed", "--candidate", "regression")
	if reg.code != 1 || strings.Join(reg.labels(), ",") != "PROPERTY,PROPERTY" {
		t.Fatalf("the regression after the faked flake\n%s", reg)
	}
}

// TestCheckProbeOffUnknown: with flake_probe_runs: 0 nothing is known
// of the base's seed, so a flake the patch adds is "unknown": no freeze
// from --freeze-owner, freeze grant needs --allow-new-flake, and
// reject_new_flakes: true rejects it (exit 1).
func TestCheckProbeOffUnknown(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end")
	}
	r := newRepo(t, baseFiles(libOK))
	r.candidate("flaky", map[string]string{"src/lib.sh": libFlaky})
	cr := r.check("--base", "base", "--candidate", "flaky", "--freeze-owner", "alice")
	if cr.code != 0 || strings.Join(cr.labels(), ",") != "SCHEDULER,SCHEDULER" {
		t.Fatalf("a flake, probe off\n%s", cr)
	}
	for i, res := range cr.summary.Results {
		if rec := cr.record(t, i); res.FlakeOrigin != "unknown" || rec.FlakeOrigin != "unknown" || res.Owner != "" ||
			!strings.Contains(res.Reason, "flake_probe_runs is 0") || !strings.Contains(res.Reason, "no freeze granted: flake origin unknown") {
			t.Errorf("result %d: origin %q (record %q), owner %q, reason %q", i, res.FlakeOrigin, rec.FlakeOrigin, res.Owner, res.Reason)
		}
	}
	if code, out := r.run("freeze", "list"); code != 0 || !strings.Contains(out, "no freezes") {
		t.Errorf("an unknown flake earned a freeze: exit %d\n%s", code, out)
	}
	rec := cr.summary.Results[0].Record
	if code, out := r.run("freeze", "grant", "--record", rec, "--owner", "bob", "--runs", "2"); code != 1 || !strings.Contains(out, `flake_origin is "unknown"`) {
		t.Errorf("freeze grant of an unknown flake: exit %d\n%s", code, out)
	}
	r.clearState()
	r.rebase("base", "base-strict", map[string]string{"flakegate.yaml": config("reject_new_flakes: true\n")})
	r.rebase("base-strict", "flaky-strict", map[string]string{"src/lib.sh": libFlaky})
	strict := r.check("--base", "base-strict", "--candidate", "flaky-strict")
	if strict.code != 1 || strict.summary.Verdict != "reject" || !strict.summary.RejectNewFlakes || strings.Join(strict.labels(), ",") != "SCHEDULER,SCHEDULER" {
		t.Fatalf("reject_new_flakes with an unknown flake: want exit 1\n%s", strict)
	}
}
