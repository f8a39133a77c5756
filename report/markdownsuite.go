package report

import (
	"bufio"
	"fmt"
	"sort"

	"github.com/flakegate/flakegate"
)

// mdSuite writes one suite: a row of counts per package or file, then
// only the triples that did not pass (the passes are counted, not
// listed), their output and how to reproduce the rejects.
func mdSuite(bw *bufio.Writer, sv *suiteView) {
	fmt.Fprintf(bw, "### Suite %s: %s\n\n", mdCode(sv.Path), sv.heading())
	cols := sv.columns()
	fmt.Fprintf(bw, "| %s | Triples |", upperFirst(sv.Word))
	for _, l := range cols {
		fmt.Fprintf(bw, " %s %s |", labelIcon(l), l)
	}
	if sv.Counts.Skipped > 0 {
		bw.WriteString(" ❄️ frozen |")
	}
	bw.WriteString("\n|:--|--:|")
	for range cols {
		bw.WriteString("--:|")
	}
	if sv.Counts.Skipped > 0 {
		bw.WriteString("--:|")
	}
	bw.WriteString("\n")
	// The groups where every triple passed are folded below the others.
	var clean []*groupView
	for _, g := range sv.Groups {
		if len(g.NotPassed) == 0 {
			clean = append(clean, g)
			continue
		}
		mdGroupRow(bw, sv, cols, g)
	}
	if len(clean) > 0 {
		n := passedIn(sv.Groups, false)
		fmt.Fprintf(bw, "| %s | %d |", mdText(plural(len(clean), sv.Word)+" where every triple passed"), n)
		for _, l := range cols {
			cell := ""
			if l == flakegate.Pass {
				cell = countCell(n)
			}
			bw.WriteString(" " + cell + " |")
		}
		if sv.Counts.Skipped > 0 {
			bw.WriteString("  |")
		}
		bw.WriteString("\n")
		fmt.Fprintf(bw, "\n<details><summary>The %s where every triple passed</summary>\n\n| %s | PASS |\n|:--|--:|\n", plural(len(clean), sv.Word), upperFirst(sv.Word))
		for i, g := range clean {
			if i == MaxMarkdownRows {
				fmt.Fprintf(bw, "\n… and %d more; `check --json` lists them.\n", len(clean)-MaxMarkdownRows)
				break
			}
			fmt.Fprintf(bw, "| %s | %d |\n", mdCode(g.Key), g.Counts.Total)
		}
		bw.WriteString("\n</details>\n")
	}
	bw.WriteString("\n")
	if len(sv.Failing) == 0 {
		fmt.Fprintf(bw, "Every triple passed (%d PASS folded).\n\n", sv.Passed)
		return
	}
	fmt.Fprintf(bw, "Not passed (%d of %d, by %s; %d PASS folded):\n\n", len(sv.Failing), sv.Counts.Total, sv.Word, sv.Passed)
	bw.WriteString("| Test | Seed | Label | What happened | Attempts |\n|:--|:--|:--|:--|:--|\n")
	var rejects []*flakegate.Result
	for _, r := range capRows(sv.Failing) {
		tag := string(r.Label)
		if r.Skipped {
			tag += " " + FrozenWording
		}
		note := mdText(suiteNote(r))
		if r.Label == flakegate.Scheduler && !r.Skipped {
			note += "; freeze: " + mdGrant(r)
		}
		attempts := "none: the freeze skipped it"
		if !r.Skipped {
			attempts = attemptCell(r)
		}
		fmt.Fprintf(bw, "| %s | %s | %s %s | %s | %s |\n", mdCode(idOf(r)), mdText(seedText(r)), labelIcon(r.Label), tag, note, mdText(attempts))
		if r.Label.Reject() && !r.Skipped {
			rejects = append(rejects, r)
		}
	}
	moreRows(bw, len(sv.Failing))
	if len(rejects) > 0 {
		mdOutputs(bw, rejects)
		mdReproduce(bw, "Reproduce the rejects of "+htmlEscape(sv.Path)+" (each runs the whole batch in the order of its seed)", rejects)
	} else {
		bw.WriteString("\n")
	}
}

// mdGroupRow writes one group's row of counts.
func mdGroupRow(bw *bufio.Writer, sv *suiteView, cols []flakegate.Label, g *groupView) {
	fmt.Fprintf(bw, "| %s | %d |", mdCode(g.Key), g.Counts.Total)
	for _, l := range cols {
		bw.WriteString(" " + countCell(g.Counts.Labels[l]) + " |")
	}
	if sv.Counts.Skipped > 0 {
		bw.WriteString(" " + countCell(g.Counts.Skipped) + " |")
	}
	bw.WriteString("\n")
}

// passedIn counts the passes of the groups that have (dirty) or have not
// a triple that did not pass.
func passedIn(groups []*groupView, dirty bool) int {
	n := 0
	for _, g := range groups {
		if (len(g.NotPassed) > 0) == dirty {
			n += len(g.Passed)
		}
	}
	return n
}

// mdNewTests writes the tests the candidate adds: each ran on the
// candidate only, so it is reported apart from the triples.
func mdNewTests(bw *bufio.Writer, s *flakegate.Summary) {
	tests := s.NewTests
	if len(tests) == 0 {
		return
	}
	// The failures first: they are what may reject the patch.
	tests = append([]flakegate.NewTest(nil), tests...)
	sort.SliceStable(tests, func(i, j int) bool { return newTestFailed(tests[i]) && !newTestFailed(tests[j]) })
	failed := 0
	for _, t := range tests {
		if newTestFailed(t) {
			failed++
		}
	}
	fmt.Fprintf(bw, "### New tests (%d, %d failed a run)\n\n", len(tests), failed)
	bw.WriteString("The candidate adds these tests. No base can replay them, so they are not triples: each ran on the candidate alone, the number of times `new_test_runs` says. " + mdText(newTestPolicy(s)) + "\n\n")
	for i, t := range tests {
		if i == MaxMarkdownRows {
			fmt.Fprintf(bw, "\n… and %d more; `check --json` lists them all.\n", len(tests)-MaxMarkdownRows)
			break
		}
		icon := "✅"
		if newTestFailed(t) {
			icon = "❌"
		}
		fmt.Fprintf(bw, "- %s new test %s: %s · %s · suite %s\n", icon, mdCode(t.Name), mdText(newTestRuns(t)), mdCode(t.Path), mdCode(t.Suite))
	}
	bw.WriteString("\n")
}

// countCell is a count for a table cell: blank for zero, so the non-zero
// counts stand out.
func countCell(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprint(n)
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}
