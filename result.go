package flakegate

// The results of one attempt (Attempt.Result, a transcript's attempt_end
// event). A record's candidate_result and retry_results hold pass or fail,
// and its base_seed_result also "not_run".
const (
	ResultPass    = "pass"
	ResultFail    = "fail"
	ResultError   = "error"
	ResultTimeout = "timeout"
)
