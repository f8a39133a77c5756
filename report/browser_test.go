package report

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/flakegate/flakegate/internal/golden"
)

// chromiumPath finds the browser: $FLAKEGATE_CHROMIUM, Debian's
// /usr/bin/chromium, or one on $PATH. Under CI=true a missing browser
// fails the test instead of skipping it.
func chromiumPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("FLAKEGATE_CHROMIUM"); p != "" {
		return p
	}
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium"
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is missing (apt-get install -y chromium); CI must run the browser test")
	}
	t.Skip("chromium not installed")
	return ""
}

// artifactDir is $FLAKEGATE_ARTIFACTS (kept after the run) or a temporary
// folder.
func artifactDir(t *testing.T) string {
	if d := os.Getenv("FLAKEGATE_ARTIFACTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

// pageFacts is what the page reports about itself after layout.
type pageFacts struct {
	FreezeRows        int     `json:"freezeRows"`
	VisibleFreezeRows int     `json:"visibleFreezeRows"`
	FirstFreezeRow    string  `json:"firstFreezeRow"`
	ChartVisible      bool    `json:"chartVisible"`
	ChartRows         int     `json:"chartRows"`
	VisibleBars       int     `json:"visibleBars"`
	ChartWidth        float64 `json:"chartWidth"`
	VisibleTopRows    int     `json:"visibleTopRows"`
	VisibleRemoved    int     `json:"visibleRemoved"`
	ScrollWidth       float64 `json:"scrollWidth"`
	ViewportWidth     float64 `json:"viewportWidth"`
}

const pageFactsJS = `(() => {
  const visible = el => {
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0 &&
      el.checkVisibility({contentVisibilityAuto: true, opacityProperty: true, visibilityProperty: true});
  };
  const rows = [...document.querySelectorAll('tr.freeze')];
  const chart = document.querySelector('#label-chart');
  const bars = chart ? [...chart.querySelectorAll('g.row rect[fill]')] : [];
  return {
    freezeRows: rows.length,
    visibleFreezeRows: rows.filter(visible).length,
    firstFreezeRow: rows.length ? rows[0].innerText : '',
    chartVisible: !!chart && visible(chart),
    chartRows: chart ? chart.querySelectorAll('g.row').length : 0,
    visibleBars: bars.filter(visible).length,
    chartWidth: chart ? chart.getBoundingClientRect().width : 0,
    visibleTopRows: [...document.querySelectorAll('#scheduler-table tbody tr')].filter(visible).length,
    visibleRemoved: [...document.querySelectorAll('tr.removed')].filter(visible).length,
    scrollWidth: document.documentElement.scrollWidth,
    viewportWidth: window.innerWidth,
  };
})()`

// TestHTMLInBrowser opens the report in headless Chromium and checks that
// the freeze rows and the chart are laid out and visible, that the page
// asks for nothing over the network, and saves screenshots. With -update
// it also refreshes docs/report.png.
func TestHTMLInBrowser(t *testing.T) {
	if testing.Short() && os.Getenv("CI") != "true" {
		t.Skip("starts a browser; not in -short")
	}
	exe := chromiumPath(t)
	artifacts := artifactDir(t)

	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	browser, cancelBrowser := chromedp.NewContext(allocCtx)
	defer cancelBrowser()
	if err := chromedp.Do(browser); err != nil {
		t.Fatalf("start %s: %v", exe, err)
	}

	type testCase struct {
		name                      string
		records, freezes, removed int
		// shownFreezes is how many freeze rows are visible without opening
		// the <details>.
		shownFreezes int
		docs         bool // the screenshot the README shows
		fullPage     bool // also a screenshot of the whole page
	}
	run := func(t *testing.T, tc testCase) {
		store := bigStore(t, tc.records, tc.freezes, tc.removed)
		if tc.docs {
			store = docsStore(t)
		}
		d, err := LoadHTMLData(ctx, store, reportNow)
		if err != nil {
			t.Fatal(err)
		}
		var page bytes.Buffer
		if err := HTML(&page, d); err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(t.TempDir(), "report.html")
		if err := os.WriteFile(file, page.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}

		var mu sync.Mutex
		var requests []string
		tab, cancelTab := chromedp.NewContext(browser, chromedp.WithListener(func(ev any) {
			if e, ok := ev.(*network.EventRequestWillBeSent); ok {
				mu.Lock()
				requests = append(requests, e.Request.URL)
				mu.Unlock()
			}
		}))
		defer cancelTab()
		if _, err := chromedp.Call(tab, network.Enable, network.EnableParams{}); err != nil {
			t.Fatal(err)
		}
		err = chromedp.Do(tab,
			chromedp.EmulateViewport(1280, 1600),
			chromedp.Navigate("file://"+file),
			chromedp.WaitVisible(chromedp.ID("label-chart")),
		)
		if err != nil {
			t.Fatal(err)
		}
		facts, err := chromedp.Run(tab, chromedp.Evaluate[pageFacts](pageFactsJS))
		if err != nil {
			t.Fatal(err)
		}
		top, err := chromedp.Run(tab, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		shots := map[string][]byte{tc.name + "-top.png": top}
		if tc.fullPage {
			full, err := chromedp.Run(tab, chromedp.FullScreenshot(100))
			if err != nil {
				t.Fatal(err)
			}
			shots[tc.name+"-full.png"] = full
		}

		if facts.FreezeRows != tc.freezes || facts.VisibleFreezeRows != tc.shownFreezes {
			t.Errorf("%d freeze rows, %d visible; want %d and %d", facts.FreezeRows, facts.VisibleFreezeRows, tc.freezes, tc.shownFreezes)
		}
		first := d.Freezes[0]
		for _, want := range []string{first.Owner, first.Seed.String(), first.PropertyPath} {
			if !strings.Contains(facts.FirstFreezeRow, want) {
				t.Errorf("first freeze row %q lacks %q", facts.FirstFreezeRow, want)
			}
		}
		segments := 0
		for _, p := range d.Properties[:min(len(d.Properties), htmlChartRows)] {
			segments += len(p.Counts)
		}
		if !facts.ChartVisible || facts.ChartRows != min(len(d.Properties), htmlChartRows) || facts.VisibleBars != segments {
			t.Errorf("chart visible=%v rows=%d bars=%d; want visible, %d rows, %d bars", facts.ChartVisible, facts.ChartRows, facts.VisibleBars, len(d.Properties), segments)
		}
		if facts.ChartWidth < 800 {
			t.Errorf("chart is %.0fpx wide, want the page width", facts.ChartWidth)
		}
		if facts.VisibleTopRows != min(len(d.Schedulers), htmlTopTriples) || facts.VisibleRemoved != min(tc.removed, htmlRowsShown) {
			t.Errorf("visible SCHEDULER rows %d, removed rows %d", facts.VisibleTopRows, facts.VisibleRemoved)
		}
		if facts.ScrollWidth > facts.ViewportWidth {
			t.Errorf("page scrolls sideways: %.0fpx wide in a %.0fpx window", facts.ScrollWidth, facts.ViewportWidth)
		}
		// The rows past the first hundred sit in a closed <details>; opened,
		// every one of them shows.
		if _, err := chromedp.Run(tab, chromedp.Evaluate[bool](`(() => { document.querySelectorAll('details').forEach(d => d.open = true); return true })()`)); err != nil {
			t.Fatal(err)
		}
		opened, err := chromedp.Run(tab, chromedp.Evaluate[pageFacts](pageFactsJS))
		if err != nil {
			t.Fatal(err)
		}
		if opened.VisibleFreezeRows != tc.freezes || opened.VisibleRemoved != tc.removed {
			t.Errorf("with <details> open: %d of %d freeze rows and %d of %d removed rows visible", opened.VisibleFreezeRows, tc.freezes, opened.VisibleRemoved, tc.removed)
		}
		if opened.ScrollWidth > opened.ViewportWidth {
			t.Errorf("opened page scrolls sideways: %.0fpx wide in a %.0fpx window", opened.ScrollWidth, opened.ViewportWidth)
		}

		mu.Lock()
		for _, u := range requests {
			if !strings.HasPrefix(u, "file://") {
				t.Errorf("the page requested %s", u)
			}
		}
		mu.Unlock()

		for name, png := range shots {
			if !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
				t.Fatalf("%s is not a PNG", name)
			}
			if err := os.WriteFile(filepath.Join(artifacts, name), png, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("screenshots in %s", artifacts)
		if tc.docs && golden.Update() {
			if err := os.WriteFile(filepath.Join("..", "docs", "report.png"), top, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tc := range []testCase{
		{name: "busy", records: 3000, freezes: 9, removed: 40, shownFreezes: 9, docs: true, fullPage: true},
		{name: "thousands", records: 3000, freezes: 1500, removed: 600, shownFreezes: htmlRowsShown},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}
