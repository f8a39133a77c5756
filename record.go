package flakegate

import (
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"
)

// RequiredKeys are the keys every run record must carry, in the spec's order.
var RequiredKeys = []string{
	"run_id", "seed", "property_path", "property_sha256", "fixture_sha256",
	"base_fixture_sha256", "diff_paths", "candidate_result", "base_seed_result",
	"retry_results", "retry_cap", "budget_ok", "transcript_complete",
}

// knownKeys are the keys the decision table reads.
var knownKeys = [...]string{
	"run_id", "seed", "property_path", "property_sha256", "fixture_sha256",
	"base_fixture_sha256", "diff_paths", "candidate_result", "base_seed_result",
	"retry_results", "retry_cap", "budget_ok", "transcript_complete",
	"fixture_generator_path", "watch_paths", "candidate_env", "base_env",
}

// Indexes of knownKeys.
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
)

func knownKeyIndex(key string) (int, bool) {
	switch key {
	case "run_id":
		return 0, true
	case "seed":
		return 1, true
	case "property_path":
		return 2, true
	case "property_sha256":
		return 3, true
	case "fixture_sha256":
		return 4, true
	case "base_fixture_sha256":
		return 5, true
	case "diff_paths":
		return 6, true
	case "candidate_result":
		return 7, true
	case "base_seed_result":
		return 8, true
	case "retry_results":
		return 9, true
	case "retry_cap":
		return 10, true
	case "budget_ok":
		return 11, true
	case "transcript_complete":
		return 12, true
	case "fixture_generator_path":
		return 13, true
	case "watch_paths":
		return 14, true
	case "candidate_env":
		return 15, true
	case "base_env":
		return 16, true
	}
	return 0, false
}

// Record is a run record read strictly, with the fields the decision table
// reads. Value keeps every key, known or not, for the hash.
type Record struct {
	Value Value

	Seed               Seed
	PropertyPath       string // cleaned
	PropertySHA256     string
	FixtureSHA256      string
	BaseFixtureSHA256  string
	DiffPaths          []string // cleaned
	CandidateResult    string
	BaseSeedResult     *Value // any value; only "pass" and "fail" are results
	RetryResults       []string
	RetryCap           int // clamped to len(retry_results) when larger
	BudgetOK           bool
	TranscriptComplete bool
	GeneratorPath      string   // cleaned; "" when absent
	WatchPaths         []string // cleaned
	WatchFolders       []string // cleaned watch_paths entries that ended in "/"
	CandidateEnv       *Value
	BaseEnv            *Value

	// Missing lists absent required keys; Problem is the first type or path
	// problem. Either makes the record INCOMPLETE.
	Missing []string
	Problem string
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

// NewRecord reads the typed fields of a JSON object value. It never fails:
// problems are kept in Missing and Problem for the decision table.
func NewRecord(v Value) *Record {
	r := new(Record)
	r.fill(v)
	return r
}

// knownSlots holds, for each of knownKeys, the index of its member in an
// object, or -1.
type knownSlots [len(knownKeys)]int32

// findKnown sets slots for the members ms.
func findKnown(ms []Member, slots *knownSlots) {
	for k := range slots {
		slots[k] = -1
	}
	for i := range ms {
		if k, ok := knownKeyIndex(ms[i].Key); ok {
			slots[k] = int32(i)
		}
	}
}

// fill sets r from v, reusing r's slices.
func (r *Record) fill(v Value) { r.fillSlots(v, nil) }

// fillSlots is fill, given the known keys' slots in v when they are known
// already (nil otherwise).
func (r *Record) fillSlots(v Value, slots *knownSlots) {
	retries, diff := r.RetryResults[:0], r.DiffPaths[:0]
	*r = Record{Value: v, RetryResults: retries, DiffPaths: diff}
	if v.Kind != KindObject {
		r.Problem = fmt.Sprintf("record is a JSON %s, want an object", v.Kind)
		return
	}
	if slots == nil {
		slots = new(knownSlots)
		findKnown(v.Members, slots)
	}
	var known [len(knownKeys)]*Value
	for k, i := range slots {
		if i >= 0 {
			known[k] = &v.Members[i].Value
		}
	}
	// RequiredKeys are the first of knownKeys, in the same order.
	for i, k := range RequiredKeys {
		if known[i] == nil {
			r.Missing = append(r.Missing, k)
		}
	}
	bad := func(format string, args ...any) {
		if r.Problem == "" {
			r.Problem = fmt.Sprintf(format, args...)
		}
	}
	if x := known[keyTranscriptComplete]; x != nil {
		if x.Kind != KindBool {
			bad("transcript_complete: want true or false, got a %s", x.Kind)
		}
		r.TranscriptComplete = x.Kind == KindBool && x.Bool
	}
	if x := known[keyRunID]; x != nil && x.Kind == KindNull {
		bad("run_id: want a value, got null")
	}
	if x := known[keySeed]; x != nil {
		switch {
		case x.IsInt():
			s := x.Str
			if s == "-0" {
				s = "0"
			}
			r.Seed = Seed(s)
		case x.Kind == KindString && isSeedString(x.Str):
			r.Seed = Seed(strconv.Quote(x.Str))
		default:
			bad("seed: want a JSON integer or a non-empty string of [A-Za-z0-9._:-], got %s", describe(x))
		}
	}
	digest := func(k int, dst *string) {
		key := knownKeys[k]
		if x := known[k]; x != nil {
			if x.Kind != KindString || x.Str == "" {
				bad("%s: want a non-empty string, got %s", key, describe(x))
				return
			}
			*dst = x.Str
		}
	}
	digest(keyPropertySHA256, &r.PropertySHA256)
	digest(keyFixtureSHA256, &r.FixtureSHA256)
	digest(keyBaseFixtureSHA256, &r.BaseFixtureSHA256)
	if x := known[keyPropertyPath]; x != nil {
		r.PropertyPath = cleanPath("property_path", x, bad)
	}
	if x := known[keyFixtureGeneratorPath]; x != nil && x.Kind != KindNull {
		if x.Kind == KindString && x.Str == "" {
			// The listing treats an empty generator path as none.
		} else {
			r.GeneratorPath = cleanPath("fixture_generator_path", x, bad)
		}
	}
	if x := known[keyDiffPaths]; x != nil {
		r.DiffPaths, _ = pathList(r.DiffPaths, "diff_paths", x, bad)
	}
	if x := known[keyWatchPaths]; x != nil && x.Kind != KindNull {
		r.WatchPaths, r.WatchFolders = pathList(nil, "watch_paths", x, bad)
	}
	if x := known[keyCandidateResult]; x != nil {
		if x.Kind != KindString || (x.Str != "pass" && x.Str != "fail") {
			bad(`candidate_result: want "pass" or "fail", got %s`, describe(x))
		}
		r.CandidateResult = x.Str
	}
	r.BaseSeedResult = known[keyBaseSeedResult]
	if x := known[keyRetryResults]; x != nil {
		if x.Kind != KindArray {
			bad("retry_results: want an array of \"pass\"/\"fail\", got %s", describe(x))
		} else {
			for i := range x.Members {
				e := x.Elem(i)
				if e.Kind != KindString || (e.Str != "pass" && e.Str != "fail") {
					bad(`retry_results[%d]: want "pass" or "fail", got %s`, i, describe(e))
				}
				r.RetryResults = append(r.RetryResults, e.Str)
			}
		}
	}
	if x := known[keyRetryCap]; x != nil {
		switch {
		case !x.IsInt():
			bad("retry_cap: want an integer >= 0, got %s", describe(x))
		case strings.HasPrefix(x.Str, "-") && x.Str != "-0":
			bad("retry_cap: want an integer >= 0, got %s", x.Str)
		default:
			n, err := strconv.Atoi(x.Str)
			if err != nil || n > len(r.RetryResults) {
				n = len(r.RetryResults) // a cap past the retries run cuts nothing
			}
			r.RetryCap = n
		}
	}
	if x := known[keyBudgetOK]; x != nil {
		if x.Kind != KindBool {
			bad("budget_ok: want true or false, got %s", describe(x))
		}
		r.BudgetOK = x.Bool
	}
	for _, i := range [...]int{keyCandidateEnv, keyBaseEnv} {
		k, x := knownKeys[i], known[i]
		if x == nil || x.Kind == KindNull {
			continue
		}
		if x.Kind != KindObject {
			bad("%s: want an object with workers, clock_budget_s and filesystem, got %s", k, describe(x))
			continue
		}
		if k == "candidate_env" {
			r.CandidateEnv = x
		} else {
			r.BaseEnv = x
		}
	}
	return
}

// describe names a value's type, and shows it when it is short.
func describe(v *Value) string {
	switch v.Kind {
	case KindNumber:
		return "the number " + truncate(v.Str, 40)
	case KindString:
		return "the string " + strconv.Quote(truncate(v.Str, 40))
	case KindBool:
		return strconv.FormatBool(v.Bool)
	case KindNull:
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

func cleanPath(key string, x *Value, bad func(string, ...any)) string {
	return cleanPathAt(key, -1, x, bad)
}

// cleanPathAt cleans x, the element i of key (i < 0: key itself), and
// reports a problem through bad, naming the key only then.
func cleanPathAt(key string, i int, x *Value, bad func(string, ...any)) string {
	name := func() string {
		if i < 0 {
			return key
		}
		return fmt.Sprintf("%s[%d]", key, i)
	}
	if x.Kind != KindString {
		bad("%s: want a repo-relative path string, got %s", name(), describe(x))
		return ""
	}
	if isCleanPath(x.Str) {
		return x.Str
	}
	c, err := CleanPath(x.Str)
	if err != nil {
		bad("%s: %v", name(), err)
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

func pathList(paths []string, key string, x *Value, bad func(string, ...any)) (_, folders []string) {
	if x.Kind != KindArray {
		bad("%s: want an array of path strings, got %s", key, describe(x))
		return paths, nil
	}
	for i := range x.Members {
		e := x.Elem(i)
		c := cleanPathAt(key, i, e, bad)
		if c == "" {
			continue
		}
		if e.Kind == KindString && strings.HasSuffix(e.Str, "/") {
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
	watched := make([]string, 0, 2+len(r.WatchPaths))
	watched = append(watched, r.PropertyPath)
	if r.GeneratorPath != "" {
		watched = append(watched, r.GeneratorPath)
	}
	watched = append(watched, r.WatchPaths...)
	for _, d := range r.DiffPaths {
		for _, w := range watched {
			if d == w {
				hit = append(hit, d)
				break
			}
		}
		for _, f := range r.WatchFolders {
			if strings.HasPrefix(d, f+"/") {
				hit = append(hit, d)
				break
			}
		}
	}
	if len(hit) == 0 {
		return nil
	}
	sort.Strings(hit)
	out := hit[:1]
	for _, h := range hit[1:] {
		if h != out[len(out)-1] {
			out = append(out, h)
		}
	}
	return out
}
