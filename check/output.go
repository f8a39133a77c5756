package check

import (
	"encoding/json"
	"strings"

	sitepkg "github.com/flakegate/flakegate/site"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/config"
	"github.com/flakegate/flakegate/internal/atomicfile"
	"github.com/flakegate/flakegate/internal/shquote"
)

// writeFile replaces path with data, durably and atomically.
func writeFile(path string, data []byte) error {
	if err := atomicfile.WriteFile(path, data, 0o644); err != nil {
		return &flakegate.Error{Code: flakegate.EINTERNAL, Op: "check", Path: path, Message: "cannot write", Err: err}
	}
	return nil
}

// publishFile writes one of a triple's files in the output folder:
// atomically, not durably (atomicfile.Publish). The record's durable
// copy is the store's.
func publishFile(path string, data []byte) error {
	if err := atomicfile.Publish(path, data, 0o644); err != nil {
		return &flakegate.Error{Code: flakegate.EINTERNAL, Op: "check", Path: path, Message: "cannot write", Err: err}
	}
	return nil
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return &flakegate.Error{Code: flakegate.EINTERNAL, Op: "check", Path: path, Message: "cannot encode", Err: err}
	}
	return writeFile(path, append(b, '\n'))
}

func mustJSON(v json.Marshaler) []byte {
	b, err := v.MarshalJSON()
	if err != nil {
		return []byte("null")
	}
	return b
}

// reproduce returns the command line that replays exactly one seed of the
// triple on the candidate commit, in a checkout of its own that nothing
// else resets, with the command of the base config (the one the check
// ran): it keeps reproducing after later checks of other commits. A
// suite's triple names its suite too (--suite): the replay runs the
// batch the test ran in, with the same order seed.
func (c *checker) reproduce(ps *propState, seed flakegate.Seed) string {
	args := []string{"flakegate", "replay",
		"--repo", c.top,
		"--rev", c.candSHA,
		"--config-rev", c.baseSHA}
	if c.cfgPath != config.DefaultPath {
		args = append(args, "--config", c.cfgPath)
	}
	if s := ps.prop.Suite; s != nil {
		// A suite's triple replays its whole batch (replaysuite.go).
		args = append(args, "--suite", s.Path)
	}
	args = append(args, "--property", ps.prop.Path)
	if ps.prop.Name != "" {
		args = append(args, "--name", ps.prop.Name)
	}
	args = append(args, "--seed", seed.String())
	if c.iso != nil && c.iso.Mode == sitepkg.IsolationNone {
		// The base config turned the sandbox off; replay follows a
		// config's mode: none only when its user says so.
		args = append(args, "--sandbox", "none")
	}
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = shquote.Readable(a)
	}
	return strings.Join(q, " ")
}
