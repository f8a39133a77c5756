// The timings a plan estimates from: the seconds one process of each
// property or suite batch took, kept under the git common directory by
// every check (and by flakegate init's trial), with the last check's
// setup and Go cache fill.

package plan

import (
	"encoding/json"
	"maps"
	"math"
	"os"
	"path"
	"path/filepath"

	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/internal/atomicfile"
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
	return KeepSides(common, source, Timings{Seconds: secs}, ct, true)
}

// KeepSides merges m's three maps into the kept timings; with
// dropSides a key of m.Seconds drops the sides m does not have.
func KeepSides(common, source string, m Timings, ct *CheckTimes, dropSides bool) error {
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
