package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/internal/termsafe"
)

// MaxMarkdownRows caps each table of the Markdown summary, so a check of
// thousands of triples stays within GitHub's step summary size limit.
const MaxMarkdownRows = 250

// Markdown writes a summary of s for people: the verdict, a tally per
// label, then the rejects (with how to reproduce them), the SCHEDULER
// results (with how to freeze them), the frozen skips, each suite grouped
// by package or file (suites.go), the new tests, and the passes.
func Markdown(w io.Writer, s *flakegate.Summary) error {
	bw := bufio.NewWriter(w)
	mdHeader(bw, s)
	props, suites := splitSuites(s)
	var rejects, scheds, frozen, passes []*flakegate.Result
	for _, r := range props {
		switch {
		case r.Skipped:
			frozen = append(frozen, r)
		case r.Label.Reject():
			rejects = append(rejects, r)
		case r.Label == flakegate.Scheduler:
			scheds = append(scheds, r)
		default:
			passes = append(passes, r)
		}
	}
	mdRejects(bw, rejects)
	mdSchedulers(bw, scheds)
	mdFrozen(bw, frozen)
	for _, sv := range suites {
		mdSuite(bw, sv)
	}
	mdNewTests(bw, s)
	mdPasses(bw, passes)
	return bw.Flush()
}

// mdHeader writes the verdict, the revisions and the tally per label.
func mdHeader(bw *bufio.Writer, s *flakegate.Summary) {
	c := CountResults(s)
	icon := "✅"
	if s.Verdict != flakegate.VerdictPass {
		icon = "❌"
	}
	newTests := ""
	if n := len(s.NewTests); n > 0 {
		newTests = " · " + plural(n, "new test")
	}
	fmt.Fprintf(bw, "## %s flakegate check: %s\n\n", icon, mdText(s.Verdict))
	fmt.Fprintf(bw, "Base %s → candidate %s · %s%s%s\n\n", mdCode(flakegate.ShortSHA(s.Base)), mdCode(flakegate.ShortSHA(s.Candidate)), plural(c.Total, "triple"), newTests, isolationNote(s.Isolation))

	for _, si := range s.Impact {
		fmt.Fprintf(bw, "Impact, suites[%d] (%s %s): %s\n\n", si.Suite, mdCode(si.Framework), mdCode(si.Path), mdText(si.Line()))
	}
	fmt.Fprintf(bw, "| Label | Triples | Meaning |\n|:--|--:|:--|\n")
	for _, l := range flakegate.Labels {
		if n := c.Labels[l]; n > 0 {
			fmt.Fprintf(bw, "| %s %s | %d | %s |\n", labelIcon(l), l, n, mdText(labelMeaning[l]))
		}
	}
	if c.Skipped > 0 {
		fmt.Fprintf(bw, "| ❄️ SCHEDULER %s | %d | a freeze with runs left skipped the triple |\n", FrozenWording, c.Skipped)
	}
	bw.WriteString("\n")
}

// mdRejects writes the rejected property triples, their output and how
// to reproduce them.
func mdRejects(bw *bufio.Writer, rejects []*flakegate.Result) {
	if len(rejects) == 0 {
		return
	}
	fmt.Fprintf(bw, "### Rejects (%d)\n\n", len(rejects))
	bw.WriteString("| Property | Seed | Label | Reason | Attempts |\n|:--|:--|:--|:--|:--|\n")
	for _, r := range capRows(rejects) {
		fmt.Fprintf(bw, "| %s | %s | %s %s | %s | %s |\n", mdCode(idOf(r)), mdText(seedText(r)),
			labelIcon(r.Label), r.Label, mdText(reasonOf(r)), mdText(attemptCell(r)))
	}
	moreRows(bw, len(rejects))
	mdOutputs(bw, rejects)
	mdReproduce(bw, "Reproduce the rejects", rejects)
}

// mdOutputs writes a collapsed block of output for the first rejects
// that have one.
func mdOutputs(bw *bufio.Writer, rs []*flakegate.Result) {
	shown := 0
	for _, r := range capRows(rs) {
		ft := failureText(r)
		if ft == "" || shown >= maxMarkdownOutputs {
			continue
		}
		shown++
		fmt.Fprintf(bw, "\n<details><summary>%s seed %s: %s output</summary>\n\n%s\n</details>\n",
			htmlEscape(idOf(r)), htmlEscape(seedText(r)), r.Label, mdFence(termsafe.String(ft)))
	}
}

// mdReproduce writes a collapsed block of the reproduce commands of rs.
func mdReproduce(bw *bufio.Writer, title string, rs []*flakegate.Result) {
	bw.WriteString("\n<details><summary>" + title + "</summary>\n\n```sh\n")
	for _, r := range capRows(rs) {
		if r.Reproduce != "" {
			bw.WriteString(oneLine(r.Reproduce) + "\n")
		}
	}
	bw.WriteString("```\n\n</details>\n\n")
}

// mdSchedulers writes the SCHEDULER property triples with their freeze
// commands.
func mdSchedulers(bw *bufio.Writer, scheds []*flakegate.Result) {
	if len(scheds) == 0 {
		return
	}
	fmt.Fprintf(bw, "### SCHEDULER: may be frozen (%d)\n\n", len(scheds))
	bw.WriteString("Each failed, then passed on a retry inside the cap, and the seed passed on the base. A freeze skips exactly that triple for a counted number of runs.\n\n")
	bw.WriteString("| Property | Seed | Attempts | Flake origin | Freeze with |\n|:--|:--|:--|:--|:--|\n")
	for _, r := range capRows(scheds) {
		origin := originText(r)
		if origin == "" {
			origin = "not probed"
		}
		fmt.Fprintf(bw, "| %s | %s | %s | %s | %s |\n", mdCode(idOf(r)), mdText(seedText(r)),
			mdText(attemptCell(r)), mdText(origin), mdGrant(r))
	}
	moreRows(bw, len(scheds))
	bw.WriteString("\n")
}

// mdGrant is the freeze command of a SCHEDULER result, as a code span.
func mdGrant(r *flakegate.Result) string {
	if flakegate.NotBaseFlake(r.FlakeOrigin) {
		return "not frozen by default: " + mdCode(grantCommand(r)+" --allow-new-flake")
	}
	return mdCode(grantCommand(r))
}

// mdFrozen writes the property triples a freeze skipped.
func mdFrozen(bw *bufio.Writer, frozen []*flakegate.Result) {
	if len(frozen) == 0 {
		return
	}
	fmt.Fprintf(bw, "### SCHEDULER %s (%d)\n\n", FrozenWording, len(frozen))
	bw.WriteString("| Property | Seed | Frozen from candidate | Owner | Runs left |\n|:--|:--|:--|:--|--:|\n")
	for _, r := range capRows(frozen) {
		left := "?"
		if r.RunsLeft != nil {
			left = fmt.Sprint(*r.RunsLeft)
		}
		from := "unknown"
		if r.FrozenCandidate != "" {
			from = flakegate.ShortSHA(r.FrozenCandidate)
		}
		fmt.Fprintf(bw, "| %s | %s | %s | %s | %s |\n", mdCode(idOf(r)), mdText(seedText(r)), mdCode(from), mdText(ownerOf(r)), left)
	}
	moreRows(bw, len(frozen))
	bw.WriteString("\n")
}

// mdPasses writes the passed property triples in a collapsed table.
func mdPasses(bw *bufio.Writer, passes []*flakegate.Result) {
	if len(passes) == 0 {
		return
	}
	fmt.Fprintf(bw, "<details><summary>Passed (%d)</summary>\n\n", len(passes))
	bw.WriteString("| Property | Seed | Time |\n|:--|:--|--:|\n")
	for _, r := range capRows(passes) {
		fmt.Fprintf(bw, "| %s | %s | %s |\n", mdCode(idOf(r)), mdText(seedText(r)), seconds(r.Seconds))
	}
	moreRows(bw, len(passes))
	bw.WriteString("\n</details>\n")
}

// maxMarkdownOutputs caps the output blocks of the Markdown summary.
const maxMarkdownOutputs = 20

// attemptCell is a result's attempts for a table cell: the results in
// order, then the count per side.
func attemptCell(r *flakegate.Result) string {
	if s := attemptsShort(r.Attempts); s != "" {
		return s + " (" + attemptCounts(r) + ")"
	}
	return attemptCounts(r)
}

// mdFence writes s as a fenced code block whose fence no line of s can close.
func mdFence(s string) string {
	fence := "```"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	return fence + "text\n" + strings.TrimRight(s, "\n") + "\n" + fence + "\n"
}

var htmlEscapes = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// htmlEscape escapes s for the text of an HTML element.
func htmlEscape(s string) string {
	return htmlEscapes.Replace(oneLine(s))
}

func capRows(rs []*flakegate.Result) []*flakegate.Result {
	if len(rs) > MaxMarkdownRows {
		return rs[:MaxMarkdownRows]
	}
	return rs
}

func moreRows(w *bufio.Writer, n int) {
	if n > MaxMarkdownRows {
		fmt.Fprintf(w, "\n… and %d more; the JUnit report and `check --json` list them all.\n", n-MaxMarkdownRows)
	}
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func labelIcon(l flakegate.Label) string {
	switch {
	case l == flakegate.Pass:
		return "✅"
	case l == flakegate.Scheduler:
		return "🔁"
	default:
		return "❌"
	}
}

// oneLine folds line breaks into spaces and renders what a terminal
// would act on (escape sequences, other controls, invalid UTF-8) as text
// (internal/termsafe): every table cell, progress line and summary goes
// through it.
func oneLine(s string) string {
	return termsafe.Line(lineBreaks.Replace(s))
}

// lineBreaks folds line breaks into spaces. A Replacer builds its tables
// at first use: one shared Replacer builds them once, not per cell.
var lineBreaks = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ")

// mdText escapes s so that Markdown shows it as typed, on one line and
// inside a table cell.
func mdText(s string) string {
	var b strings.Builder
	for _, r := range oneLine(s) {
		if strings.ContainsRune("\\`*_[]<>|~&", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// mdCode writes s as a code span that survives a table cell: the fence is
// longer than any run of backticks inside, and pipes are escaped (GitHub
// splits cells before it reads code spans).
func mdCode(s string) string {
	s = strings.ReplaceAll(oneLine(s), "|", `\|`)
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if longest > 0 || strings.HasPrefix(s, " ") {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

// isolationNote tells how the attempts ran; an unsandboxed check is
// flagged, since its results could have been forged by the code under test.
func isolationNote(isolation string) string {
	switch isolation {
	case "":
		return ""
	case "none":
		return " · ⚠️ **not sandboxed** (isolation: none): the code under test could reach the gate; no freeze is granted"
	}
	return " · sandboxed (" + mdText(isolation) + ")"
}
