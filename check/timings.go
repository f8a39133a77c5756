// The timings a plan estimates from: the seconds one process of each
// property or suite batch took, kept under the git common directory by
// every check (and by flakegate init's trial), with the last check's
// setup and Go cache fill.

package check

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"path"
	"path/filepath"
	"sync"
	"time"

	sitepkg "github.com/flakegate/flakegate/site"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/internal/atomicfile"
	"github.com/flakegate/flakegate/transcript"
)

// TimingsKept says what a check keeps of its timings.
type TimingsKept int

// What a check keeps: everything (a check), the seconds per process only
// (init's trials, whose setup and Go cache fill are not a check's: their
// trees and cache are new), or nothing (init --dry-run).
const (
	KeepAllTimings TimingsKept = iota
	KeepProcessTimings
	KeepNoTimings
)

// TimingsFile is where the timings are kept, in the flakegate folder of
// the git common directory.
const TimingsFile = "measured.json"

// Timings are the measured seconds per process by ProcessKey, where they
// come from, and the last check's own times.
type Timings struct {
	// Source says who measured them last: "the check of base
	// 1a2b3c4d5e6f, 2026-12-06 14:00 UTC" or flakegate init's trial.
	Source string `json:"source"`
	// Seconds is one process of either side (flakegate init's trial keeps
	// its candidate attempt's); Candidate and Base are a candidate's and
	// a base replay's process, which differ: a candidate's go test
	// compiles what the patch changed, the base's finds it built by the
	// fill.
	Seconds   map[string]float64 `json:"seconds"`
	Candidate map[string]float64 `json:"candidate,omitempty"`
	Base      map[string]float64 `json:"base,omitempty"`
	// Check is what the last check took besides its attempts.
	Check *CheckTimes `json:"check,omitempty"`
}

// CheckTimes are what a check took before its first attempt and in all.
type CheckTimes struct {
	Base string `json:"base"`
	At   string `json:"at"`
	// Setup is the time from the check's start to its first triple
	// (worktrees, the suites' listing, digests, seeds) without the fill.
	Setup float64 `json:"setup_seconds"`
	// Fill is the last fill of the Go build cache that ran (once per base
	// commit); FillBase the base it filled from.
	Fill     float64 `json:"fill_seconds,omitempty"`
	FillBase string  `json:"fill_base,omitempty"`
	Wall     float64 `json:"wall_seconds"`
	Workers  int     `json:"workers"`
	// Replays says the check stored its base results in the replay cache
	// (sandboxed, without --no-replay-cache): a later check of Base reads
	// them instead of running the base.
	Replays bool `json:"replays_cached"`
}

func timingsPath(common string) string { return filepath.Join(common, "flakegate", TimingsFile) }

// ReadTimings reads the timings kept in common: none when there are none,
// or when the file does not read back (it is measured again).
func ReadTimings(common string) Timings {
	var t Timings
	b, err := os.ReadFile(timingsPath(common))
	if err != nil || json.Unmarshal(b, &t) != nil {
		return Timings{}
	}
	for k, v := range t.Seconds {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			delete(t.Seconds, k)
		}
	}
	return t
}

// KeepTimings merges secs (seconds per process by ProcessKey) into the
// timings kept in common, with source, and the check's own times when
// ct is not nil.
// The sides kept of those keys are dropped: they are older.
func KeepTimings(common, source string, secs map[string]float64, ct *CheckTimes) error {
	return keepTimings(common, source, Timings{Seconds: secs}, ct, true)
}

// keepTimings merges m's three maps into the kept timings; with
// dropSides a key of m.Seconds drops the sides m does not have.
func keepTimings(common, source string, m Timings, ct *CheckTimes, dropSides bool) error {
	t := ReadTimings(common)
	if t.Seconds == nil {
		t.Seconds = map[string]float64{}
	}
	for _, mp := range []*map[string]float64{&t.Candidate, &t.Base} {
		if *mp == nil {
			*mp = map[string]float64{}
		}
	}
	for k, v := range m.Seconds {
		t.Seconds[k] = v
		if _, ok := m.Candidate[k]; !ok && dropSides {
			delete(t.Candidate, k)
		}
		if _, ok := m.Base[k]; !ok && dropSides {
			delete(t.Base, k)
		}
	}
	maps.Copy(t.Candidate, m.Candidate)
	maps.Copy(t.Base, m.Base)
	if len(m.Seconds) > 0 {
		t.Source = source
	}
	if ct != nil {
		if ct.Fill == 0 && t.Check != nil {
			// No fill ran (the base was filled before): keep the last one
			// that did, for a plan of another base.
			ct.Fill, ct.FillBase = t.Check.Fill, t.Check.FillBase
		}
		t.Check = ct
	}
	b, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(timingsPath(common)), 0o755); err != nil {
		return err
	}
	return atomicfile.WriteFile(timingsPath(common), b, 0o644)
}

// ProcessKey names what one process of p runs, for its timing: the
// property (its ID, as flakegate init keeps it), or for a suite's test
// the batch it runs in: go's package (its file's folder) or the whole
// suite (pytest, vitest, jest run a suite as one process per seed).
func ProcessKey(p *config.Property) string {
	if p.Suite == nil {
		return p.ID()
	}
	if p.Suite.Framework == config.FrameworkGo {
		return "suite " + p.Suite.Path + " " + path.Dir(p.Path)
	}
	return "suite " + p.Suite.Path
}

// fillRan is how long a fill must take to count as one that ran (a base
// filled before returns at once).
const fillRan = time.Second

// processTimes are the wall times of a check's attempt processes, by
// ProcessKey and side: a lone triple's attempt, or a batch's process,
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
	k := ProcessKey(p)
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

// keepTimings keeps what this check measured: per ProcessKey the mean
// seconds of a candidate's and of a base replay's process (a side this
// check did not run, the base's from the replay cache, keeps its earlier
// timing), and the check's setup, fill and wall time.
func (c *checker) keepTimings(setup, fill, wall time.Duration) {
	if c.opts.Timings == KeepNoTimings {
		return
	}
	m := Timings{Seconds: map[string]float64{}, Candidate: map[string]float64{}, Base: map[string]float64{}}
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
	ct := &CheckTimes{Base: c.baseSHA, At: now.Format(time.RFC3339), Setup: attempt.Seconds(setup), Wall: attempt.Seconds(wall), Workers: c.cfg.Workers,
		Replays: !c.opts.NoReplayCache && c.iso.Mode == sitepkg.IsolationBwrap}
	if fill >= fillRan {
		ct.Fill, ct.FillBase = attempt.Seconds(fill), c.baseSHA
	}
	source := fmt.Sprintf("the check of base %s, %s", flakegate.ShortSHA(c.baseSHA), now.Format("2006-01-02 15:04 UTC"))
	if c.opts.Timings == KeepProcessTimings {
		ct, source = nil, fmt.Sprintf("%s, %s", c.opts.By, now.Format("2006-01-02 15:04 UTC"))
	}
	if err := keepTimings(c.common, source, m, ct, false); err != nil {
		c.say("cannot keep this check's timings for check --plan: " + err.Error())
	}
}
