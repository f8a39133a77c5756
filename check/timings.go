// What a check measures for a plan (package plan keeps it): the seconds
// one process of each property or suite batch took, and the check's own
// setup, Go cache fill and wall time.

package check

import (
	"fmt"
	"math"
	"sync"
	"time"

	sitepkg "github.com/flakegate/flakegate/site"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/plan"
	"github.com/flakegate/flakegate/transcript"
)

// fillRan is how long a fill must take to count as one that ran (a base
// filled before returns at once).
const fillRan = time.Second

// processTimes are the wall times of a check's attempt processes, by
// plan.ProcessKey and side: a lone triple's attempt, or a batch's process,
// from the tree's acquisition to its release.
type processTimes struct {
	mu   sync.Mutex
	sums map[string]*[4]float64 // candidate seconds, count, base seconds, count
}

// timeProcess counts one process of p on side that began at start
// (call it deferred). Probes are the base's, and not a passing check's.
func (c *checker) timeProcess(p *config.Property, side string, start time.Time) {
	if side != transcript.SideCandidate && side != transcript.SideBase {
		return
	}
	took := time.Since(start).Seconds()
	t := &c.times
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.sums == nil {
		t.sums = map[string]*[4]float64{}
	}
	k := plan.ProcessKey(p)
	if t.sums[k] == nil {
		t.sums[k] = new([4]float64)
	}
	i := 0
	if side == transcript.SideBase {
		i = 2
	}
	t.sums[k][i] += took
	t.sums[k][i+1]++
}

// keepTimings keeps what this check measured: per plan.ProcessKey the mean
// seconds of a candidate's and of a base replay's process (a side this
// check did not run, the base's from the replay cache, keeps its earlier
// timing), and the check's setup, fill and wall time.
func (c *checker) keepTimings(setup, fill, wall time.Duration) {
	if c.opts.Timings == plan.KeepNoTimings {
		return
	}
	m := plan.Timings{Seconds: map[string]float64{}, Candidate: map[string]float64{}, Base: map[string]float64{}}
	c.times.mu.Lock()
	for k, v := range c.times.sums {
		mean := func(sum, n float64) float64 { return math.Round(sum/n*100) / 100 }
		m.Seconds[k] = mean(v[0]+v[2], v[1]+v[3])
		if v[1] > 0 {
			m.Candidate[k] = mean(v[0], v[1])
		}
		if v[3] > 0 {
			m.Base[k] = mean(v[2], v[3])
		}
	}
	c.times.mu.Unlock()
	now := c.now().UTC()
	ct := &plan.CheckTimes{Base: c.baseSHA, At: now.Format(time.RFC3339), Setup: attempt.Seconds(setup), Wall: attempt.Seconds(wall), Workers: c.cfg.Workers,
		Replays: !c.opts.NoReplayCache && c.iso.Mode == sitepkg.IsolationBwrap}
	if fill >= fillRan {
		ct.Fill, ct.FillBase = attempt.Seconds(fill), c.baseSHA
	}
	source := fmt.Sprintf("the check of base %s, %s", flakegate.ShortSHA(c.baseSHA), now.Format("2006-01-02 15:04 UTC"))
	if c.opts.Timings == plan.KeepProcessTimings {
		ct, source = nil, fmt.Sprintf("%s, %s", c.opts.By, now.Format("2006-01-02 15:04 UTC"))
	}
	if err := plan.KeepSides(c.common, source, m, ct, false); err != nil {
		c.say("cannot keep this check's timings for check --plan: " + err.Error())
	}
}
