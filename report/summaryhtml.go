package report

import (
	_ "embed"
	"html/template"
	"io"
	"sort"
	"strings"
	"sync"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/internal/termsafe"
)

//go:embed summary.html.tmpl
var summarySource string

// summaryTemplate is parsed at first use, as htmlTemplate is.
var summaryTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("summary").Funcs(template.FuncMap{
		"short":      flakegate.ShortSHA,
		"labelColor": labelColor,
		"plural":     plural,
		"failedNew":  newTestFailed,
		"newRuns":    newTestRuns,
	}).Parse(summarySource))
})

// summaryPage is what the summary page shows.
type summaryPage struct {
	S                     *flakegate.Summary
	Counts                Counts
	Legend                []legendItem
	Unsandboxed           bool
	Props                 []tripleRow
	PropsShown, PropsMore []tripleRow
	PropsHidden           int
	Suites                []suitePage
	NewTests              []flakegate.NewTest
	NewFailed             int
	NewPolicy             string
}

// suitePage is one suite: its groups with a triple that did not pass,
// open, then the groups where every triple passed, folded together.
type suitePage struct {
	*suiteView
	Path         string // the suite's path as a terminal would show it
	Columns      []flakegate.Label
	Frozen       bool // a column for the frozen skips
	NumCols      int  // the number columns: triples, one per label, frozen
	Dirty, Clean []groupPage
	CleanPassed  int
}

// groupPage is one package or file: its counts in the suite's columns,
// the triples that did not pass and the passes.
type groupPage struct {
	Key       string
	Total     int
	Cells     []int
	NotPassed []tripleRow
	Passed    []tripleRow
	// PassedHidden counts the passes past htmlRowsMax, counted only.
	PassedHidden int
}

// tripleRow is one triple as the page shows it; every text is what a
// terminal would show (termsafe), html/template escapes it for the page.
type tripleRow struct {
	ID, Test, Seed    string
	Label             flakegate.Label
	Tag, Note         string
	Attempts, Seconds string
	Output, Grant     string
	Reproduce         string
}

// SummaryHTML writes one check summary as a self-contained page (inline
// CSS, no scripts, no requests): the verdict and a count per label, the
// property triples, each suite grouped by package or file with a count
// per label per group, the triples that did not pass shown and the
// passes folded (a group opens with a click), and the new tests.
func SummaryHTML(w io.Writer, s *flakegate.Summary) error {
	props, suites := splitSuites(s)
	p := summaryPage{S: s, Counts: CountResults(s), Unsandboxed: s.Isolation == "none", NewPolicy: newTestPolicy(s)}
	for _, l := range chartLegendOrder {
		if n := p.Counts.Labels[l]; n > 0 {
			p.Legend = append(p.Legend, legendItem{Label: l, Color: labelColor(l), Count: n})
		}
	}
	for _, r := range props {
		p.Props = append(p.Props, newTripleRow(r, false))
	}
	p.PropsShown, p.PropsMore, p.PropsHidden = splitRows(p.Props)
	for _, sv := range suites {
		p.Suites = append(p.Suites, newSuitePage(sv))
	}
	for _, t := range s.NewTests {
		t.Suite, t.Path, t.Name, t.Reason = oneLine(t.Suite), oneLine(t.Path), oneLine(t.Name), oneLine(t.Reason)
		t.Results = append([]string(nil), t.Results...)
		for i := range t.Results {
			t.Results[i] = oneLine(t.Results[i])
		}
		p.NewTests = append(p.NewTests, t)
	}
	sort.SliceStable(p.NewTests, func(i, j int) bool { return newTestFailed(p.NewTests[i]) && !newTestFailed(p.NewTests[j]) })
	for _, t := range p.NewTests {
		if newTestFailed(t) {
			p.NewFailed++
		}
	}
	return summaryTemplate().Execute(w, p)
}

func newSuitePage(sv *suiteView) suitePage {
	sp := suitePage{suiteView: sv, Path: oneLine(sv.Path), Columns: sv.columns(), Frozen: sv.Counts.Skipped > 0}
	sp.NumCols = 1 + len(sp.Columns)
	if sp.Frozen {
		sp.NumCols++
	}
	for _, g := range sv.Groups {
		gp := groupPage{Key: oneLine(g.Key), Total: g.Counts.Total}
		for _, l := range sp.Columns {
			gp.Cells = append(gp.Cells, g.Counts.Labels[l])
		}
		if sp.Frozen {
			gp.Cells = append(gp.Cells, g.Counts.Skipped)
		}
		for _, r := range g.NotPassed {
			gp.NotPassed = append(gp.NotPassed, newTripleRow(r, true))
		}
		for i, r := range g.Passed {
			if i == htmlRowsMax {
				gp.PassedHidden = len(g.Passed) - htmlRowsMax
				break
			}
			gp.Passed = append(gp.Passed, newTripleRow(r, true))
		}
		if len(g.NotPassed) > 0 {
			sp.Dirty = append(sp.Dirty, gp)
		} else {
			sp.Clean = append(sp.Clean, gp)
			sp.CleanPassed += len(g.Passed)
		}
	}
	return sp
}

// newTripleRow renders r; in a suite's group the test column names the
// test alone when the group is its file.
func newTripleRow(r *flakegate.Result, inSuite bool) tripleRow {
	row := tripleRow{ID: oneLine(idOf(r)), Test: oneLine(idOf(r)), Seed: oneLine(seedText(r)), Label: r.Label, Tag: string(r.Label), Seconds: seconds(r.Seconds)}
	if inSuite && r.Name != "" {
		row.Test = oneLine(r.Name)
		if groupKey(r.PropertyPath) != r.PropertyPath {
			row.Test = oneLine(r.PropertyPath[strings.LastIndexByte(r.PropertyPath, '/')+1:] + "::" + r.Name)
		}
	}
	if passed(r) {
		return row
	}
	if r.Skipped {
		row.Tag += " " + FrozenWording
		row.Attempts = "none: the freeze skipped it"
	} else {
		row.Attempts = oneLine(attemptCell(r))
	}
	row.Note = oneLine(suiteNote(r))
	if r.Label == flakegate.Scheduler && !r.Skipped {
		row.Grant = grantCommand(r)
		if flakegate.NotBaseFlake(r.FlakeOrigin) {
			row.Grant += " --allow-new-flake"
		}
		row.Grant = oneLine(row.Grant)
	}
	if r.Label.Reject() {
		row.Output = termsafe.String(failureText(r))
		row.Reproduce = oneLine(r.Reproduce)
	}
	return row
}
