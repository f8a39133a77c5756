package suites

import (
	"fmt"
	"strings"

	"github.com/flakegate/flakegate/config"
)

// Notes are the lines a check says of suite i's base list l: the listed
// tests no triple can name, the tests the base skips (or that pytest
// could not tell), and the functions go test does not run as the suite
// runs it; none of them is gated.
func Notes(i int, l *List) []string {
	var lines []string
	if l.Unnamed > 0 {
		some := make([]string, len(l.UnnamedSome))
		for k, id := range l.UnnamedSome {
			some[k] = ShortID(id)
		}
		verb := "tests are"
		if l.Unnamed == 1 {
			verb = "test is"
		}
		lines = append(lines, fmt.Sprintf("suites[%d]: %d listed %s not gated: a name longer than %d bytes or with a control character cannot be a triple's (%s)",
			i, l.Unnamed, verb, config.MaxNameLength, strings.Join(some, ", ")))
	}
	lines = append(lines, skipNotes(i, l)...)
	for _, kind := range []string{NotRunBench, NotRunExample} {
		k := l.NotRun[kind]
		if k == nil {
			continue
		}
		what := fmt.Sprintf("%d functions are", k.N)
		if k.N == 1 {
			what = "1 function is"
		}
		lines = append(lines, fmt.Sprintf("suites[%d]: %s not gated: %s (%s)", i, what, kind, strings.Join(k.Some, ", ")))
	}
	return lines
}

// skipNotes say which listed tests of suite i the base skips, and so
// are not gated, or that pytest could not tell them.
func skipNotes(i int, l *List) []string {
	var lines []string
	if l.SkipPlan != "" {
		lines = append(lines, fmt.Sprintf("suites[%d]: cannot tell which tests the base skips (%s): a test that skips itself is INCOMPLETE in every check; name it in exclude:", i, l.SkipPlan))
	}
	if len(l.Skips) == 0 {
		return lines
	}
	var some []string
	for _, t := range l.Tests {
		if w := l.Skips[t.File+"::"+t.Name]; w != "" && len(some) < 3 {
			some = append(some, ShortID(t.File+"::"+t.Name)+" "+w)
		}
	}
	verb, them := "tests are", "them"
	if len(l.Skips) == 1 {
		verb, them = "test is", "it"
	}
	return append(lines, fmt.Sprintf("suites[%d]: %d listed %s not gated: the base skips %s or expects %s to fail, so no run of %s passes (%s)",
		i, len(l.Skips), verb, them, them, them, strings.Join(some, ", ")))
}
