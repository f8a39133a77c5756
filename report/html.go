package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/flakegate/flakegate"
)

// Limits that keep the HTML report readable with thousands of records:
// the first rows of a table are shown, the next ones sit in a collapsed
// <details>, and the rest are counted.
const (
	htmlRowsShown   = 50
	htmlRowsMax     = 5000
	htmlChartRows   = 40
	htmlTopTriples  = 25
	chartWidth      = 1000
	chartLabelWidth = 360
	chartCountWidth = 90
	chartRowHeight  = 22
	chartRowGap     = 8
	chartTop        = 8
)

//go:embed report.html.tmpl
var htmlSource string

// htmlTemplate is parsed at first use, not at start-up: every flakegate
// process (and every sandbox helper, which is flakegate too) would pay for
// it otherwise.
var htmlTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("report").Funcs(template.FuncMap{
		"short":      flakegate.ShortSHA,
		"seed":       func(s flakegate.Seed) string { return s.String() },
		"when":       when,
		"labelColor": labelColor,
		"pct":        func(f float64) string { return fmt.Sprintf("%.1f", 100*f) },
		"plural":     plural,
		"join":       strings.Join,
		"freqWidth":  func(n, top int) int { return max(4, 120*n/max(top, 1)) },
		"fraction":   func(n, total int) float64 { return float64(n) / float64(max(total, 1)) },
	}).Parse(htmlSource))
})

// labelColors are the chart's colours, one per label; rejects are warm,
// SCHEDULER amber, PASS green.
var labelColors = map[flakegate.Label]string{
	flakegate.Pass:         "#2da44e",
	flakegate.Scheduler:    "#d4a72c",
	flakegate.Property:     "#cf222e",
	flakegate.Fixture:      "#8250df",
	flakegate.Budget:       "#e16f24",
	flakegate.Contaminated: "#bf3989",
	flakegate.Incomplete:   "#6e7781",
}

func labelColor(l flakegate.Label) string {
	if c, ok := labelColors[l]; ok {
		return c
	}
	return "#57606a"
}

func when(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

// chartLegendOrder lists labels from best to worst, the order of each bar.
var chartLegendOrder = []flakegate.Label{
	flakegate.Pass, flakegate.Scheduler, flakegate.Property, flakegate.Fixture,
	flakegate.Budget, flakegate.Contaminated, flakegate.Incomplete,
}

type htmlView struct {
	*HTMLData
	FreezesShown, FreezesMore []FreezeRow
	FreezesHidden             int
	RunsLeft                  int
	Legend                    []legendItem
	Chart                     chart
	PropertiesHidden          int
	Top                       []TripleCount
	TopMax                    int
	RemovedShown, RemovedMore []AuditRow
	RemovedHidden             int
	Voided, Expired           int
}

type legendItem struct {
	Label flakegate.Label
	Color string
	Count int
}

type chart struct {
	Height int
	Rows   []chartRow
	// Geometry the template needs.
	LabelX, BarX, BarWidth, CountX int
}

type chartRow struct {
	Y, TextY    int
	Path, Title string
	Total       int
	Segments    []chartSegment
	LastChecked string
}

type chartSegment struct {
	X, W  float64
	Color string
	Label flakegate.Label
	Count int
}

// HTML writes the report page for d: one self-contained file with inline
// CSS and SVG, no scripts and no external requests.
func HTML(w io.Writer, d *HTMLData) error {
	v := htmlView{HTMLData: d}
	v.FreezesShown, v.FreezesMore, v.FreezesHidden = splitRows(d.Freezes)
	for _, f := range d.Freezes {
		v.RunsLeft += f.ExpiresAfterRuns
	}
	v.RemovedShown, v.RemovedMore, v.RemovedHidden = splitRows(d.Removed)
	for _, r := range d.Removed {
		if r.Action == flakegate.ActionVoid {
			v.Voided++
		} else {
			v.Expired++
		}
	}
	totals := map[flakegate.Label]int{}
	for _, p := range d.Properties {
		for l, n := range p.Counts {
			totals[l] += n
		}
	}
	for _, l := range chartLegendOrder {
		v.Legend = append(v.Legend, legendItem{Label: l, Color: labelColor(l), Count: totals[l]})
	}
	props := d.Properties
	if len(props) > htmlChartRows {
		v.PropertiesHidden = len(props) - htmlChartRows
		props = props[:htmlChartRows]
	}
	v.Chart = buildChart(props)
	v.Top = d.Schedulers
	if len(v.Top) > htmlTopTriples {
		v.Top = v.Top[:htmlTopTriples]
	}
	if len(v.Top) > 0 {
		v.TopMax = v.Top[0].Schedulers
	}
	return htmlTemplate().Execute(w, v)
}

// splitRows cuts rows into those shown, those behind a <details>, and the
// number left out.
func splitRows[T any](rows []T) (shown, more []T, hidden int) {
	if len(rows) > htmlRowsMax {
		hidden = len(rows) - htmlRowsMax
		rows = rows[:htmlRowsMax]
	}
	if len(rows) <= htmlRowsShown {
		return rows, nil, hidden
	}
	return rows[:htmlRowsShown], rows[htmlRowsShown:], hidden
}

// buildChart lays out one 100% stacked bar per property: the share of each
// label among its recent records.
func buildChart(props []PropertyLabels) chart {
	c := chart{
		LabelX:   chartLabelWidth - 12,
		BarX:     chartLabelWidth,
		BarWidth: chartWidth - chartLabelWidth - chartCountWidth,
		CountX:   chartWidth - chartCountWidth + 10,
	}
	y := chartTop
	for _, p := range props {
		row := chartRow{Y: y, TextY: y + chartRowHeight/2 + 5, Total: p.Total, Title: p.PropertyPath}
		row.Path = ellipsizeLeft(p.PropertyPath, 48)
		row.LastChecked = when(p.Last)
		x := float64(c.BarX)
		for _, l := range chartLegendOrder {
			n := p.Counts[l]
			if n == 0 {
				continue
			}
			wd := float64(c.BarWidth) * float64(n) / float64(p.Total)
			row.Segments = append(row.Segments, chartSegment{X: x, W: wd, Color: labelColor(l), Label: l, Count: n})
			x += wd
		}
		c.Rows = append(c.Rows, row)
		y += chartRowHeight + chartRowGap
	}
	c.Height = y + chartTop
	return c
}

// ellipsizeLeft keeps the end of a long path, where the file name is.
func ellipsizeLeft(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return "…" + string(r[len(r)-n+1:])
}
