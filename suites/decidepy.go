// Impact of a pytest suite (decide.go): the base's session log, from one
// run of the whole suite on the base with impact's audit hook, kept
// between checks under the key of the base's kept listing (the base
// tree, the interpreter and what is installed outside the tree); the two
// checkouts compared; the pytest rule deciding each test file. All of
// the suite's tests run in one pytest process per seed, so the budget's
// process is the suite: its start is taken as at most a second of the
// session's time, and each test's as an even share of the rest.

package suites

import (
	"bytes"
	"context"
	"strings"
	"time"

	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/impact"
)

// decidePytest runs impact's pytest rule for suite s.
func (e *Env) decidePytest(ctx context.Context, s *config.Suite, list *List) (*Impact, string, error) {
	kept, why, err := e.baseSession(ctx, s, list)
	if err != nil || why != "" {
		return nil, why, err
	}
	trees, why, err := e.compareTrees(ctx)
	if err != nil || why != "" {
		return nil, why, err
	}
	files, gated, _ := GatedFiles(s, list)
	verdicts, err := impact.Pytest(impact.PytestInput{Trees: trees, Tests: files, Session: kept.Session})
	if err != nil {
		why, err := decideErr(ctx, err)
		return nil, why, err
	}
	return FilePlan(s, list, verdicts, time.Duration(kept.Seconds*float64(time.Second)), gated)
}

// SessionTargets is what the base's session of pytest suite s runs: the
// suite's folder when the check gates every test the base lists, else
// the node ids it gates. A test the check never runs (excluded by the
// suite, or skipped on the base) is then not in the session either, so
// what it reads or starts (a test that runs `uname`) does not make every
// change reach the tests the check does run; their batches never hold
// it.
func SessionTargets(s *config.Suite, list *List) []string {
	var ids []string
	for _, t := range list.Tests {
		if list.Gated(s, t) {
			ids = append(ids, t.File+"::"+t.Name)
		}
	}
	if len(ids) == 0 || len(ids) == len(list.Tests) {
		return []string{s.Path}
	}
	return ids
}

// baseSession is the base's session log of pytest suite s: kept from an
// earlier check of the same base and interpreter, or run now (the whole
// suite once, on the base tree, in the sandbox over the prepare's layer).
// why says why there is none ("" when there is).
func (e *Env) baseSession(ctx context.Context, s *config.Suite, list *List) (*KeptSession, string, error) {
	targets := SessionTargets(s, list)
	file := ""
	if list.Key != "" {
		file = SessionPath(e.Common, list.Key+"\x00"+strings.Join(targets, "\x00"))
		if k, ok := ReadSession(file); ok {
			Touch(file)
			return k, "", nil
		}
	}
	argv := impact.PytestSessionArgv(PytestArgv(s, list.Python), targets...)
	if argv == nil {
		return nil, "the suite's pytest command has no -m pytest", nil
	}
	started := time.Now()
	_, out, err := e.run(ctx, e.Trees.Workers[0].Base, s, argv)
	if err != nil {
		why, err := decideErr(ctx, err)
		return nil, why, err
	}
	took := time.Since(started)
	// A test that fails on the base still ends the session: its log is
	// whole. One that did not reach the end (killed, over its budget) is
	// not known.
	session, err := impact.ReadPytestSession(bytes.NewReader(out))
	if err != nil {
		return nil, "the base's session log: " + err.Error() + ": " + LastLines(out, 2), nil
	}
	k := &KeptSession{Session: session, Seconds: took.Seconds()}
	if file != "" {
		WriteSession(file, k) // best effort: the next check runs it again
	}
	return k, "", nil
}
