package flakegate

// SuiteOrder is the record's extra key "order" for a triple of a suite:
// what order its batch ran in, so that replay can run the same one.
//
//   - go: the test binary runs the package's tests in the order -shuffle=S
//     makes of the list `go test -list` prints (the base's test files, so
//     both sides have the same list): Flags holds -shuffle=S (and
//     -rapid.seed=S where the package uses rapid), Tests and TestsSHA256
//     count and digest that list (names joined by "\n").
//
//   - pytest: the node ids are on the command line in the order the seed
//     decides (sorted by the sha256 of the seed, a NUL and the node id):
//     Tests and TestsSHA256 count and digest them in that order; Flags
//     holds --hypothesis-seed=S where Hypothesis is installed.
//
//   - vitest and jest: the framework shuffles each test file's tests with
//     the seed (vitest --sequence.shuffle --sequence.seed=S, jest
//     --randomize --seed=S, in Flags); File is the test's file, and Tests
//     and TestsSHA256 count and digest the file's tests as the base's
//     list names them (the list the shuffle permutes).
//
// The batch's argv itself is in the transcript (attempt_end "batch").
type SuiteOrder struct {
	Framework   string   `json:"framework"`
	Seed        Seed     `json:"seed"`
	Flags       []string `json:"flags,omitempty"`
	Package     string   `json:"package,omitempty"`
	File        string   `json:"file,omitempty"`
	Tests       int      `json:"tests"`
	TestsSHA256 string   `json:"tests_sha256"`
}

// NewTest is one test a candidate adds to a suite (absent from the
// base's list): not a triple, since no base can replay it, but run
// new_test_runs times on the candidate (summary "new_tests").
type NewTest struct {
	// Suite is the suite's path as the config writes it.
	Suite string `json:"suite"`
	// Path is the test's file, Name its name (go) or node id after
	// "path::" (pytest).
	Path string `json:"path"`
	Name string `json:"name"`
	// Runs is how many runs were asked for (new_test_runs), Passed how
	// many of them passed; Results are the runs' results in order
	// ("pass", "fail", "error", "timeout").
	Runs    int      `json:"runs"`
	Passed  int      `json:"passed"`
	Results []string `json:"results,omitempty"`
	// Reason says why a run was not a pass or a fail, if one was not.
	Reason string `json:"reason,omitempty"`
}

// Flaky reports whether the new test failed (or did not pass) a run.
func (t NewTest) Flaky() bool { return t.Passed < t.Runs }
