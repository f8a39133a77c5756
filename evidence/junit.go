package evidence

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/flakegate/flakegate/attempt"

	"github.com/flakegate/flakegate/internal/lazyre"
)

// PytestJUnit reads a pytest batch: its output (run with -rA, and -v)
// and the JUnit XML file it wrote (-o junit_family=xunit1 --junitxml=F;
// batchplan.go builds that command), and reports each node's result.
// Write it the batch's output, give it the file (SetJUnit), then call
// Report for each member's node id.
//
// What the code under test can forge: its output (pytest shows a passed
// test's captured output under -rA, and a test can write to the real
// stdout), and any file in the sandbox, the JUnit file included, even
// after pytest wrote it (an atexit hook). So a result needs two reports
// that agree: the XML says passed (or failed), and pytest's short summary
// has exactly one PASSED (or FAILED) line for the node and none of the
// other. A line a test prints for another node adds a second line, and a
// rewritten file disagrees with pytest's own summary: that node is an
// error, never a pass. A file with more than one XML document, or that
// names a node twice, is no report.
type PytestJUnit struct {
	mu       sync.Mutex
	buf      []byte
	over     bool
	junit    []byte
	junitErr error
	parsed   bool
	docErr   string
	cases    map[string][]junitCase
	passed   map[string]int
	failed   map[string]int
	errored  map[string]int
	ended    map[string]bool
	running  string // the node a verbose line shows started last, without an end
	last     string
	// notFound are the nodes pytest says it cannot find; it then runs
	// no test at all.
	notFound map[string]bool
	// stopped is set when pytest stopped early (-x, --maxfail): the
	// members after the stop never ran.
	stopped bool
}

type junitCase struct {
	result  string // pass, fail, error, skip
	elapsed float64
	text    string
	props   string // its recorded properties, "name=value" lines
}

// maxBatchOutput bounds what PytestJUnit keeps; a batch that prints more
// has no report flakegate trusts.
const maxBatchOutput = 64 << 20

// NewPytestJUnit returns an empty reader.
func NewPytestJUnit() *PytestJUnit { return &PytestJUnit{} }

// Write keeps the output.
func (p *PytestJUnit) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.buf)+len(b) > maxBatchOutput {
		p.over = true
		return len(b), nil
	}
	p.buf = append(p.buf, b...)
	return len(b), nil
}

const junitProlog = `<?xml version="1.0" encoding="utf-8"?>`

// SetJUnit gives the JUnit XML file's bytes, or why it could not be read.
func (p *PytestJUnit) SetJUnit(b []byte, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.junit, p.junitErr = b, err
}

var (
	pytestVerboseEndRe   = lazyre.New(`^(\S+::\S+) (PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\b`)
	pytestVerboseStartRe = lazyre.New(`^(\S+::\S+) *$`)
	pytestErrorRe        = lazyre.New(`^ERROR (\S+)`)
	pytestNotFoundRe     = lazyre.New(`ERROR: not found: (\S+)`)
	pytestStoppedRe      = lazyre.New(`^!+ (stopping after \d+ failures?|Interrupted: \d+ (failed|errors?))`)
)

type junitXML struct {
	Suites []struct {
		Cases []struct {
			ClassName string  `xml:"classname,attr"`
			Name      string  `xml:"name,attr"`
			File      string  `xml:"file,attr"`
			Time      float64 `xml:"time,attr"`
			Failure   *struct {
				Message string `xml:"message,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
			Error *struct {
				Message string `xml:"message,attr"`
			} `xml:"error"`
			Skipped    *struct{} `xml:"skipped"`
			Properties []struct {
				Name  string `xml:"name,attr"`
				Value string `xml:"value,attr"`
			} `xml:"properties>property"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func (p *PytestJUnit) parse() {
	if p.parsed {
		return
	}
	p.parsed = true
	p.passed, p.failed, p.errored, p.ended = map[string]int{}, map[string]int{}, map[string]int{}, map[string]bool{}
	p.cases = map[string][]junitCase{}
	p.notFound = map[string]bool{}
	for _, l := range strings.Split(string(p.buf), "\n") {
		l = strings.TrimRight(l, "\r")
		if strings.IndexByte(l, 0x1b) >= 0 {
			l = ansiRe.ReplaceAllString(l, "")
		}
		if s := strings.TrimSpace(l); s != "" {
			p.last = clip(s)
		}
		if m := pytestPassedRe.FindStringSubmatch(l); m != nil {
			p.passed[m[1]]++
		}
		if m := pytestFailedRe.FindStringSubmatch(l); m != nil {
			p.failed[m[1]]++
		}
		if pytestStoppedRe.MatchString(l) {
			p.stopped = true
		}
		if m := pytestNotFoundRe.FindStringSubmatch(l); m != nil {
			p.notFound[m[1]] = true
		}
		if m := pytestErrorRe.FindStringSubmatch(l); m != nil {
			p.errored[m[1]]++
		}
		if m := pytestVerboseEndRe.FindStringSubmatch(l); m != nil {
			p.ended[m[1]] = true
			if p.running == m[1] {
				p.running = ""
			}
		} else if m := pytestVerboseStartRe.FindStringSubmatch(l); m != nil {
			p.running = m[1]
		}
	}
	if p.over {
		p.docErr = fmt.Sprintf("the batch printed more than %d MiB: no report is read from it", maxBatchOutput>>20)
		return
	}
	if p.junitErr != nil {
		p.docErr = "no JUnit XML report: " + p.junitErr.Error()
		return
	}
	if n := bytes.Count(p.junit, []byte(junitProlog)); n != 1 {
		p.docErr = strconv.Itoa(n) + " XML documents in the JUnit file: a test may have written one (never a pass)"
		return
	}
	var doc junitXML
	d := xml.NewDecoder(bytes.NewReader(p.junit))
	if err := d.Decode(&doc); err != nil {
		p.docErr = "the JUnit XML report does not parse: " + err.Error()
		return
	}
	if _, err := d.Token(); err != io.EOF {
		p.docErr = "the JUnit XML file holds more than one document: a test may have written one (never a pass)"
		return
	}
	for _, s := range doc.Suites {
		for _, c := range s.Cases {
			jc := junitCase{result: "pass", elapsed: c.Time}
			for _, pr := range c.Properties {
				jc.props += pr.Name + "=" + pr.Value + "\n"
			}
			switch {
			case c.Failure != nil:
				jc.result, jc.text = "fail", c.Failure.Message+"\n"+c.Failure.Text
			case c.Error != nil:
				jc.result, jc.text = "error", c.Error.Message
			case c.Skipped != nil:
				jc.result = "skip"
			}
			k := c.ClassName + "\x00" + c.Name
			p.cases[k] = append(p.cases[k], jc)
		}
	}
}

// junitNode is the pytest node id of a test case in file: the file, the
// classes the class name adds to the file's module, and the name; "" when
// the class name is not of that module. The case's own file attribute is
// not used: it names where the test function is defined, which for a
// generated test (a Hypothesis state machine's runTest) is another file.
func junitNode(file, class, name string) string {
	if file == "" || name == "" {
		return ""
	}
	mod := strings.ReplaceAll(strings.TrimSuffix(file, ".py"), "/", ".")
	switch {
	case class == mod:
		return file + "::" + name
	case strings.HasPrefix(class, mod+"."):
		return file + "::" + strings.ReplaceAll(class[len(mod)+1:], ".", "::") + "::" + name
	}
	return ""
}

// Report is what the batch says of node (path::name).
func (p *PytestJUnit) Report(node string) TestReport {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.parse()
	for nf := range p.notFound {
		// pytest names the node by its absolute path in the tree.
		if nf == node || strings.HasSuffix(nf, "/"+node) {
			return TestReport{Result: attempt.Errored, Reason: "pytest cannot find " + node + " (\"ERROR: not found\"), and runs no test then"}
		}
	}
	if len(p.notFound) > 0 {
		return TestReport{Rerun: true}
	}
	if p.docErr != "" {
		// Without a report only the running member is known for sure: one
		// a verbose line shows ended has no result anyone can trust, and
		// runs again like one that never started.
		r := TestReport{Result: attempt.Errored, Reason: p.docErr, Started: p.running == node}
		if !r.Started {
			r.Result = ""
		}
		if p.last != "" {
			r.Reason += "; the last line is " + strconv.Quote(p.last)
		}
		return r
	}
	// A node may select several cases: a class its methods, a function
	// its parametrized cases.
	file, _, _ := strings.Cut(node, "::")
	names := map[string]string{} // case node -> its key
	for k := range p.cases {
		class, name, _ := strings.Cut(k, "\x00")
		n := junitNode(file, class, name)
		if n != "" && (n == node || strings.HasPrefix(n, node+"::") || strings.HasPrefix(n, node+"[")) {
			names[n] = k
		}
	}
	if len(names) == 0 && p.stopped {
		return TestReport{Rerun: true} // pytest stopped before it (-x, --maxfail)
	}
	if len(names) == 0 {
		return TestReport{Result: attempt.Errored, Reason: node + " is absent from the JUnit XML report"}
	}
	order := make([]string, 0, len(names))
	for n := range names {
		order = append(order, n)
	}
	sort.Strings(order)
	r := TestReport{Started: true, Ended: true, Result: attempt.Pass}
	var out []byte
	for _, n := range order {
		c := p.caseReport(n, p.cases[names[n]])
		r.Elapsed += c.Elapsed
		r.Evidence += c.Evidence
		if c.Output != "" {
			out = append(out, c.Output...)
		}
		switch {
		case c.Result == attempt.Errored && r.Result != attempt.Errored:
			r.Result, r.Reason = attempt.Errored, c.Reason
		case c.Result == attempt.Fail && r.Result == attempt.Pass:
			r.Result = attempt.Fail
		}
	}
	r.Output = tail(out)
	return r
}

// caseReport is the result of one JUnit case, named by its node id.
func (p *PytestJUnit) caseReport(node string, cs []junitCase) TestReport {
	r := TestReport{Elapsed: time.Duration(cs[0].elapsed * float64(time.Second)), Output: tail([]byte(cs[0].text)), Evidence: cs[0].props}
	pass, fail, errs := p.passed[node], p.failed[node], p.errored[node]
	summary := fmt.Sprintf("the short summary has %d PASSED, %d FAILED and %d ERROR lines for it", pass, fail, errs)
	switch {
	case len(cs) > 1:
		r.Result, r.Reason = attempt.Errored, twice(node, len(cs))
	case cs[0].result == "pass" && pass == 1 && fail == 0 && errs == 0:
		r.Result = attempt.Pass
	case cs[0].result == "fail" && fail == 1 && pass == 0 && errs == 0:
		r.Result = attempt.Fail
	case cs[0].result == "pass" || cs[0].result == "fail":
		r.Result, r.Reason = attempt.Errored, "the JUnit report says "+node+" "+cs[0].result+"ed but "+summary+" (a test may have printed one; never a pass)"
	case cs[0].result == "skip":
		r.Result, r.Reason = attempt.Errored, node+" was skipped"
	default:
		r.Result, r.Reason = attempt.Errored, node+" errored: "+strconv.Quote(clip(cs[0].text))
	}
	return r
}
