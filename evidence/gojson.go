package evidence

import (
	"bytes"
	"cmp"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/flakegate/flakegate/attempt"
)

// GoJSON reads the output of go test -json (test2json's events, one JSON
// object a line, with any other line the go command prints between them)
// and reports each test's result by package and name. Write it the
// batch's output, then call Report for each member.
//
// What the code under test can forge: test2json parses the test binary's
// stdout, and a test can print the framing byte and a "--- PASS: B" line
// for another test B of its package (a line without the framing byte is
// only output). The Package of an event is the go command's, so a test
// cannot speak for another package. So a test is a pass only when its
// package reports exactly one run and exactly one result for it: a forged
// line for B adds a second one and B is an error, never a pass.
type GoJSON struct {
	mu      sync.Mutex
	partial []byte
	tests   map[goTestID]*goTest
	pkgs    map[string]*goPkg
	other   string // the last line that is no event
}

type goTestID struct{ pkg, test string }

type goTest struct {
	runs    int
	results []string // pass, fail, skip, in order
	elapsed float64
	out     []byte
}

type goPkg struct {
	result string // pass, fail or skip of the package, "" before its end
	build  string // the first build error line
	out    []byte
	ran    []string // its top-level tests in the order of their run events
}

// goEvent is one test2json event.
type goEvent struct {
	Action     string
	Package    string
	ImportPath string
	Test       string
	Elapsed    float64
	Output     string
}

// NewGoJSON returns an empty reader.
func NewGoJSON() *GoJSON {
	return &GoJSON{tests: map[goTestID]*goTest{}, pkgs: map[string]*goPkg{}}
}

// Write reads events, line by line.
func (g *GoJSON) Write(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	data := p
	if len(g.partial) > 0 {
		data = append(g.partial, p...)
		g.partial = nil
	}
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		g.line(data[:i])
		data = data[i+1:]
	}
	if len(data) > 0 {
		if len(data) > 1<<20 {
			data = data[len(data)-1<<20:] // an event this long is not one test2json writes
		}
		g.partial = append([]byte(nil), data...)
	}
	return len(p), nil
}

func (g *GoJSON) pkg(name string) *goPkg {
	p := g.pkgs[name]
	if p == nil {
		p = &goPkg{}
		g.pkgs[name] = p
	}
	return p
}

func (g *GoJSON) line(l []byte) {
	l = bytes.TrimRight(l, "\r")
	var ev goEvent
	if len(l) == 0 || l[0] != '{' || json.Unmarshal(l, &ev) != nil || ev.Action == "" {
		if s := strings.TrimSpace(string(l)); s != "" {
			g.other = clip(s)
		}
		return
	}
	if ev.Action == "build-output" || ev.Action == "build-fail" {
		p := g.pkg(ev.ImportPath)
		if o := strings.TrimSpace(ev.Output); o != "" && p.build == "" && !strings.HasPrefix(o, "#") {
			p.build = clip(o)
		}
		return
	}
	if ev.Test == "" {
		p := g.pkg(ev.Package)
		switch ev.Action {
		case "pass", "fail", "skip":
			p.result = ev.Action
		case "output":
			p.out = appendTail(p.out, ev.Output)
			if o := strings.TrimSpace(ev.Output); p.build == "" && goCompileRe.MatchString(o) && !goNoiseRe.MatchString(o) {
				p.build = clip(o)
			}
		}
		return
	}
	id := goTestID{ev.Package, ev.Test}
	t := g.tests[id]
	if t == nil {
		t = &goTest{}
		g.tests[id] = t
	}
	switch ev.Action {
	case "run":
		t.runs++
		if !strings.Contains(ev.Test, "/") {
			p := g.pkg(ev.Package)
			p.ran = append(p.ran, ev.Test)
		}
	case "pass", "fail", "skip":
		t.results = append(t.results, ev.Action)
		t.elapsed = ev.Elapsed
	case "output":
		t.out = appendTail(t.out, ev.Output)
	}
}

// appendTail appends s to b, keeping the last DefaultTailBytes.
func appendTail(b []byte, s string) []byte {
	b = append(b, s...)
	if len(b) > 2*attempt.DefaultTailBytes {
		b = append([]byte(nil), b[len(b)-attempt.DefaultTailBytes:]...)
	}
	return b
}

// Report is what the events say of test name in package pkg (an import
// path). A subtest's events are its parent's business: only the top-level
// test named counts.
func (g *GoJSON) Report(pkg, name string) TestReport {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.partial) > 0 {
		g.line(g.partial)
		g.partial = nil
	}
	t := g.tests[goTestID{pkg, name}]
	p := g.pkgs[pkg]
	if t == nil || t.runs == 0 && len(t.results) == 0 {
		r := TestReport{}
		switch {
		case p != nil && p.build != "":
			r.Result, r.Reason = attempt.Errored, "go test: build failed: "+quote(p.build)
		case p != nil && p.result != "":
			r.Result, r.Reason = attempt.Errored, name+" is absent from the report of "+pkg+", which ended "+p.result
		}
		if p != nil {
			r.Output = tail(p.out)
		}
		return r
	}
	r := TestReport{Started: t.runs > 0, Ended: len(t.results) > 0, Elapsed: time.Duration(t.elapsed * float64(time.Second)), Output: tail(t.out)}
	switch {
	case t.runs > 1:
		r.Result, r.Reason = attempt.Errored, twice(name+" ("+pkg+") run", t.runs)
	case len(t.results) > 1:
		r.Result, r.Reason = attempt.Errored, twice(name+" ("+pkg+")", len(t.results))
	case len(t.results) == 0:
		r.Result, r.Reason = attempt.Errored, name+" started but its result is absent from the report"
		if p != nil && p.result != "" {
			r.Reason += " (" + pkg + " ended " + p.result + ")"
		}
	case t.runs == 0:
		r.Result, r.Reason = attempt.Errored, name+" has a result but never a run event in the report"
	case t.results[0] == "pass":
		r.Result = attempt.Pass
	case t.results[0] == "fail":
		r.Result = attempt.Fail
	default:
		r.Result, r.Reason = attempt.Errored, name+" was skipped"
	}
	return r
}

// Package says how the events end package pkg (an import path): its
// final action (pass, fail, skip; "" when there is none) and its
// top-level tests in the order their run events came.
func (g *GoJSON) Package(pkg string) (result string, ran []string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.partial) > 0 {
		g.line(g.partial)
		g.partial = nil
	}
	p := g.pkgs[pkg]
	if p == nil {
		return "", nil
	}
	return p.result, append([]string(nil), p.ran...)
}

// Skipped lists the top-level tests whose one result was skip, as
// package (import path) and name, sorted.
func (g *GoJSON) Skipped() [][2]string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.partial) > 0 {
		g.line(g.partial)
		g.partial = nil
	}
	var out [][2]string
	for id, t := range g.tests {
		if !strings.Contains(id.test, "/") && len(t.results) == 1 && t.results[0] == "skip" {
			out = append(out, [2]string{id.pkg, id.test})
		}
	}
	slices.SortFunc(out, func(a, b [2]string) int { return cmp.Or(strings.Compare(a[0], b[0]), strings.Compare(a[1], b[1])) })
	return out
}

// Other is the last line of the output that was no event ("" when none):
// what the go command said when it failed before any test.
func (g *GoJSON) Other() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.other
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
