package flakegate

import "fmt"

// Verdicts of a check.
const (
	VerdictPass   = "pass"
	VerdictReject = "reject"
)

// Result is one triple's line of the check summary (the JSON output of check).
//
// A frozen skip is Label SCHEDULER with Skipped true, written "SCHEDULER
// skipped (frozen)" in every report. CandidateAttempts and BaseAttempts
// count the attempts of each side the result rests on; a base result from
// the replay cache counts as the base attempt it was, with BaseCached true
// (this check did not run it).
type Result struct {
	PropertyPath  string    `json:"property_path"`
	Name          string    `json:"name,omitempty"`
	Seed          Seed      `json:"seed"`
	SeedOrigin    string    `json:"seed_origin,omitempty"`
	FixtureSHA256 string    `json:"fixture_sha256,omitempty"`
	Label         Label     `json:"label"`
	Row           int       `json:"row,omitempty"`
	Reason        string    `json:"reason,omitempty"`
	Freeze        bool      `json:"freeze"`
	Skipped       bool      `json:"skipped"`
	RunsLeft      *int      `json:"runs_left"`
	Owner         string    `json:"owner,omitempty"`
	RecordSHA256  string    `json:"record_sha256"`
	Record        string    `json:"record"`
	Reproduce     string    `json:"reproduce"`
	Attempts      []Attempt `json:"attempts,omitempty"`
	Seconds       float64   `json:"seconds"`
	// RunnerID and RunnerHost name the runner that labelled the triple
	// (check --join and verdict --ledger).
	RunnerID   string `json:"runner_id,omitempty"`
	RunnerHost string `json:"runner_host,omitempty"`
	// Suite is the path of the suite the triple's test comes from ("" for
	// a property).
	Suite string `json:"suite,omitempty"`

	CandidateAttempts int    `json:"candidate_attempts"`
	BaseAttempts      int    `json:"base_attempts"`
	BaseCached        bool   `json:"base_cached"`
	AttemptsSkipped   string `json:"attempts_skipped,omitempty"`
	// Isolation is how the attempts ran: "bwrap" or "none" ("" for a
	// skipped triple, whose attempts ran in an earlier check).
	Isolation string `json:"isolation,omitempty"`
	// FlakeOrigin is "base", "new" or "unknown" for a SCHEDULER result
	// (NotBaseFlake); BaseProbeResults are the probe's
	// results.
	FlakeOrigin      string   `json:"flake_origin,omitempty"`
	BaseProbeResults []string `json:"base_probe_results,omitempty"`
	// FlakeCounts says what the origin rests on: "base passed 4 of 4; a
	// 1-in-2 flake would show in 4 runs with 94% probability", or how
	// often this base failed the seed.
	FlakeCounts string `json:"flake_counts,omitempty"`
	// FrozenCandidate is the candidate sha of the record that earned the
	// freeze a skipped triple used.
	FrozenCandidate string `json:"frozen_candidate,omitempty"`
	// Base, Candidate and At name the revisions and the time of the record
	// behind the result (the frozen record's, for a skipped triple).
	BaseSHA      string `json:"base_sha,omitempty"`
	CandidateSHA string `json:"candidate_sha,omitempty"`
	At           string `json:"at,omitempty"`
}

// ID names the result's test: "path" or "path::name".
func (r *Result) ID() string {
	if r.Name == "" {
		return r.PropertyPath
	}
	return r.PropertyPath + "::" + r.Name
}

// Summary is the --json output of check.
type Summary struct {
	Verdict   string `json:"verdict"`
	Base      string `json:"base"`
	Candidate string `json:"candidate"`
	// ConfigSHA256 is the sha256 of the config bytes read at the base.
	ConfigSHA256 string `json:"config_sha256,omitempty"`
	// Shard is set on the summary of one shard (check --shard I/N).
	Shard *Shard `json:"shard,omitempty"`
	// CheckID names the queued check (check --join, verdict --ledger).
	CheckID string `json:"check_id,omitempty"`
	// Isolation is how the check's attempts ran: "bwrap" or "none".
	Isolation string `json:"isolation,omitempty"`
	// Prepares are the check's prepares, one per tree and command.
	Prepares []PrepareRun `json:"prepares,omitempty"`
	Results  []Result     `json:"results"`
	// RejectNewFlakes is the config's reject_new_flakes: a result whose
	// flake_origin is "new" or "unknown" makes the verdict reject
	// (SetVerdict).
	RejectNewFlakes bool `json:"reject_new_flakes,omitempty"`
	// NewTests are the tests the candidate adds to a suite, each run
	// new_test_runs times (suite.go); RejectFlakyNewTests is the config's
	// reject_flaky_new_tests: a new test that did not pass every run
	// makes the verdict reject.
	NewTests            []NewTest `json:"new_tests,omitempty"`
	RejectFlakyNewTests bool      `json:"reject_flaky_new_tests,omitempty"`
	// Impact is what impact decided for each suite it was asked of
	// (config impact: true): the tests the patch cannot reach, which were
	// not run again, and the runs each test it can reach got.
	Impact []SuiteImpact `json:"impact,omitempty"`
}

// SuiteImpact is impact's decision for one suite: how many of its gated
// tests the patch can reach (Affected; they ran Runs order seeds each)
// and how many it cannot (Unaffected; not run again, their inputs are
// identical to the base's, whose run of them passed). Undecided says why
// impact could not decide, in which case every test ran as without it.
type SuiteImpact struct {
	Suite     int    `json:"suite"`
	Framework string `json:"framework"`
	Path      string `json:"path"`
	Undecided string `json:"undecided,omitempty"`
	// Affected and Unaffected count tests; AffectedUnits and
	// UnaffectedUnits the units that hold them, each a Unit ("package"
	// for go, "test file" for pytest, vitest and jest): impact decides a
	// unit as a whole.
	Affected        int    `json:"affected_tests"`
	Unaffected      int    `json:"unaffected_tests"`
	Unit            string `json:"unit,omitempty"`
	AffectedUnits   int    `json:"affected_units"`
	UnaffectedUnits int    `json:"unaffected_units"`
	// Seeds is the suite's own seeds per test; Runs the order seeds each
	// affected test ran with (Seeds or more); Chance the chance that a
	// 1-in-3 flake in an affected test showed in those runs.
	Seeds  int     `json:"seeds"`
	Runs   int     `json:"runs"`
	Chance float64 `json:"chance_1_in_3"`
	// Reached are the affected units, each with the first input of it
	// that differs, or the rule that counts it reachable.
	Reached []Reach `json:"reached,omitempty"`
}

// Reach is one unit the patch can reach, and why.
type Reach struct {
	Unit string `json:"unit"`
	Why  string `json:"why"`
}

// UnaffectedLine is the summary's line of the tests impact did not run
// again: "unaffected: N tests (inputs identical to the base's)".
func (si SuiteImpact) UnaffectedLine() string {
	return fmt.Sprintf("unaffected: %d %s (inputs identical to the base's)", si.Unaffected, plural(si.Unaffected, "test", "tests"))
}

// Line says the decision in one line, as the check's progress and the
// reports show it.
func (si SuiteImpact) Line() string {
	if si.Undecided != "" {
		return "every test ran: " + si.Undecided
	}
	unit := si.Unit
	if unit == "" {
		unit = "unit"
	}
	line := si.UnaffectedLine() + fmt.Sprintf(", %d %s not run again", si.UnaffectedUnits, plural(si.UnaffectedUnits, unit, unit+"s"))
	if si.Affected == 0 {
		return line
	}
	return line + fmt.Sprintf("; affected: %d %s in %d %s, %d runs each: a 1-in-3 flake shows in %.1f%% of checks",
		si.Affected, plural(si.Affected, "test", "tests"), si.AffectedUnits, plural(si.AffectedUnits, unit, unit+"s"), si.Runs, 100*si.Chance)
}

// plural is one or many by n.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// PrepareRun is one prepare of a check: the tree it prepared, how long it
// took, whether its layer came from an earlier check, and how it ended.
type PrepareRun struct {
	Side          string   `json:"side"`
	PrepareSHA256 string   `json:"prepare_sha256"`
	Command       []string `json:"command"`
	Seconds       float64  `json:"seconds"`
	Cached        bool     `json:"cached"`
	ExitCode      int      `json:"exit_code"`
	OK            bool     `json:"ok"`
	Reason        string   `json:"reason,omitempty"`
}

// NewFlakes counts the results whose flake origin is "new" or "unknown"
// (NotBaseFlake): flakes not known to be the base's.
func (s *Summary) NewFlakes() int {
	n := 0
	for i := range s.Results {
		if NotBaseFlake(s.Results[i].FlakeOrigin) {
			n++
		}
	}
	return n
}

// SetVerdict sets Verdict from the labels (VerdictOf) and, with
// RejectNewFlakes, from the new flakes: the labels stay the table's.
func (s *Summary) SetVerdict() {
	s.Verdict = VerdictOf(s.Results)
	if s.RejectNewFlakes && s.NewFlakes() > 0 {
		s.Verdict = VerdictReject
	}
	for _, t := range s.NewTests {
		if s.RejectFlakyNewTests && t.Flaky() {
			s.Verdict = VerdictReject
		}
	}
}

// VerdictOf returns "reject" if any result's label is a reject.
func VerdictOf(results []Result) string {
	for _, r := range results {
		if r.Label.Reject() {
			return VerdictReject
		}
	}
	return VerdictPass
}
