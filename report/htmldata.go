package report

import (
	"context"
	"encoding/json"
	"sort"
	"strconv"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/internal/termsafe"
)

// MaxRecentChecks is how many of the newest stored records the label chart
// counts (records, not checks: a check writes one per triple).
const MaxRecentChecks = 500

// HTMLData is what the HTML report shows, read from one store.
type HTMLData struct {
	GeneratedAt time.Time
	// Freezes are the ledger's entries, sorted by triple.
	Freezes []FreezeRow
	// Records is the number of records in the record store.
	Records int
	// Recent is the number of records the label chart counts (the newest
	// MaxRecentChecks), and RecentFrom/RecentTo the attempt times they span
	// (zero when no record carries attempt times).
	Recent               int
	RecentFrom, RecentTo time.Time
	// Properties holds the label counts of the recent records per property
	// path, most checked first.
	Properties []PropertyLabels
	// Schedulers counts, over every stored record, the triples labelled
	// SCHEDULER, most frequent first.
	Schedulers []TripleCount
	// Removed holds the void and expire events of the audit log, newest
	// first.
	Removed []AuditRow
	// AuditEvents counts the audit log's lines; BadAuditLines those that
	// did not decode as an event.
	AuditEvents   int
	BadAuditLines int
	// Queued says the store shares checks among runners (PostgreSQL);
	// Checks are its newest checks with their progress per runner.
	Queued bool
	Checks []flakegate.CheckProgress
	// Rejects are the newest stored records with a reject label (at most
	// MaxHTMLRejects), with the failing attempt's output.
	Rejects []RejectRow
	// Unsandboxed counts the recent records whose attempts ran without
	// the sandbox ("isolation": "none").
	Unsandboxed int
	// Prepared counts the recent records whose attempts ran on a prepared
	// layer; PrepareSeconds is the median and PrepareMax the longest wall
	// time of the prepares that built their candidates' layers.
	Prepared                   int
	PrepareSeconds, PrepareMax float64
}

// MaxHTMLRejects is how many recent rejects the HTML report shows.
const MaxHTMLRejects = 20

// RejectRow is one recent rejected record and what its failing attempt
// printed.
type RejectRow struct {
	flakegate.Triple
	Label        flakegate.Label
	Reason       string
	RecordSHA256 string
	At           time.Time
	// BaseSHA and CandidateSHA are the record's revisions ("" when it
	// names none).
	BaseSHA, CandidateSHA string
	// Example is the falsifying example the framework printed, Output the
	// failing attempt's output tail, Attempt its name ("" without one).
	Example, Output, Attempt string
}

// FreezeRow is one freeze and the run count it was granted with.
type FreezeRow struct {
	flakegate.Freeze
	// GrantedRuns is expires_after_runs at the freeze's latest grant event,
	// or 0 when the audit log has none.
	GrantedRuns int
	// EarnedBy is the candidate sha of the record that earned the freeze
	// ("" when the store does not hold it); Origin its flake_origin.
	EarnedBy, Origin string
}

// RunsFraction is runs left over runs granted, in [0, 1].
func (f FreezeRow) RunsFraction() float64 {
	total := max(f.GrantedRuns, f.ExpiresAfterRuns)
	if total <= 0 {
		return 0
	}
	return float64(f.ExpiresAfterRuns) / float64(total)
}

// PropertyLabels counts the labels of one property's recent records.
type PropertyLabels struct {
	PropertyPath string
	Counts       map[flakegate.Label]int
	Total        int
	Last         time.Time
}

// TripleCount is how often one triple earned SCHEDULER.
type TripleCount struct {
	flakegate.Triple
	Schedulers int       // records labelled SCHEDULER
	Records    int       // records of the triple, any label
	Last       time.Time // latest attempt of a SCHEDULER record
	// Origin and Probes are the flake_origin and base_probe_results of the
	// latest SCHEDULER record ("" and nil without a probe); NewFlakes
	// counts its SCHEDULER records whose origin is "new".
	Origin    string
	Probes    []string
	NewFlakes int
}

// AuditRow is one void or expire event.
type AuditRow struct {
	flakegate.AuditEvent
}

// unreadablePath groups records whose property path cannot be read.
const unreadablePath = "(unreadable records)"

// recordInfo is what the report needs from one stored record.
type recordInfo struct {
	unsandboxed bool     // "isolation": "none"
	prepare     *float64 // "prepare_seconds", nil without a prepare
	sha         string
	path        string
	triple      flakegate.Triple
	label       flakegate.Label
	at          time.Time
	base, cand  string
	origin      string
	probes      []string
}

// LoadHTMLData reads the store for the HTML report: the freezes, every
// stored record (classified again, so the chart shows what the decision
// table says today), and the audit log.
func LoadHTMLData(ctx context.Context, store flakegate.Store, now time.Time) (*HTMLData, error) {
	d := &HTMLData{GeneratedAt: now}

	lines, err := store.AuditLines(ctx)
	if err != nil {
		return nil, err
	}
	granted := map[string]int{}
	d.AuditEvents = len(lines)
	for _, line := range lines {
		var ev flakegate.AuditEvent
		if err := json.Unmarshal(line, &ev); err != nil {
			d.BadAuditLines++
			continue
		}
		switch ev.Action {
		case flakegate.ActionGrant:
			if ev.Freeze != nil {
				granted[ev.Freeze.Triple().Key()] = ev.Freeze.ExpiresAfterRuns
			}
		case flakegate.ActionVoid, flakegate.ActionExpire:
			d.Removed = append(d.Removed, AuditRow{ev})
		}
	}
	// Newest first; the log is oldest first, so a stable reverse sort by
	// time keeps the log's order for equal times reversed too.
	for i, j := 0, len(d.Removed)-1; i < j; i, j = i+1, j-1 {
		d.Removed[i], d.Removed[j] = d.Removed[j], d.Removed[i]
	}
	sort.SliceStable(d.Removed, func(i, j int) bool { return d.Removed[i].At.After(d.Removed[j].At) })

	freezes, err := store.ListFreezes(ctx)
	if err != nil {
		return nil, err
	}
	for _, f := range freezes {
		d.Freezes = append(d.Freezes, FreezeRow{Freeze: f, GrantedRuns: granted[f.Triple().Key()]})
	}

	var infos []recordInfo
	err = store.EachRecord(ctx, func(sha string, raw []byte) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		infos = append(infos, readRecordInfo(sha, raw))
		return nil
	})
	if err != nil {
		return nil, err
	}
	d.Records = len(infos)
	bySHA := make(map[string]*recordInfo, len(infos))
	for i := range infos {
		bySHA[infos[i].sha] = &infos[i]
	}
	for i := range d.Freezes {
		if r, ok := bySHA[d.Freezes[i].RecordSHA256]; ok {
			d.Freezes[i].EarnedBy, d.Freezes[i].Origin = termsafe.String(r.cand), termsafe.String(r.origin)
		}
		if c := d.Freezes[i].CandidateSHA; c != "" {
			d.Freezes[i].EarnedBy = termsafe.String(c)
		}
	}
	d.Schedulers = schedulerCounts(infos)
	d.Properties = recentLabels(d, infos)
	if q, ok := store.(flakegate.CheckQueue); ok {
		d.Queued = true
		if d.Checks, err = q.Progress(ctx, ""); err != nil {
			return nil, err
		}
	}
	if d.Rejects, err = recentRejects(ctx, store, infos); err != nil {
		return nil, err
	}
	return d, nil
}

// recentRejects reads the newest reject records again for their output:
// only MaxHTMLRejects records are held in memory, however many exist.
func recentRejects(ctx context.Context, store flakegate.RecordStore, infos []recordInfo) ([]RejectRow, error) {
	var rej []recordInfo
	for _, r := range infos {
		if r.label.Reject() {
			rej = append(rej, r)
		}
	}
	sort.Slice(rej, func(i, j int) bool {
		if !rej[i].at.Equal(rej[j].at) {
			return rej[i].at.After(rej[j].at)
		}
		return rej[i].sha < rej[j].sha
	})
	if len(rej) > MaxHTMLRejects {
		rej = rej[:MaxHTMLRejects]
	}
	var out []RejectRow
	for _, r := range rej {
		raw, err := store.GetRecord(ctx, r.sha)
		if err != nil {
			return nil, err
		}
		// The page shows what a terminal would act on as text (a page
		// written to stdout reaches one); the record keeps its bytes.
		row := RejectRow{Triple: r.triple, Label: r.label, RecordSHA256: r.sha, At: r.at, Reason: termsafe.String(recordReason(raw)),
			BaseSHA: termsafe.String(r.base), CandidateSHA: termsafe.String(r.cand)}
		var rec struct {
			Attempts []flakegate.Attempt `json:"attempts"`
		}
		if json.Unmarshal(raw, &rec) == nil {
			if a, ok := failingAttempt(rec.Attempts); ok && a.OutputTail != "" {
				row.Attempt, row.Output = attemptName(a), termsafe.String(a.OutputTail)
				row.Example = termsafe.String(FalsifyingExample(a.OutputTail))
			}
		}
		out = append(out, row)
	}
	return out, nil
}

// readRecordInfo classifies raw and reads the fields the report groups
// by. It reads leniently: a record the decision table calls INCOMPLETE
// still shows under its property path when that path is a string.
func readRecordInfo(sha string, raw []byte) recordInfo {
	dec := flakegate.ClassifyBytes(raw)
	info := recordInfo{sha: sha, label: dec.Label, path: unreadablePath}
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil {
		return info
	}
	var path, fixture, name string
	if json.Unmarshal(fields["property_path"], &path) == nil && path != "" {
		info.path = path
		// A suite's record is charted under its package or file (suites.go),
		// as the check's reports group it: thousands of tests, tens of rows.
		var suite string
		if json.Unmarshal(fields["suite"], &suite) == nil && suite != "" {
			info.path = groupKey(path)
		}
	}
	json.Unmarshal(fields["fixture_sha256"], &fixture)
	json.Unmarshal(fields["name"], &name)
	var seed flakegate.Seed
	json.Unmarshal(fields["seed"], &seed)
	info.triple = flakegate.Triple{PropertyPath: path, Name: name, Seed: seed, FixtureSHA256: fixture}
	if dec.Label == flakegate.Scheduler {
		info.triple = dec.Triple()
		info.triple.Name = name
	}
	json.Unmarshal(fields["base_sha"], &info.base)
	json.Unmarshal(fields["candidate_sha"], &info.cand)
	json.Unmarshal(fields["flake_origin"], &info.origin)
	json.Unmarshal(fields["base_probe_results"], &info.probes)
	var isolation string
	json.Unmarshal(fields["isolation"], &isolation)
	info.unsandboxed = isolation == "none"
	var prep float64
	if json.Unmarshal(fields["prepare_seconds"], &prep) == nil && fields["prepare_seconds"] != nil {
		info.prepare = &prep
	}
	var attempts []struct {
		StartedAt time.Time `json:"started_at"`
	}
	if json.Unmarshal(fields["attempts"], &attempts) == nil {
		for _, a := range attempts {
			if a.StartedAt.After(info.at) {
				info.at = a.StartedAt
			}
		}
	}
	return info
}

// recentLabels counts labels per property path over the newest records.
func recentLabels(d *HTMLData, infos []recordInfo) []PropertyLabels {
	recent := append([]recordInfo(nil), infos...)
	sort.Slice(recent, func(i, j int) bool {
		if !recent[i].at.Equal(recent[j].at) {
			return recent[i].at.After(recent[j].at)
		}
		return recent[i].sha < recent[j].sha
	})
	if len(recent) > MaxRecentChecks {
		recent = recent[:MaxRecentChecks]
	}
	d.Recent = len(recent)
	byPath := map[string]*PropertyLabels{}
	var preps []float64
	var out []PropertyLabels
	for _, r := range recent {
		if !r.at.IsZero() {
			if d.RecentTo.IsZero() || r.at.After(d.RecentTo) {
				d.RecentTo = r.at
			}
			if d.RecentFrom.IsZero() || r.at.Before(d.RecentFrom) {
				d.RecentFrom = r.at
			}
		}
		p, ok := byPath[r.path]
		if !ok {
			p = &PropertyLabels{PropertyPath: r.path, Counts: map[flakegate.Label]int{}}
			byPath[r.path] = p
		}
		p.Counts[r.label]++
		p.Total++
		if r.unsandboxed {
			d.Unsandboxed++
		}
		if r.prepare != nil {
			d.Prepared++
			preps = append(preps, *r.prepare)
		}
		if r.at.After(p.Last) {
			p.Last = r.at
		}
	}
	if len(preps) > 0 {
		sort.Float64s(preps)
		d.PrepareSeconds, d.PrepareMax = preps[len(preps)/2], preps[len(preps)-1]
	}
	for _, p := range byPath {
		out = append(out, *p)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Total != out[j].Total {
			return out[i].Total > out[j].Total
		}
		return out[i].PropertyPath < out[j].PropertyPath
	})
	return out
}

// schedulerCounts counts SCHEDULER records per triple over all records.
func schedulerCounts(infos []recordInfo) []TripleCount {
	byKey := map[string]*TripleCount{}
	for _, r := range infos {
		if r.triple.PropertyPath == "" {
			continue
		}
		k := r.triple.Key()
		t, ok := byKey[k]
		if !ok {
			t = &TripleCount{Triple: r.triple}
			byKey[k] = t
		}
		t.Records++
		if r.label == flakegate.Scheduler {
			t.Schedulers++
			if flakegate.NotBaseFlake(r.origin) {
				t.NewFlakes++
			}
			if t.Schedulers == 1 || r.at.After(t.Last) {
				t.Last, t.Origin, t.Probes = r.at, r.origin, r.probes
			}
		}
	}
	var out []TripleCount
	for _, t := range byKey {
		if t.Schedulers > 0 {
			out = append(out, *t)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Schedulers != out[j].Schedulers {
			return out[i].Schedulers > out[j].Schedulers
		}
		return out[i].Triple.Less(out[j].Triple)
	})
	return out
}

// recordReason is the reason the page shows for a stored record: the
// decision table's, except where it says only that a result was "error"
// or "timeout": then what the first such attempt did, in words
// (flakegate.NeverRan), as check's summary says it.
func recordReason(raw []byte) string {
	d := flakegate.ClassifyBytes(raw)
	m := flakegate.ResultTypeReasonRe.FindStringSubmatch(d.Reason)
	if d.Label != flakegate.Incomplete || m == nil {
		return d.Reason
	}
	var rec struct {
		Attempts []flakegate.Attempt `json:"attempts"`
		Command  []string            `json:"command"`
	}
	if json.Unmarshal(raw, &rec) != nil {
		return d.Reason
	}
	a, ok := flakegate.FirstUnfinished(rec.Attempts)
	if !ok {
		return d.Reason
	}
	return flakegate.NeverRan(flakegate.ProgramName(rec.Command), a, "") + " (the record's " + m[1] + " is " + strconv.Quote(m[2]) + ")"
}
