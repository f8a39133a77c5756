// Package backoff computes the delays between retries of a failed call.
package backoff

import "time"

// Limits bound a retry schedule. The property test reads them from the
// fixture testdata/limits.json.
type Limits struct {
	MaxRetries int `json:"max_retries"`
	CapMS      int `json:"cap_ms"`
}

// Schedule returns the delay before each of retries retries: doubling from
// base, never more than limit.
func Schedule(retries int, base, limit time.Duration) []time.Duration {
	delays := make([]time.Duration, retries)
	d := base
	for i := range delays {
		if d > limit {
			d = limit
		}
		delays[i] = d
		d *= 2
	}
	return delays
}
