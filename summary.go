package flakegate

// Verdicts of a check.
const (
	VerdictPass   = "pass"
	VerdictReject = "reject"
)

// Result is one triple's line of the check summary (DESIGN.md, --json).
type Result struct {
	PropertyPath  string    `json:"property_path"`
	Seed          Seed      `json:"seed"`
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
	// Isolation is how the attempts ran: "bwrap" or "none" ("" for a
	// skipped triple, whose attempts ran in an earlier check).
	Isolation string `json:"isolation,omitempty"`
}

// Summary is the --json output of check.
type Summary struct {
	Verdict   string `json:"verdict"`
	Base      string `json:"base"`
	Candidate string `json:"candidate"`
	// Isolation is how the check's attempts ran: "bwrap" or "none".
	Isolation string   `json:"isolation,omitempty"`
	Results   []Result `json:"results"`
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
