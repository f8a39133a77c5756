// What the base's go suites read, kept by the fill. The fill runs each go
// suite once on the base (trusted code); with a test log (UseSuites'
// testlog) each test binary's log of the files it opened and the
// variables it read follows its output, and the go command lists the
// tree in the same sandbox, so the paths are read against the tree as
// the tests saw it and kept repository-relative. The check's impact
// (package impact's go rule) reads them back with BaseReads.

package gocache

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/attempt/sandbox"
	"github.com/flakegate/flakegate/impact"
	"github.com/flakegate/flakegate/internal/atomicfile"
)

// maxTestlog bounds the output a fill's suite run may keep for its test
// logs; a run that prints more keeps none (every test is affected).
const maxTestlog = 256 << 20

// listBudget bounds each go env and go list the fill runs to read a log.
const listBudget = 5 * time.Minute

// BaseReads are what the base's go suites read and took, by the folder
// argument of each package ("./p", "."): only packages whose run passed
// are named.
type BaseReads struct {
	Reads   map[string]*impact.GoReads `json:"reads"`
	Seconds map[string]float64         `json:"seconds"`
}

// readBaseRun reads the output of one fill run with a test log: go env
// and go list of its pattern run in the same sandbox and tree, so that
// the log's paths are read against the tree the tests saw.
func readBaseRun(ctx context.Context, sb sandbox.Sandbox, env []string, tree string, run fillRun, logged *attempt.Bounded) (*BaseReads, error) {
	if logged.Over {
		return nil, fmt.Errorf("the run printed more than %d MiB", maxTestlog>>20)
	}
	runner := func(ctx context.Context, argv []string) ([]byte, error) {
		out := &attempt.Bounded{Max: maxTestlog}
		o := attempt.Run(ctx, attempt.Command{Argv: argv, Dir: tree, Env: env, WallBudget: listBudget, Sandbox: &sb, NoTestMarkers: []string{}, Output: out})
		if o.Result != attempt.Pass {
			return nil, fmt.Errorf("%s: %s %s: %s", argv[1], o.Result, o.Reason, Failure(o.Tail, 2))
		}
		return out.Bytes(), nil
	}
	t, err := impact.ListGo(ctx, runner, run.pattern)
	if err != nil {
		return nil, err
	}
	reads, err := impact.ReadGoTestlogs(bytes.NewReader(logged.Bytes()), t)
	if err != nil {
		return nil, err
	}
	took, err := impact.ReadGoElapsed(bytes.NewReader(logged.Bytes()), t)
	if err != nil {
		return nil, err
	}
	r := &BaseReads{Reads: reads, Seconds: map[string]float64{}}
	for unit, d := range took {
		r.Seconds[unit] = d.Seconds()
	}
	return r, nil
}

// mergeBaseReads joins the reads of several suites' runs (nil for none).
// A package two runs name keeps the union of what it read.
func mergeBaseReads(runs []*BaseReads) *BaseReads {
	if len(runs) == 0 {
		return nil
	}
	out := &BaseReads{Reads: map[string]*impact.GoReads{}, Seconds: map[string]float64{}}
	for _, r := range runs {
		for unit, g := range r.Reads {
			if had := out.Reads[unit]; had != nil {
				g = impact.MergeGoReads(map[string]*impact.GoReads{unit: had}, map[string]*impact.GoReads{unit: g})[unit]
			}
			out.Reads[unit] = g
		}
		for unit, s := range r.Seconds {
			out.Seconds[unit] = max(out.Seconds[unit], s)
		}
	}
	return out
}

// readsFile is where the fill from key keeps what the base's tests read.
func (gc *Caches) readsFile(key string) string {
	h := sha256.Sum256([]byte(key))
	return filepath.Join(gc.dir, "reads-"+hex.EncodeToString(h[:8])+".json")
}

// writeBaseReads records r for the fill's key (nothing for nil).
func (gc *Caches) writeBaseReads(r *BaseReads) error {
	if r == nil {
		return nil
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(gc.readsFile(gc.FillKey()), b, 0o600)
}

// BaseReads returns what the fill from key recorded of the base's go
// suites' reads, and whether it recorded them (a fill without a test log,
// or one whose log could not be read, did not).
func (gc *Caches) BaseReads(key string) (*BaseReads, bool) {
	if gc == nil {
		return nil, false
	}
	b, err := os.ReadFile(gc.readsFile(key))
	if err != nil {
		return nil, false
	}
	var r BaseReads
	if json.Unmarshal(b, &r) != nil || r.Reads == nil {
		return nil, false
	}
	for unit, g := range r.Reads {
		if g == nil || g.Paths == nil || g.Env == nil {
			delete(r.Reads, unit) // not known: affected
		}
	}
	return &r, true
}
