package evidence

import (
	"bytes"
	"encoding/json"
	"io"
	"path"
	"strings"
	"sync"
)

// TestStream reads a batch's output as it arrives, line by line, and
// calls ended for each test that its framework's stream says ended: go
// test -json's pass, fail and skip events of a top-level test, pytest's
// verbose lines ("path::name PASSED [ 12%]"). It is progress only: the
// code under test can print such lines for any test, so nothing it says
// is a result (each test's result comes from the report, GoJSON and
// PytestJUnit, once the process ended). outcome is "pass", "fail",
// "skip", "error", "xfail" or "xpass"; test is the name the stream gives
// ("pkg.TestName" for go, the node id for pytest).
type TestStream struct {
	mu      sync.Mutex
	partial []byte
	line    func(l []byte) (test, outcome string, ok bool)
	ended   func(test, outcome string)
}

// NewTestStream returns the stream reader of framework's batch output,
// or nil for a framework whose output names no test as it ends (vitest,
// jest: their reporters write at the end).
func NewTestStream(framework string, ended func(test, outcome string)) *TestStream {
	s := &TestStream{ended: ended}
	switch framework {
	case FrameworkGo:
		s.line = goStreamLine
	case FrameworkPytest:
		s.line = pytestStreamLine
	default:
		return nil
	}
	return s
}

var _ io.Writer = (*TestStream)(nil)

// maxStreamLine bounds a line kept while its end has not arrived.
const maxStreamLine = 1 << 20

// Write reads complete lines and keeps the last partial one.
func (s *TestStream) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	data := p
	if len(s.partial) > 0 {
		data = append(s.partial, p...)
		s.partial = nil
	}
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		if test, outcome, ok := s.line(bytes.TrimRight(data[:i], "\r")); ok {
			s.ended(test, outcome)
		}
		data = data[i+1:]
	}
	if len(data) > 0 && len(data) <= maxStreamLine {
		s.partial = append([]byte(nil), data...)
	}
	return len(p), nil
}

// goStreamLine reads one line of go test -json.
func goStreamLine(l []byte) (string, string, bool) {
	if len(l) == 0 || l[0] != '{' {
		return "", "", false
	}
	var ev goEvent
	if json.Unmarshal(l, &ev) != nil || ev.Test == "" || strings.Contains(ev.Test, "/") {
		return "", "", false
	}
	switch ev.Action {
	case "pass", "fail", "skip":
		return path.Base(ev.Package) + "." + ev.Test, ev.Action, true
	}
	return "", "", false
}

// pytestOutcomes are pytest's verbose words.
var pytestOutcomes = map[string]string{"PASSED": "pass", "FAILED": "fail", "ERROR": "error", "SKIPPED": "skip", "XFAIL": "xfail", "XPASS": "xpass"}

// pytestStreamLine reads one line of pytest -v.
func pytestStreamLine(l []byte) (string, string, bool) {
	s := string(l)
	if strings.IndexByte(s, 0x1b) >= 0 {
		s = ansiRe.ReplaceAllString(s, "")
	}
	m := pytestVerboseEndRe.FindStringSubmatch(s)
	if m == nil {
		return "", "", false
	}
	return m[1], pytestOutcomes[m[2]], true
}
