package flakegate

import (
	"fmt"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/flakegate/flakegate/canonjson"
)

// recordKeys are the keys the decision table reads: the required keys
// first, in the spec's order, then the optional ones. The key* constants
// index it.
var recordKeys = [...]string{
	keyRunID:                "run_id",
	keySeed:                 "seed",
	keyPropertyPath:         "property_path",
	keyPropertySHA256:       "property_sha256",
	keyFixtureSHA256:        "fixture_sha256",
	keyBaseFixtureSHA256:    "base_fixture_sha256",
	keyDiffPaths:            "diff_paths",
	keyCandidateResult:      "candidate_result",
	keyBaseSeedResult:       "base_seed_result",
	keyRetryResults:         "retry_results",
	keyRetryCap:             "retry_cap",
	keyBudgetOK:             "budget_ok",
	keyTranscriptComplete:   "transcript_complete",
	keyFixtureGeneratorPath: "fixture_generator_path",
	keyWatchPaths:           "watch_paths",
	keyCandidateEnv:         "candidate_env",
	keyBaseEnv:              "base_env",
}

// Indexes of recordKeys.
const (
	keyRunID = iota
	keySeed
	keyPropertyPath
	keyPropertySHA256
	keyFixtureSHA256
	keyBaseFixtureSHA256
	keyDiffPaths
	keyCandidateResult
	keyBaseSeedResult
	keyRetryResults
	keyRetryCap
	keyBudgetOK
	keyTranscriptComplete
	keyFixtureGeneratorPath
	keyWatchPaths
	keyCandidateEnv
	keyBaseEnv

	numRequiredKeys = keyTranscriptComplete + 1
)

// RequiredKeys are the keys every run record must carry, in the spec's order.
var RequiredKeys = recordKeys[:numRequiredKeys:numRequiredKeys]

// recordKeySet finds recordKeys in a record's members.
var recordKeySet = canonjson.NewKeys(recordKeys[:]...)

// keySlots holds, for each of recordKeys, the index of its member in a
// record, or -1.
type keySlots [len(recordKeys)]int32

// Record is a run record read strictly, with the fields the decision table
// reads. Value keeps every key, known or not, for the hash.
type Record struct {
	Value canonjson.Value

	Seed               Seed
	PropertyPath       string // cleaned
	PropertySHA256     string
	FixtureSHA256      string
	BaseFixtureSHA256  string
	DiffPaths          []string // cleaned
	CandidateResult    string
	BaseSeedResult     *canonjson.Value // any value; only "pass" and "fail" are results
	RetryResults       []string
	RetryCap           int // clamped to len(retry_results) when larger
	BudgetOK           bool
	TranscriptComplete bool
	GeneratorPath      string   // cleaned; "" when absent
	WatchPaths         []string // cleaned
	WatchFolders       []string // cleaned watch_paths entries that ended in "/"
	CandidateEnv       *canonjson.Value
	BaseEnv            *canonjson.Value

	// Unreadable says why the bytes are not a JSON value the reader
	// accepts (then nothing else is set). Missing lists absent required
	// keys; Problem is the first type or path problem. Any of them makes
	// the record INCOMPLETE (row 1).
	Unreadable error
	Missing    []string
	Problem    string
}

// isSeedString reports whether s is a non-empty string of [A-Za-z0-9._:-].
func isSeedString(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == ':' || c == '-') {
			return false
		}
	}
	return true
}

// NewRecord reads the typed fields of a JSON value. It never fails:
// problems are kept in Missing and Problem for the decision table.
func NewRecord(v canonjson.Value) *Record {
	r := new(Record)
	var slots keySlots
	recordKeySet.Find(&v, slots[:])
	r.fill(v, &slots)
	return r
}

// UnreadableRecord is the record of bytes that are not a JSON value the
// reader accepts: err says why, and the table's first row reads it.
func UnreadableRecord(err error) *Record { return &Record{Unreadable: err} }

// fill sets r from v, whose recordKeys sit in slots, reusing r's slices:
// it lists the missing required keys, then reads each key present with
// its reader in keyReaders.
func (r *Record) fill(v canonjson.Value, slots *keySlots) {
	retries, diff := r.RetryResults[:0], r.DiffPaths[:0]
	*r = Record{Value: v, RetryResults: retries, DiffPaths: diff}
	if v.Kind != canonjson.KindObject {
		r.Problem = fmt.Sprintf("record is a JSON %s, want an object", v.Kind)
		return
	}
	for i, k := range RequiredKeys {
		if slots[i] < 0 {
			r.Missing = append(r.Missing, k)
		}
	}
	for _, kr := range keyReaders {
		if i := slots[kr.Key]; i >= 0 {
			kr.Read(r, &v.Members[i].Value)
		}
	}
}

// A keyReader reads one key of a record, when the record has it, into
// the Record's fields. A value the contract refuses is a problem
// (Record.bad keeps the first one found), and the record is INCOMPLETE.
type keyReader struct {
	Key  int // an index of recordKeys
	Read func(r *Record, x *canonjson.Value)
}

// keyReaders read the record, key by key, in the order their problems are
// reported: the first problem found is the record's Problem. Each key of
// recordKeys has exactly one reader.
var keyReaders = [...]keyReader{
	{keyTranscriptComplete, readTranscriptComplete},
	{keyRunID, readRunID},
	{keySeed, readSeed},
	{keyPropertySHA256, readPropertySHA256},
	{keyFixtureSHA256, readFixtureSHA256},
	{keyBaseFixtureSHA256, readBaseFixtureSHA256},
	{keyPropertyPath, readPropertyPath},
	{keyFixtureGeneratorPath, readFixtureGeneratorPath},
	{keyDiffPaths, readDiffPaths},
	{keyWatchPaths, readWatchPaths},
	{keyCandidateResult, readCandidateResult},
	{keyBaseSeedResult, readBaseSeedResult},
	{keyRetryResults, readRetryResults},
	{keyRetryCap, readRetryCap}, // after retry_results: the cap is clamped to them
	{keyBudgetOK, readBudgetOK},
	{keyCandidateEnv, readCandidateEnv},
	{keyBaseEnv, readBaseEnv},
}

// bad keeps the first problem of the record.
func (r *Record) bad(format string, args ...any) {
	if r.Problem == "" {
		r.Problem = fmt.Sprintf(format, args...)
	}
}

// readTranscriptComplete reads transcript_complete: true or false; anything
// else is a problem, and reads as false.
func readTranscriptComplete(r *Record, x *canonjson.Value) {
	if x.Kind != canonjson.KindBool {
		r.bad("transcript_complete: want true or false, got a %s", x.Kind)
	}
	r.TranscriptComplete = x.Kind == canonjson.KindBool && x.Bool
}

// readRunID reads run_id: any value but null.
func readRunID(r *Record, x *canonjson.Value) {
	if x.Kind == canonjson.KindNull {
		r.bad("run_id: want a value, got null")
	}
}

// readSeed reads seed: a JSON integer (-0 is 0) or a non-empty string of
// [A-Za-z0-9._:-], kept in its JSON form (a string quoted).
func readSeed(r *Record, x *canonjson.Value) {
	switch {
	case x.IsInt():
		s := x.Str
		if s == "-0" {
			s = "0"
		}
		r.Seed = Seed(s)
	case x.Kind == canonjson.KindString && isSeedString(x.Str):
		r.Seed = Seed(strconv.Quote(x.Str))
	default:
		r.bad("seed: want a JSON integer or a non-empty string of [A-Za-z0-9._:-], got %s", describe(x))
	}
}

// readPropertySHA256 reads property_sha256: a non-empty string.
func readPropertySHA256(r *Record, x *canonjson.Value) {
	r.PropertySHA256 = r.digest(keyPropertySHA256, x)
}

// readFixtureSHA256 reads fixture_sha256: a non-empty string.
func readFixtureSHA256(r *Record, x *canonjson.Value) {
	r.FixtureSHA256 = r.digest(keyFixtureSHA256, x)
}

// readBaseFixtureSHA256 reads base_fixture_sha256: a non-empty string.
func readBaseFixtureSHA256(r *Record, x *canonjson.Value) {
	r.BaseFixtureSHA256 = r.digest(keyBaseFixtureSHA256, x)
}

// digest reads the digest key k: a non-empty string, else a problem and "".
func (r *Record) digest(k int, x *canonjson.Value) string {
	if x.Kind != canonjson.KindString || x.Str == "" {
		r.bad("%s: want a non-empty string, got %s", recordKeys[k], describe(x))
		return ""
	}
	return x.Str
}

// readPropertyPath reads property_path: a repo-relative path, cleaned.
func readPropertyPath(r *Record, x *canonjson.Value) {
	r.PropertyPath = r.cleanPath("property_path", -1, x)
}

// readFixtureGeneratorPath reads fixture_generator_path: null or "" (the
// listing treats both as none), or a repo-relative path, cleaned.
func readFixtureGeneratorPath(r *Record, x *canonjson.Value) {
	if x.Kind == canonjson.KindNull || (x.Kind == canonjson.KindString && x.Str == "") {
		return
	}
	r.GeneratorPath = r.cleanPath("fixture_generator_path", -1, x)
}

// readDiffPaths reads diff_paths: an array of repo-relative paths, cleaned.
func readDiffPaths(r *Record, x *canonjson.Value) {
	r.DiffPaths, _ = r.pathList(r.DiffPaths, "diff_paths", x)
}

// readWatchPaths reads watch_paths: null, or an array of repo-relative
// paths, cleaned; an entry that ends in "/" is a folder.
func readWatchPaths(r *Record, x *canonjson.Value) {
	if x.Kind == canonjson.KindNull {
		return
	}
	r.WatchPaths, r.WatchFolders = r.pathList(nil, "watch_paths", x)
}

// readCandidateResult reads candidate_result: "pass" or "fail".
func readCandidateResult(r *Record, x *canonjson.Value) {
	if x.Kind != canonjson.KindString || (x.Str != "pass" && x.Str != "fail") {
		r.bad(`candidate_result: want "pass" or "fail", got %s`, describe(x))
	}
	r.CandidateResult = x.Str
}

// readBaseSeedResult reads base_seed_result: any value, kept as it is; only
// "pass" and "fail" are results (the table's row 5 reads it).
func readBaseSeedResult(r *Record, x *canonjson.Value) {
	r.BaseSeedResult = x
}

// readRetryResults reads retry_results: an array of "pass" and "fail".
func readRetryResults(r *Record, x *canonjson.Value) {
	if x.Kind != canonjson.KindArray {
		r.bad("retry_results: want an array of \"pass\"/\"fail\", got %s", describe(x))
		return
	}
	for i := range x.Members {
		e := x.Elem(i)
		if e.Kind != canonjson.KindString || (e.Str != "pass" && e.Str != "fail") {
			r.bad(`retry_results[%d]: want "pass" or "fail", got %s`, i, describe(e))
		}
		r.RetryResults = append(r.RetryResults, e.Str)
	}
}

// readRetryCap reads retry_cap: an integer >= 0 (-0 is 0); a cap past the
// retries run is clamped to them (it cuts nothing).
func readRetryCap(r *Record, x *canonjson.Value) {
	switch {
	case !x.IsInt():
		r.bad("retry_cap: want an integer >= 0, got %s", describe(x))
	case strings.HasPrefix(x.Str, "-") && x.Str != "-0":
		r.bad("retry_cap: want an integer >= 0, got %s", x.Str)
	default:
		n, err := strconv.Atoi(x.Str)
		if err != nil || n > len(r.RetryResults) {
			n = len(r.RetryResults)
		}
		r.RetryCap = n
	}
}

// readBudgetOK reads budget_ok: true or false.
func readBudgetOK(r *Record, x *canonjson.Value) {
	if x.Kind != canonjson.KindBool {
		r.bad("budget_ok: want true or false, got %s", describe(x))
	}
	r.BudgetOK = x.Bool
}

// readCandidateEnv reads candidate_env: null (not recorded) or an object.
func readCandidateEnv(r *Record, x *canonjson.Value) {
	r.CandidateEnv = r.env(keyCandidateEnv, x)
}

// readBaseEnv reads base_env: null (not recorded) or an object.
func readBaseEnv(r *Record, x *canonjson.Value) {
	r.BaseEnv = r.env(keyBaseEnv, x)
}

// env reads the env key k: an object, or nil for null or a problem.
func (r *Record) env(k int, x *canonjson.Value) *canonjson.Value {
	switch x.Kind {
	case canonjson.KindNull:
		return nil
	case canonjson.KindObject:
		return x
	}
	r.bad("%s: want an object with workers, clock_budget_s and filesystem, got %s", recordKeys[k], describe(x))
	return nil
}

// describe names a value's type, and shows it when it is short.
func describe(v *canonjson.Value) string {
	switch v.Kind {
	case canonjson.KindNumber:
		return "the number " + truncate(v.Str, 40)
	case canonjson.KindString:
		return "the string " + strconv.Quote(truncate(v.Str, 40))
	case canonjson.KindBool:
		return strconv.FormatBool(v.Bool)
	case canonjson.KindNull:
		return "null"
	}
	return "an " + v.Kind.String()
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// CleanPath cleans a repo-relative path ("./a//b" is "a/b") and refuses an
// empty, absolute or escaping one.
func CleanPath(p string) (string, error) {
	if p == "" {
		return "", fmt.Errorf("empty path")
	}
	if strings.IndexByte(p, 0) >= 0 {
		return "", fmt.Errorf("path %q has a NUL byte", p)
	}
	if strings.HasPrefix(p, "/") {
		return "", fmt.Errorf("path %q is absolute, want repo-relative", p)
	}
	c := path.Clean(p)
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", fmt.Errorf("path %q climbs out of the repo", p)
	}
	if c == "." {
		return "", fmt.Errorf("path %q names the repo root, want a file", p)
	}
	return c, nil
}

// cleanPath cleans x, the element i of key (i < 0: key itself), and
// reports a problem, naming the key only then.
func (r *Record) cleanPath(key string, i int, x *canonjson.Value) string {
	name := func() string {
		if i < 0 {
			return key
		}
		return fmt.Sprintf("%s[%d]", key, i)
	}
	if x.Kind != canonjson.KindString {
		r.bad("%s: want a repo-relative path string, got %s", name(), describe(x))
		return ""
	}
	if isCleanPath(x.Str) {
		return x.Str
	}
	c, err := CleanPath(x.Str)
	if err != nil {
		r.bad("%s: %v", name(), err)
		return ""
	}
	return c
}

// isCleanPath is a fast test for a path that CleanPath would return as is.
func isCleanPath(p string) bool {
	if p == "" || p[0] == '/' || p[len(p)-1] == '/' {
		return false
	}
	start := 0
	for i := 0; i <= len(p); i++ {
		if i < len(p) && p[i] == 0 {
			return false
		}
		if i == len(p) || p[i] == '/' {
			if seg := p[start:i]; seg == "" || seg == "." || seg == ".." {
				return false
			}
			start = i + 1
		}
	}
	return true
}

// pathList appends the cleaned paths of the array x, the key key, to
// paths, and returns the entries that end in "/" apart, as folders.
func (r *Record) pathList(paths []string, key string, x *canonjson.Value) (_, folders []string) {
	if x.Kind != canonjson.KindArray {
		r.bad("%s: want an array of path strings, got %s", key, describe(x))
		return paths, nil
	}
	for i := range x.Members {
		e := x.Elem(i)
		c := r.cleanPath(key, i, e)
		if c == "" {
			continue
		}
		if e.Kind == canonjson.KindString && strings.HasSuffix(e.Str, "/") {
			folders = append(folders, c)
		} else {
			paths = append(paths, c)
		}
	}
	return paths, folders
}

// watchedInDiff returns the sorted watched paths found in the diff: the
// property path, the generator path, every watch_paths file, and every
// diff path under a watch_paths folder.
func (r *Record) watchedInDiff() []string {
	var hit []string
	for _, d := range r.DiffPaths {
		if r.watches(d) {
			hit = append(hit, d)
		}
	}
	if len(hit) == 0 {
		return nil
	}
	sort.Strings(hit)
	return slices.Compact(hit)
}

// watches reports whether the diff path d is watched.
func (r *Record) watches(d string) bool {
	if d == r.PropertyPath || (r.GeneratorPath != "" && d == r.GeneratorPath) || slices.Contains(r.WatchPaths, d) {
		return true
	}
	for _, f := range r.WatchFolders {
		if len(d) > len(f) && d[len(f)] == '/' && strings.HasPrefix(d, f) {
			return true
		}
	}
	return false
}
