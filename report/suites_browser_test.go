package report

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// suitePageFacts is what the summary page reports about itself.
type suitePageFacts struct {
	Groups          int      `json:"groups"`
	VisibleGroups   int      `json:"visibleGroups"`
	OpenGroups      []string `json:"openGroups"`
	Pkg03Cells      []string `json:"pkg03Cells"`
	Pkg03Total      string   `json:"pkg03Total"`
	NotPassedRows   int      `json:"notPassedRows"`
	VisibleNotPass  int      `json:"visibleNotPassed"`
	FailingText     string   `json:"failingText"`
	PassRows        int      `json:"passRows"`
	VisiblePassRows int      `json:"visiblePassRows"`
	VisiblePkg00    int      `json:"visiblePkg00"`
	VisiblePkg03    int      `json:"visiblePkg03"`
	NewTests        string   `json:"newTests"`
	ScrollWidth     float64  `json:"scrollWidth"`
	ViewportWidth   float64  `json:"viewportWidth"`
}

const suitePageFactsJS = `(() => {
  const visible = el => {
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && el.checkVisibility({opacityProperty: true, visibilityProperty: true});
  };
  const groups = [...document.querySelectorAll('details.group')];
  const pkg03 = document.querySelector('details.group[data-group="pkg03"]');
  const notPassed = [...document.querySelectorAll('tr.triple.not-passed')];
  const passes = [...document.querySelectorAll('tr.triple.pass')];
  const rowsOf = g => [...document.querySelectorAll('details.group[data-group="' + g + '"] tr.triple.pass')].filter(visible).length;
  return {
    groups: groups.length,
    visibleGroups: groups.filter(g => visible(g.querySelector('summary'))).length,
    openGroups: groups.filter(g => g.open).map(g => g.dataset.group),
    pkg03Cells: pkg03 ? [...pkg03.querySelectorAll('summary .cell')].map(c => c.innerText) : [],
    pkg03Total: pkg03 ? pkg03.querySelector('summary .num').innerText : '',
    notPassedRows: notPassed.length,
    visibleNotPassed: notPassed.filter(visible).length,
    failingText: notPassed.filter(visible).map(r => r.innerText).join('\n'),
    passRows: passes.length,
    visiblePassRows: passes.filter(visible).length,
    visiblePkg00: rowsOf('pkg00'),
    visiblePkg03: rowsOf('pkg03'),
    newTests: document.querySelector('#new-test-list') ? document.querySelector('#new-test-list').innerText : '',
    scrollWidth: document.documentElement.scrollWidth,
    viewportWidth: window.innerWidth,
  };
})()`

// TestSuiteHTMLInBrowser opens the summary page of 2,000 tests × 3
// seeds in headless Chromium: every package shows its counts, the
// groups with a triple that did not pass are open with those triples
// visible and their passes folded, a click opens a group, and the page
// asks for nothing over the network.
func TestSuiteHTMLInBrowser(t *testing.T) {
	if testing.Short() && os.Getenv("CI") != "true" {
		t.Skip("starts a browser; not in -short")
	}
	exe := chromiumPath(t)
	artifacts := artifactDir(t)
	s := suiteSummary(sixThousand)
	var page bytes.Buffer
	if err := SummaryHTML(&page, s); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "summary.html")
	if err := os.WriteFile(file, page.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	tab, requests := openInChromium(t, exe, file)
	facts := func() suitePageFacts {
		f, err := chromedp.Run(tab, chromedp.Evaluate[suitePageFacts](suitePageFactsJS))
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	shot := func(name string) {
		png, err := chromedp.Run(tab, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(artifacts, name), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	f := facts()
	shot("suite-top.png")
	// 40 groups; the two with a triple that did not pass are open and
	// visible, the 38 clean ones folded into one closed section.
	if f.Groups != 40 || f.VisibleGroups != 2 || strings.Join(f.OpenGroups, ",") != "pkg03,pkg07" {
		t.Errorf("groups %d, visible %d, open %v; want 40, 2, [pkg03 pkg07]", f.Groups, f.VisibleGroups, f.OpenGroups)
	}
	// pkg03's counts: 150 triples, 149 PASS, 1 PROPERTY, no SCHEDULER, none frozen.
	if f.Pkg03Total != "150" || strings.Join(f.Pkg03Cells, ",") != "149,1,," {
		t.Errorf("pkg03 counts: total %q, cells %q; want 150 and [149 1 '' '']", f.Pkg03Total, f.Pkg03Cells)
	}
	if f.NotPassedRows != 5 || f.VisibleNotPass != 5 {
		t.Errorf("%d rows that did not pass, %d visible; want 5 and 5", f.NotPassedRows, f.VisibleNotPass)
	}
	for _, want := range []string{"a_test.go::TestA005", "PROPERTY", "TestA001", "SCHEDULER", "skipped (frozen)", "alice@example.com"} {
		if !strings.Contains(f.FailingText, want) {
			t.Errorf("the visible failing triples lack %q:\n%s", want, f.FailingText)
		}
	}
	if f.PassRows != 5995 || f.VisiblePassRows != 0 {
		t.Errorf("%d pass rows, %d visible; want 5995 folded", f.PassRows, f.VisiblePassRows)
	}
	if !strings.Contains(f.NewTests, "new test TestNewRace: 4 of 5 passed") {
		t.Errorf("new tests: %q", f.NewTests)
	}

	// A click opens the clean section, another opens pkg00: its 150 passes
	// show, and only those.
	if err := chromedp.Do(tab,
		chromedp.Click(chromedp.CSS(`details.clean > summary`)),
		chromedp.Click(chromedp.CSS(`details.group[data-group="pkg00"] > summary`)),
		chromedp.WaitVisible(chromedp.CSS(`details.group[data-group="pkg00"] tr.triple.pass`))); err != nil {
		t.Fatal(err)
	}
	f = facts()
	shot("suite-pkg00-open.png")
	if f.VisiblePkg00 != 150 || f.VisiblePassRows != 150 {
		t.Errorf("pkg00 opened: %d of its rows visible, %d pass rows in all; want 150 and 150", f.VisiblePkg00, f.VisiblePassRows)
	}
	// pkg03's folded passes open with a click too.
	if err := chromedp.Do(tab, chromedp.Click(chromedp.CSS(`details.group[data-group="pkg03"] details.passes > summary`))); err != nil {
		t.Fatal(err)
	}
	if f = facts(); f.VisiblePkg03 != 149 {
		t.Errorf("pkg03's passes opened: %d visible, want 149", f.VisiblePkg03)
	}
	if f.ScrollWidth > f.ViewportWidth {
		t.Errorf("page scrolls sideways: %.0fpx wide in a %.0fpx window", f.ScrollWidth, f.ViewportWidth)
	}
	for _, u := range requests() {
		if !strings.HasPrefix(u, "file://") {
			t.Errorf("the page requested %s", u)
		}
	}
	t.Logf("screenshots in %s", artifacts)
}

// openInChromium opens file in a headless Chromium tab (closed when the
// test ends) and returns the tab and the URLs it requested so far.
func openInChromium(t *testing.T, exe, file string) (context.Context, func() []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	t.Cleanup(cancel)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(exe), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900))
	t.Cleanup(cancelAlloc)
	var mu sync.Mutex
	var requests []string
	tab, cancelTab := chromedp.NewContext(allocCtx, chromedp.WithListener(func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			mu.Lock()
			requests = append(requests, e.Request.URL)
			mu.Unlock()
		}
	}))
	t.Cleanup(cancelTab)
	if _, err := chromedp.Call(tab, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(tab, chromedp.EmulateViewport(1280, 1600),
		chromedp.Navigate("file://"+file), chromedp.WaitVisible(chromedp.CSS(`#suite-0`))); err != nil {
		t.Fatalf("open the page in %s: %v", exe, err)
	}
	return tab, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), requests...)
	}
}
