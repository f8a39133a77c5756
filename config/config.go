// Package config reads flakegate.yaml: the properties a check runs, their
// seeds and argv templates, the retry cap, the number of workers and the
// freeze policy. check reads the file at the base revision only.
//
//	version: 1                  required; the only version
//	retry_cap: 2                retries after a failed first run (0..100; default 2)
//	workers: 1                  triples run at once (1..64; default 1)
//	random_seeds: 0             seeds drawn per property and candidate (0..100; default 0)
//	watch: ["tools/ci/**"]      optional; globs every property is graded against
//	flake_probe_runs: 3         base runs looking for a base failure of a SCHEDULER
//	                            triple (0..100; default 3; 0 turns the probe off)
//	reject_new_flakes: false    optional; a "new" flake makes the check exit 1
//	ledger: {key_env: FLAKEGATE_LEDGER_KEY}   optional; the variable holding the key
//	                            that authenticates a PostgreSQL ledger's rows
//	freeze:
//	  expires_after_runs: 20    runs a granted freeze lasts (1..100; default 20)
//	sandbox:                    optional; see Sandbox (default mode: auto)
//	prepare: {run: [go, build, ./...], budget: 10m, network: false}   optional; see Prepare
//	suites:                     optional; whole suites, see Suite (suite.go)
//	new_test_runs: 5            runs of each test a candidate adds to a suite (1..100)
//	reject_flaky_new_tests: false   optional; a new test that failed a run makes the check exit 1
//	impact: true                optional (default true); the tests of suites the patch cannot
//	                            reach are not run again, and the reachable ones get more seeds
//	properties:                 required unless suites are there, at least one
//	  - path: tests/props/test_retry_budget.py   required; the property file (watched)
//	    name: test_budget                        optional; the test id in the file ({name})
//	    fixture: tests/fixtures/retry            optional; file or folder (digested)
//	    generator: tools/gen_retry_fixture.py    optional; the fixture generator (watched)
//	    seeds: [1400, 1401, "nightly-3"]         integers (any size) or strings; required
//	                                             unless random_seeds draws some
//	    random_seeds: 2                          optional; overrides the global count
//	    watch: ["tests/helpers/**"]              optional; more globs graded against
//	    pass_marker: "^ok "                      optional; a regexp (no placeholders) a line of
//	                                             a passing output must match
//	    fail_marker: "^FAIL: "                   optional; a regexp (no placeholders) a line of
//	                                             a failing output (exit 1) must match
//	    run: [pytest, -q, "{path}", "--hypothesis-seed={seed}"]   required; argv, no shell
//	    wall_budget: 60s                         required; per attempt ("90s", "1m30s", or seconds)
//	    samples: 200                             optional; required if run uses {samples}
//	    prepare: {run: [...]}                    optional; replaces the top-level prepare
//	    flake_probe_runs: 5                      optional; overrides the global count
//	    framework: pytest                        optional; go, pytest, vitest, jest or none
//	                                             (default: from run, else from the path)
//	    batch: true                              optional; false keeps each triple in a process
//	                                             of its own (default true, false for none)
//
// A property is one test: entries may share a path (and a fixture) when
// their names differ; two entries with the same path and name are
// refused. Without a fixture a property's fixture digest is
// NoFixtureSHA256 on both sides, so it can never be FIXTURE by absence.
//
// Watch globs are repo-relative; "*" and "?" match inside one path
// segment, "**" matches any number of segments. A candidate diff path
// that matches one of them, the property file, the generator or a
// framework default (see check) makes the property's triples
// CONTAMINATED.
//
// The reader is strict: an unknown key, a duplicate key, a wrong type, a
// null value, YAML anchors or tags, a path that is absolute, climbs out of
// the repository or enters .git, and a seed or path that starts with '-'
// (it could be read as an option) are errors naming the file, the key and
// the line. An unquoted number is an integer seed, a quoted one a string
// seed: 1402 and "1402" are different triples, as in records. Placeholders
// in run are {path}, {seed}, {samples} and {fixture}, replaced whole or
// inside an argument; the program (run[0]) is fixed.
package config

import (
	"fmt"
	"path"
	"regexp"
	"strings"
	"time"

	"github.com/flakegate/flakegate"
)

// DefaultPath is where check looks for the config, relative to the repo root.
const DefaultPath = "flakegate.yaml"

// Defaults for optional keys.
const (
	DefaultRetryCap         = 2
	DefaultWorkers          = 1
	DefaultExpiresAfterRuns = 20
	DefaultRandomSeeds      = 0
	DefaultFlakeProbeRuns   = 3
)

// NoFixtureSHA256 is the fixture digest recorded on both sides for a
// property without a fixture: the sha256 of the 40 bytes "flakegate: this
// property has no fixture\n" (printf 'flakegate: this property has no
// fixture\n' | sha256sum). Both sides carry the same value, so the table
// never says FIXTURE for a fixture that is absent by design, and it is an
// ordinary digest in records, freezes and the replay cache.
const NoFixtureSHA256 = "569ad7c690f78568c7a3999e398c71580076c7798edc6736eb944c4ef366e00e"

// Limits that keep a typo from turning into a runaway check.
const (
	MaxRetryCap    = 100
	MaxWorkers     = 64
	MaxWallBudget  = 24 * time.Hour
	MaxRandomSeeds = 100
	MaxNameLength  = 512
	// MaxFlakeProbeRuns bounds flake_probe_runs.
	MaxFlakeProbeRuns = 100
)

// Config is a validated flakegate.yaml.
type Config struct {
	// Name is the file name used in errors (the repo-relative path).
	Name     string
	Version  int
	RetryCap int
	Workers  int
	Freeze   FreezePolicy
	// RandomSeeds is the global count of drawn seeds per property.
	RandomSeeds int
	// Watch are the global watch globs (every property's).
	Watch   []string
	Sandbox Sandbox
	// Prepare is the top-level prepare, nil for none (see Prepare).
	Prepare    *Prepare
	Properties []Property
	// FlakeProbeRuns is the global flake_probe_runs: how many more times a
	// SCHEDULER triple's base seed runs, looking for a base failure.
	FlakeProbeRuns int
	// RejectNewFlakes makes a check with a "new" flake exit 1.
	RejectNewFlakes bool
	// Ledger is the ledger block: where the runner's ledger key is.
	Ledger LedgerPolicy
	// Suites are the suites: entries (suite.go); a check turns each into
	// one property per test the base lists.
	Suites []Suite
	// NewTestRuns is new_test_runs: how many times each test the
	// candidate adds to a suite runs (default 5).
	NewTestRuns int
	// RejectFlakyNewTests makes a check exit 1 when a new test failed a run.
	RejectFlakyNewTests bool
	// Impact is impact (default true): a suite's tests that nothing of the
	// patch can reach are not run again (their base result stands), and
	// the tests it can reach get the runs saved (package impact;
	// suites/decide.go). false runs every test, every seed, every check.
	Impact bool
}

// DefaultLedgerKeyEnv is the variable that holds the ledger key unless
// ledger.key_env names another.
const DefaultLedgerKeyEnv = "FLAKEGATE_LEDGER_KEY"

// LedgerPolicy is the ledger block of the config.
type LedgerPolicy struct {
	// KeyEnv names the environment variable holding the ledger key that
	// authenticates a PostgreSQL ledger's rows (default
	// FLAKEGATE_LEDGER_KEY). The value never reaches a test command.
	KeyEnv string
}

// FreezePolicy is the freeze block of the config.
type FreezePolicy struct {
	// ExpiresAfterRuns is the run count a granted freeze starts with.
	ExpiresAfterRuns int
}

// Property is one entry of properties: a property file, its fixture, its
// seeds and the argv template that runs one seed.
type Property struct {
	// Path is the property file, repo-relative and cleaned (watched).
	Path string
	// Name is the test id inside the file ("" when the entry has none).
	Name string
	// Fixture is a file or folder, repo-relative and cleaned (digested);
	// "" when the property has none.
	Fixture string
	// Generator is the fixture generator, "" when there is none (watched).
	Generator string
	Seeds     []flakegate.Seed
	// Run is the argv template; placeholders {path}, {seed}, {samples},
	// {fixture} are replaced whole or inside an argument.
	Run        []string
	WallBudget time.Duration
	// Samples is the value of {samples}; 0 when the key is absent.
	Samples int
	// RandomSeeds is how many seeds a check draws for this property (the
	// property's own key, else the global one).
	RandomSeeds int
	// Watch are the property's own watch globs (cleaned).
	Watch []string
	// PassMarker, if set, is a regexp an exit 0 must print to be a pass.
	PassMarker *regexp.Regexp
	// FailMarker, if set, is a regexp an exit 1 must print to be a
	// failure (else the attempt is an error: the test did not run).
	FailMarker *regexp.Regexp
	// FlakeProbeRuns is the property's flake_probe_runs (its own key, else
	// the global one); 0 turns the probe off.
	FlakeProbeRuns int
	// Index is the entry's position in properties.
	Index int
	// Prepare is the property's prepare: its own block, else the top
	// level's; nil for none.
	Prepare *Prepare
	// Framework is one of FrameworkGo, FrameworkPytest, FrameworkVitest,
	// FrameworkJest and FrameworkNone, never "" after Load: the key
	// framework:, else what run runs (FrameworkOfArgv), else what the
	// property file says (FrameworkOfFile). Watching and evidence follow it.
	Framework string
	// FrameworkSet says the entry has its own framework: key.
	FrameworkSet bool
	// Batch says the property's triples may share a process with others
	// (batch:; default true for every framework but none).
	Batch bool
	// Suite is the suite a check made this property from (one test the
	// base lists), nil for an entry of properties.
	Suite *Suite
}

// errorf returns an EINVALID error naming the file and the key.
func errorf(file, key string, line int, format string, args ...any) *flakegate.Error {
	where := file
	if line > 0 {
		where = fmt.Sprintf("%s:%d", file, line)
	}
	msg := fmt.Sprintf(format, args...)
	if key != "" {
		msg = key + ": " + msg
	}
	return &flakegate.Error{
		Code:    flakegate.EINVALID,
		Op:      "config",
		Path:    where,
		Message: msg,
		Hint:    "fix " + file + " on the base revision (every key is in docs/configuration.md)",
	}
}

// CleanRepoPath checks that p is a repo-relative path that stays inside the
// repository and cannot be read as an option, and returns it cleaned.
func CleanRepoPath(p string) (string, error) {
	switch {
	case p == "":
		return "", fmt.Errorf("empty path")
	case strings.ContainsAny(p, "\x00\n\r"):
		return "", fmt.Errorf("path %q holds a control character", p)
	case strings.HasPrefix(p, "/"):
		return "", fmt.Errorf("path %q is absolute; want a path relative to the repository root", p)
	case strings.Contains(p, `\`):
		return "", fmt.Errorf("path %q holds a backslash; use /", p)
	}
	c := path.Clean(p)
	if c == "." {
		return "", fmt.Errorf("path %q names the repository root", p)
	}
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", fmt.Errorf("path %q climbs out of the repository", p)
	}
	if strings.HasPrefix(c, "-") {
		return "", fmt.Errorf("path %q starts with '-' and could be read as an option", p)
	}
	if c == ".git" || strings.HasPrefix(c, ".git/") {
		return "", fmt.Errorf("path %q is inside .git", p)
	}
	return c, nil
}

// WatchPaths returns the repo paths a triple of p is graded against: the
// property file and the generator. A candidate diff touching one of them
// is CONTAMINATED.
func (p Property) WatchPaths() []string {
	if p.Generator == "" {
		return []string{p.Path}
	}
	return []string{p.Path, p.Generator}
}

// Triples returns how many triples the config names, drawn seeds included.
func (c *Config) Triples() int {
	n := 0
	for _, p := range c.Properties {
		n += len(p.Seeds) + p.RandomSeeds
	}
	return n
}

// ID names the property in messages: "path" or "path::name".
func (p Property) ID() string {
	if p.Name == "" {
		return p.Path
	}
	return p.Path + "::" + p.Name
}
