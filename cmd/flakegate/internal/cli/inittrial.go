package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/check"
	"github.com/flakegate/flakegate/internal/termsafe"

	"github.com/flakegate/flakegate/internal/lazyre"
)

// trialOutcome is what one tried entry did: its candidate attempt's wall
// time (when it ran) and, when it did not pass, why and what to do.
type trialOutcome struct {
	Entry   int
	Seconds float64
	Timed   bool
	Passed  bool
	Cause   string
}

// tryConfig runs a check of the trial config raw (initconfig.RenderTrial
// of the entries at indexes) on a commit of the work tree as it would be
// committed (git add -A) with that file, as candidate and base: the prepare once, then one attempt of each entry
// (and its base replay), in the sandbox, exactly as check will run the
// written file. The ledger, records and output are thrown away. An error
// is a cause that stops every entry (no commit, no sandbox, a command not
// found, a repository git cannot commit). With dryRun the check keeps no
// timings.
func tryConfig(ctx context.Context, ios *IO, root string, raw []byte, indexes []int, dryRun bool) ([]trialOutcome, error) {
	sum, err := trialCheck(ctx, ios, root, raw, "flakegate init: trial of the config", dryRun)
	if err != nil {
		msg := err.Error()
		if h := flakegate.ErrorHint(err); h != "" {
			msg += "; fix: " + h
		}
		return nil, fmt.Errorf("%s", msg)
	}
	var out []trialOutcome
	for i, r := range sum.Results {
		if i >= len(indexes) {
			break
		}
		o := trialOutcome{Entry: indexes[i], Passed: r.Label == flakegate.Pass}
		for _, a := range r.Attempts {
			if a.Side == "candidate" && a.Index == 0 && (a.Result == "pass" || a.Result == "fail") {
				o.Seconds, o.Timed = a.WallSeconds, true
			}
		}
		if !o.Passed {
			o.Cause = trialCause(r)
		}
		out = append(out, o)
	}
	return out, nil
}

// trialNotes passes on the trial check's notes that tell a user what
// the check fetched for it ("Go modules: ..."); its other lines are the
// trial's own business.
type trialNotes struct{ w io.Writer }

func (trialNotes) Start(int)             {}
func (trialNotes) Done(flakegate.Result) {}
func (trialNotes) Finish()               {}
func (n trialNotes) Note(_, msg string) {
	if strings.HasPrefix(msg, "Go modules: ") {
		fmt.Fprintf(n.w, "  %s\n", termsafe.Line(msg))
	}
}

var noModuleRe = lazyre.New(`No module named '?([A-Za-z0-9_.]+)'?`)

// trialCause says in one line why a tried entry did not pass, and the
// fix.
func trialCause(r flakegate.Result) string {
	tail := ""
	for _, a := range r.Attempts {
		if a.Side == "candidate" && a.Index == 0 {
			tail = a.OutputTail
		}
	}
	why := r.Reason
	if why == "" {
		why = string(r.Label)
	}
	if m := noModuleRe.FindStringSubmatch(tail); m != nil {
		return fmt.Sprintf("%s: the test cannot import %s: %s; fix: install it for the interpreter the run names (apt-get install python3-%s, or pip install it into an interpreter outside $HOME), or add the folder it lives in to PYTHONPATH in run",
			r.ID(), m[1], oneLine(why, 300), strings.ToLower(strings.SplitN(m[1], ".", 2)[0]))
	}
	if strings.Contains(tail, "ERROR: not found:") {
		return fmt.Sprintf("%s: pytest did not collect it: %s; fix: a module-level skip (pytest.importorskip of a package this interpreter lacks) or a renamed test: install what the module needs, or remove the entry", r.ID(), oneLine(why, 300))
	}
	if strings.Contains(why, "prepare failed") {
		return fmt.Sprintf("%s: %s; fix: run the prepare's command by hand in a fresh clone, offline unless its network is true, and make it work (or remove the prepare when nothing must be built)", r.ID(), oneLine(why, 400))
	}
	if m := check.GoMissingModule(tail); m != "" {
		return fmt.Sprintf("%s: the module cache lacks %s, so the test never ran; fix: the \"Go modules:\" line above says why flakegate could not download it "+
			"(as root it downloads what go.sum names); else run go mod download in the module, and flakegate copies what matches go.sum from your module cache", r.ID(), m)
	}
	if strings.Contains(tail, "missing go.sum entry") {
		return fmt.Sprintf("%s: go.sum lacks a module the test needs: %s; fix: run go mod tidy and commit go.sum (the attempts build offline, from what go.sum names)", r.ID(), oneLine(why, 300))
	}
	switch r.Label {
	case flakegate.Property:
		return fmt.Sprintf("%s: fails with seed %s at HEAD on both sides: %s; fix: make it pass at HEAD, or remove the entry", r.ID(), r.Seed, oneLine(why, 300))
	case flakegate.Budget:
		return fmt.Sprintf("%s: %s; fix: raise its wall_budget, or flakegate init --measure", r.ID(), oneLine(why, 300))
	}
	return fmt.Sprintf("%s: %s; fix: run its command by hand in the repository (flakegate check prints a reproduce line) and make it pass; flakegate doctor shows what the sandbox sees", r.ID(), oneLine(why, 300))
}
