package flakegate

import (
	"encoding/json"
	"time"
)

// Env is the environment of one side of a check, compared by rows 7 and 8
// of the decision table.
type Env struct {
	Workers      int     `json:"workers"`
	ClockBudgetS float64 `json:"clock_budget_s"`
	Filesystem   string  `json:"filesystem"`
}

// Attempt is one run of the property command.
type Attempt struct {
	Side        string    `json:"side"`   // "candidate" or "base"
	Index       int       `json:"index"`  // 0 is the first candidate run, 1.. retries
	Result      string    `json:"result"` // "pass", "fail", "error" or "timeout"
	ExitCode    int       `json:"exit_code"`
	Signal      string    `json:"signal,omitempty"`
	StartedAt   time.Time `json:"started_at"`
	WallSeconds float64   `json:"wall_seconds"`
	OutputTail  string    `json:"output_tail,omitempty"`
}

// RunRecord is the record flakegate writes for one triple (schema
// flakegate.run/v1). Its JSON holds every required key of the spec plus
// the provenance keys flakegate adds (docs/design.md).
type RunRecord struct {
	Schema               string    `json:"schema"`
	RunID                string    `json:"run_id"`
	Seed                 Seed      `json:"seed"`
	PropertyPath         string    `json:"property_path"`
	PropertySHA256       string    `json:"property_sha256"`
	FixtureSHA256        string    `json:"fixture_sha256"`
	BaseFixtureSHA256    string    `json:"base_fixture_sha256"`
	DiffPaths            []string  `json:"diff_paths"`
	CandidateResult      string    `json:"candidate_result"`
	BaseSeedResult       string    `json:"base_seed_result"`
	RetryResults         []string  `json:"retry_results"`
	RetryCap             int       `json:"retry_cap"`
	BudgetOK             bool      `json:"budget_ok"`
	TranscriptComplete   bool      `json:"transcript_complete"`
	FixtureGeneratorPath string    `json:"fixture_generator_path,omitempty"`
	WatchPaths           []string  `json:"watch_paths,omitempty"`
	CandidateEnv         *Env      `json:"candidate_env,omitempty"`
	BaseEnv              *Env      `json:"base_env,omitempty"`
	BaseSHA              string    `json:"base_sha"`
	CandidateSHA         string    `json:"candidate_sha"`
	FixturePath          string    `json:"fixture_path"`
	WallBudgetS          float64   `json:"wall_budget_s"`
	Samples              int       `json:"samples"`
	Attempts             []Attempt `json:"attempts"`
	TranscriptPath       string    `json:"transcript_path"`
	TranscriptSHA256     string    `json:"transcript_sha256"`
	BaseFromCache        bool      `json:"base_from_replay_cache"`
	ToolVersion          string    `json:"tool_version"`
	// RunnerHost and RunnerID name the machine and runner that ran the
	// triple (extra keys: hashed and kept, never read by the table).
	RunnerHost string `json:"runner_host,omitempty"`
	RunnerID   string `json:"runner_id,omitempty"`
	// IncompleteReason says why flakegate gave up on a triple without
	// running it to the end (extra key; the record has
	// transcript_complete false, so the table says INCOMPLETE).
	IncompleteReason string `json:"incomplete_reason,omitempty"`

	// Extra keys (hashed and kept, never read by the table): the test's
	// name, the digests of the argv template and the config entry a freeze
	// binds, "drawn" for a seed drawn from the candidate, and why no
	// attempt ran when the diff alone decided the label.
	Name                string   `json:"name,omitempty"`
	RunSHA256           string   `json:"run_sha256,omitempty"`
	PropertyEntrySHA256 string   `json:"property_entry_sha256,omitempty"`
	SeedOrigin          string   `json:"seed_origin,omitempty"`
	AttemptsSkipped     string   `json:"attempts_skipped,omitempty"`
	Command             []string `json:"command,omitempty"`
	// Isolation is an extra key: "bwrap" when every attempt ran in the
	// sandbox, "none" when the config opted out.
	Isolation string `json:"isolation,omitempty"`
	// PrepareSHA256 is an extra key: the sha256 of the property's prepare
	// command and environment; PrepareSeconds and BasePrepareSeconds the
	// wall time of the prepare that built the candidate's and the base's
	// prepared layers (in this check or the one whose layer it reused).
	PrepareSHA256      string   `json:"prepare_sha256,omitempty"`
	PrepareSeconds     *float64 `json:"prepare_seconds,omitempty"`
	BasePrepareSeconds *float64 `json:"base_prepare_seconds,omitempty"`
	// BaseProbeResults are the results of the flake probe (extra key): the
	// base seed run flake_probe_runs more times after a SCHEDULER result,
	// looking for a base failure; nil when no probe ran.
	BaseProbeResults []string `json:"base_probe_results,omitempty"`
	// FlakeOrigin says where a SCHEDULER flake comes from (extra key):
	// "base" when this base failed the seed (in a probe, or in an earlier
	// record of the same base and argv template), "new" when the base
	// passed often enough that a flake at the candidate's rate would have
	// shown (NewFlakeConfidence), "unknown" otherwise (flake_probe_runs: 0
	// included).
	FlakeOrigin string `json:"flake_origin,omitempty"`
	// Suite (extra key) is the path of the suite the test comes from;
	// Order (extra key) is the order its batch ran in (SuiteOrder). Both
	// are absent for a property.
	Suite string      `json:"suite,omitempty"`
	Order *SuiteOrder `json:"order,omitempty"`
	// GraderEdits (extra key) are the patch's edits to the test's file
	// and its world (data, conftest, go.mod's go line) that the graded
	// tree took back, listed when the test's base version did not pass
	// on the patch's code: they are in diff_paths too (and those that are
	// not the property file in watch_paths), so the table says
	// CONTAMINATED. Absent otherwise.
	GraderEdits []string `json:"grader_edits,omitempty"`
}

// Flake origins.
const (
	FlakeOriginBase    = "base"
	FlakeOriginNew     = "new"
	FlakeOriginUnknown = "unknown"
)

// NewFlakeConfidence is how likely a flake at the candidate's observed
// rate must have been to show in the base's passes for its origin to be
// "new" rather than "unknown".
const NewFlakeConfidence = 0.9

// NotBaseFlake reports whether a SCHEDULER flake of this origin is not
// known to be the base's: "new" or "unknown". Only a "base" flake is
// frozen by check --freeze-owner; the others need a person's
// 'freeze grant --allow-new-flake', and reject_new_flakes rejects them.
func NotBaseFlake(origin string) bool {
	return origin == FlakeOriginNew || origin == FlakeOriginUnknown
}

// Marshal returns the record's bytes as flakegate stores them.
func (r *RunRecord) Marshal() ([]byte, error) {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// ReplayKey is the identity of a base replay in the replay cache.
type ReplayKey struct {
	BaseSHA    string `json:"base_sha"`
	Name       string `json:"name,omitempty"`
	PassMarker string `json:"pass_marker,omitempty"`
	FailMarker string `json:"fail_marker,omitempty"`
	// FailEvidence is set when a base "fail" needs positive evidence that
	// the test ran and failed (a framework or a fail marker): results
	// cached before that rule are not reused.
	FailEvidence   bool     `json:"fail_evidence,omitempty"`
	PropertySHA256 string   `json:"property_sha256"`
	FixtureSHA256  string   `json:"fixture_sha256"`
	Seed           Seed     `json:"seed"`
	Command        []string `json:"command"`
	Env            Env      `json:"env"`
	// Prepare is the prepare_sha256 of the property's prepare, "" for none.
	Prepare string `json:"prepare,omitempty"`
	// Batch names the batch form the result came from ("go test -json"),
	// "" for a test run alone.
	Batch string `json:"batch,omitempty"`
}

// String returns the cache key: the sha256 of the key's JSON.
func (k ReplayKey) String() string {
	b, _ := json.Marshal(k)
	return SHA256Hex(b)
}
