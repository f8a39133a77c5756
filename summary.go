package flakegate

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
