package flakegate

import "time"

// RunningBatch is one batch process (many triples' tests in one process)
// while it runs, as a check's progress names it (check's
// TestProgressHandler): what runs, how many tests, since when. Its fields
// are not changed once the process started.
type RunningBatch struct {
	// Head says what runs: "pytest, seed 3, candidate attempt 0".
	Head string
	// Tests is the number of tests in the process.
	Tests   int
	Started time.Time
}
