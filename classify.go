package flakegate

import (
	"math/big"
	"strconv"
	"strings"

	"github.com/flakegate/flakegate/canonjson"
)

// Row is one row of the decision table: a named predicate and the label it
// gives. Rows are tried in order and the first match wins.
type Row struct {
	N     int
	Name  string
	Label Label
	// Match reports whether the row applies, and says why in words.
	Match func(r *Record) (reason string, ok bool)
}

// Table is the decision table of docs/design.md, row for row.
var Table = []Row{
	{1, "incomplete record", Incomplete, incompleteRecord},
	{2, "watched path in the diff", Contaminated, watchedPathInDiff},
	{3, "fixture digest differs from base", Fixture, fixtureDigestDiffers},
	{4, "budget missed", Budget, budgetMissed},
	{5, "base replay not stored as pass or fail", Incomplete, noBaseReplay},
	{6, "candidate passed", Pass, candidatePassed},
	{7, "only one side's env recorded", Incomplete, oneEnvMissing},
	{8, "envs differ", Budget, envsDiffer},
	{9, "cleared by a retry inside the cap, base green", Scheduler, schedulerNoise},
	{10, "candidate failed", Property, always},
}

func incompleteRecord(r *Record) (string, bool) {
	switch {
	case r.Unreadable != nil:
		return "not a JSON record: " + r.Unreadable.Error(), true
	case len(r.Missing) > 0:
		return "missing required key(s): " + strings.Join(r.Missing, ", "), true
	case r.Problem != "":
		return r.Problem, true
	case !r.TranscriptComplete:
		return "transcript_complete is false", true
	}
	return "", false
}

func watchedPathInDiff(r *Record) (string, bool) {
	if hit := r.watchedInDiff(); hit != nil {
		return "the patch edits what grades it: " + strings.Join(hit, ", "), true
	}
	return "", false
}

func fixtureDigestDiffers(r *Record) (string, bool) {
	if r.FixtureSHA256 != r.BaseFixtureSHA256 {
		return "fixture_sha256 " + truncate(r.FixtureSHA256, 16) + " differs from base_fixture_sha256 " + truncate(r.BaseFixtureSHA256, 16), true
	}
	return "", false
}

func budgetMissed(r *Record) (string, bool) {
	if !r.BudgetOK {
		return "budget_ok is false", true
	}
	return "", false
}

func noBaseReplay(r *Record) (string, bool) {
	b := r.BaseSeedResult
	if b.Kind == canonjson.KindString && (b.Str == "pass" || b.Str == "fail") {
		return "", false
	}
	return "base_seed_result is " + describe(b) + `, want "pass" or "fail"`, true
}

func candidatePassed(r *Record) (string, bool) { return "", r.CandidateResult == "pass" }

// schedulerSignals: candidate failed, base seed passed, and a retry inside
// the cap passed.
func schedulerSignals(r *Record) bool {
	if r.CandidateResult == "pass" || r.BaseSeedResult.Str != "pass" {
		return false
	}
	for _, res := range r.RetryResults[:r.RetryCap] {
		if res == "pass" {
			return true
		}
	}
	return false
}

func oneEnvMissing(r *Record) (string, bool) {
	if schedulerSignals(r) && (r.CandidateEnv == nil) != (r.BaseEnv == nil) {
		if r.CandidateEnv == nil {
			return "base_env is recorded but candidate_env is not", true
		}
		return "candidate_env is recorded but base_env is not", true
	}
	return "", false
}

var envKeys = [...]string{"workers", "clock_budget_s", "filesystem"}

func envsDiffer(r *Record) (string, bool) {
	if !schedulerSignals(r) || r.CandidateEnv == nil || r.BaseEnv == nil {
		return "", false
	}
	for _, k := range envKeys {
		c, cok := r.CandidateEnv.Get(k)
		b, bok := r.BaseEnv.Get(k)
		if cok != bok || (cok && !sameValue(c, b)) {
			return "candidate and base differ in " + k, true
		}
	}
	return "", false
}

// sameValue compares two env values: numbers by value (60 equals 60.0),
// anything else by canonical form.
func sameValue(a, b *canonjson.Value) bool {
	if a.Kind == b.Kind && a.Kind != canonjson.KindObject && a.Kind != canonjson.KindArray && a.Str == b.Str && a.Bool == b.Bool {
		return true
	}
	if a.Kind == canonjson.KindNumber && b.Kind == canonjson.KindNumber {
		x, ok1 := new(big.Rat).SetString(a.Str)
		y, ok2 := new(big.Rat).SetString(b.Str)
		return ok1 && ok2 && x.Cmp(y) == 0
	}
	return string(canonjson.Append(nil, a)) == string(canonjson.Append(nil, b))
}

func schedulerNoise(r *Record) (string, bool) { return "", schedulerSignals(r) }

func always(r *Record) (string, bool) {
	fails := 0
	if r.CandidateResult == "fail" {
		fails++
	}
	for _, res := range r.RetryResults {
		if res == "fail" {
			fails++
		}
	}
	tried := "candidate failed " + strconv.Itoa(fails) + " of " + strconv.Itoa(1+len(r.RetryResults)) + " attempts"
	switch {
	case r.BaseSeedResult.Str == "fail":
		return tried + "; the same seed fails on base", true
	case r.RetryCap == 0:
		return tried + "; no retry inside a cap of 0; base passed", true
	}
	return tried + "; no retry inside the cap passed; base passed", true
}

// Classify runs the decision table over a record.
func Classify(r *Record) Decision {
	for _, row := range Table {
		reason, ok := row.Match(r)
		if !ok {
			continue
		}
		d := Decision{Label: row.Label, Row: row.N, Reason: reason}
		switch row.Label {
		case Incomplete:
			if row.N == 1 && r.Unreadable == nil && r.Value.Kind == canonjson.KindObject {
				d.Missing = r.Missing
				if d.Missing == nil {
					d.Missing = []string{}
				}
			}
		case Contaminated:
			d.Paths = r.watchedInDiff()
		case Scheduler:
			d.Freeze = true
			d.Seed = r.Seed
			d.PropertyPath = r.PropertyPath
			d.FixtureSHA256 = r.FixtureSHA256
		}
		return d
	}
	panic("unreachable: the last row always matches")
}

// MaxRecordBytes bounds one record; a larger input is INCOMPLETE.
const MaxRecordBytes = canonjson.MaxBytes

// ClassifyBytes reads raw strictly, hashes it and runs the decision table.
// It never panics: bytes that are not one acceptable JSON value are
// INCOMPLETE (row 1) with the reader's reason and a null record_sha256.
func ClassifyBytes(raw []byte) Decision {
	if len(raw) > MaxRecordBytes {
		_, err := canonjson.Read(raw)
		return Classify(UnreadableRecord(err))
	}
	var c Classifier
	return c.Classify(string(raw))
}

// RecordSHA256 reads raw strictly and returns its record_sha256, the
// digest the spec's listing prints for the same record.
func RecordSHA256(raw []byte) (string, error) {
	v, err := canonjson.Read(raw)
	if err != nil {
		return "", err
	}
	return canonjson.SHA256(&v).String(), nil
}

// A Classifier classifies records one after another, as ClassifyBytes
// does, reusing its reader and record. It is not safe for concurrent use;
// its zero value is ready.
type Classifier struct {
	rd    canonjson.Reader
	rec   Record
	slots keySlots
}

// Classify reads the record s strictly, hashes it and runs the decision
// table.
func (c *Classifier) Classify(s string) Decision {
	v, sum, err := c.rd.ReadSum(s)
	if err != nil {
		return Classify(UnreadableRecord(err))
	}
	c.rd.Find(recordKeySet, v, c.slots[:])
	c.rec.fill(*v, &c.slots)
	d := Classify(&c.rec)
	d.RecordSHA256 = sum.String()
	return d
}
