package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/internal/atomicfile"
	"github.com/flakegate/flakegate/report"
	"github.com/spf13/cobra"
)

// ReportOptions are the inputs of `flakegate report`.
type ReportOptions struct {
	IO *IO

	HTML, Ledger          string
	From, JUnit, Markdown string
	SummaryHTML           string
	GitHub                bool
}

// NewCmdReport writes the reports people read: the HTML page over the
// stores, and the JUnit, Markdown and GitHub outputs of a saved summary.
// runF, when not nil, replaces the run step (tests of flag parsing).
func NewCmdReport(ios *IO, runF func(*ReportOptions) error) *cobra.Command {
	opts := &ReportOptions{IO: ios}
	cmd := &cobra.Command{
		Use:   "report (--html FILE [--ledger DIR|DSN] | --from SUMMARY.json [--junit FILE] [--markdown FILE] [--summary-html FILE] [--github])",
		Short: "Write the HTML ledger report, or JUnit/Markdown/GitHub reports of a saved check",
		Long: `report --html FILE writes one self-contained HTML page (no scripts, no
external requests) over the configured stores: the freezes with their runs
left, the labels of the recent checks per property, the triples that most
often earn SCHEDULER, and the freezes the audit log shows as void or
expired. The store is --ledger, else $FLAKEGATE_LEDGER, else the embedded
store of the current repository.

report --from SUMMARY.json reads the output of 'check --json' and writes
the same reports check itself can: --junit FILE, --markdown FILE, and
--github (annotations on stdout, the Markdown summary appended to
$GITHUB_STEP_SUMMARY). --summary-html FILE writes a page of that one
check (a suite's triples grouped by package or file, the passes folded).
A FILE of "-" is stdout.`,
		Example: `  flakegate report --html ledger.html
  flakegate report --html ledger.html --ledger postgres://ci@db/flakegate
  flakegate check --base main --json > summary.json
  flakegate report --from summary.json --junit junit.xml --github
  flakegate report --from summary.json --summary-html check.html`,
		Args: noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if err := opts.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runReport(c.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.HTML, "html", "", "write the HTML ledger report to `FILE`")
	fl.StringVar(&opts.Ledger, "ledger", "", "read the stores of --html from `DIR|DSN` (default $FLAKEGATE_LEDGER, else <git common dir>/flakegate)")
	fl.StringVar(&opts.From, "from", "", "read a saved 'check --json' summary from `SUMMARY.json` (- for stdin)")
	fl.StringVar(&opts.JUnit, "junit", "", "write the summary as JUnit XML to `FILE` (needs --from)")
	fl.StringVar(&opts.Markdown, "markdown", "", "write the summary as Markdown to `FILE` (needs --from)")
	fl.StringVar(&opts.SummaryHTML, "summary-html", "", "write the summary as an HTML page to `FILE` (needs --from)")
	fl.BoolVar(&opts.GitHub, "github", false, "print GitHub annotations and append the Markdown summary to $GITHUB_STEP_SUMMARY (needs --from)")
	return cmd
}

// validate refuses flag combinations that cannot be written.
func (opts *ReportOptions) validate() error {
	usage := func(msg string) error {
		return &flakegate.Error{Code: flakegate.EINVALID, Op: "report", Message: msg, Hint: "run 'flakegate report --help'"}
	}
	summaryOutputs := opts.JUnit != "" || opts.Markdown != "" || opts.SummaryHTML != "" || opts.GitHub
	switch {
	case summaryOutputs && opts.From == "":
		return usage("--junit, --markdown, --summary-html and --github need --from SUMMARY.json (a saved 'check --json')")
	case opts.HTML == "" && opts.From == "":
		return usage("nothing to write: give --html FILE, or --from SUMMARY.json with --junit, --markdown, --summary-html or --github")
	case opts.From != "" && !summaryOutputs:
		return usage("--from needs an output: --junit FILE, --markdown FILE, --summary-html FILE or --github")
	}
	stdout := 0
	for _, p := range []string{opts.HTML, opts.JUnit, opts.Markdown, opts.SummaryHTML} {
		if p == "-" {
			stdout++
		}
	}
	if opts.GitHub {
		stdout++
	}
	if stdout > 1 {
		return usage("only one output can go to stdout")
	}
	return nil
}

func runReport(ctx context.Context, opts *ReportOptions) error {
	ios := opts.IO
	if opts.From != "" {
		sum, err := readSummary(ios, opts.From)
		if err != nil {
			return err
		}
		if err := writeReportFiles(ios, "report", opts.JUnit, opts.Markdown, sum); err != nil {
			return err
		}
		if opts.SummaryHTML != "" {
			if err := writeOutput(ios, opts.SummaryHTML, "report --summary-html", func(w io.Writer) error { return report.SummaryHTML(w, sum) }); err != nil {
				return err
			}
		}
		if opts.GitHub {
			if err := writeGitHub(ios, "report --github", ios.Out, sum); err != nil {
				return err
			}
		}
	}

	if opts.HTML != "" {
		st, err := openLedger(ctx, ios, opts.Ledger)
		if err != nil {
			return err
		}
		defer st.Close()
		data, err := report.LoadHTMLData(ctx, st, time.Now().UTC())
		if err != nil {
			return err
		}
		if err := writeOutput(ios, opts.HTML, "report --html", func(w io.Writer) error { return report.HTML(w, data) }); err != nil {
			return err
		}
	}
	return nil
}

// readSummary reads a 'check --json' summary from path ("-" is stdin).
func readSummary(ios *IO, path string) (*flakegate.Summary, error) {
	var raw []byte
	var err error
	if path == "-" {
		raw, err = io.ReadAll(ios.In)
	} else {
		raw, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, &flakegate.Error{Code: flakegate.EINVALID, Op: "report --from", Path: path, Message: "cannot read the summary", Err: err}
	}
	var sum flakegate.Summary
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&sum); err != nil {
		return nil, &flakegate.Error{Code: flakegate.EINVALID, Op: "report --from", Path: path, Message: "not a check summary", Err: err,
			Hint: "pass the stdout of 'flakegate check --json' (or the summary.json in its --out folder)"}
	}
	if sum.Verdict != flakegate.VerdictPass && sum.Verdict != flakegate.VerdictReject {
		return nil, &flakegate.Error{Code: flakegate.EINVALID, Op: "report --from", Path: path,
			Message: `not a check summary: "verdict" is neither "pass" nor "reject"`,
			Hint:    "pass the stdout of 'flakegate check --json' (or the summary.json in its --out folder)"}
	}
	for i, r := range sum.Results {
		if !r.Label.Known() || r.PropertyPath == "" {
			return nil, &flakegate.Error{Code: flakegate.EINVALID, Op: "report --from", Path: path,
				Message: fmt.Sprintf("result %d: want a property_path and one of the seven labels, got label %q", i, r.Label),
				Hint:    "pass the stdout of 'flakegate check --json' (or the summary.json in its --out folder)"}
		}
	}
	for i, t := range sum.NewTests {
		if t.Name == "" || t.Path == "" || t.Runs < 0 || t.Passed < 0 || t.Passed > t.Runs {
			return nil, &flakegate.Error{Code: flakegate.EINVALID, Op: "report --from", Path: path,
				Message: fmt.Sprintf("new test %d: want a name, a path and 0 <= passed <= runs, got %q in %q, %d of %d", i, t.Name, t.Path, t.Passed, t.Runs),
				Hint:    "pass the stdout of 'flakegate check --json' (or the summary.json in its --out folder)"}
		}
	}
	return &sum, nil
}

// writeReportFiles writes the JUnit and Markdown reports of sum to the
// paths named (an empty path writes nothing); cmd names the command in
// errors ("check", "report").
func writeReportFiles(ios *IO, cmd, junit, markdown string, sum *flakegate.Summary) error {
	if junit != "" {
		if err := writeOutput(ios, junit, cmd+" --junit", func(w io.Writer) error { return report.JUnit(w, sum) }); err != nil {
			return err
		}
	}
	if markdown != "" {
		return writeOutput(ios, markdown, cmd+" --markdown", func(w io.Writer) error { return report.Markdown(w, sum) })
	}
	return nil
}

// writeGitHub prints the workflow annotations to w and appends the
// Markdown summary to $GITHUB_STEP_SUMMARY when the runner sets it.
func writeGitHub(ios *IO, op string, w io.Writer, sum *flakegate.Summary) error {
	if err := report.GitHubAnnotations(w, sum); err != nil {
		return err
	}
	p := ios.Getenv("GITHUB_STEP_SUMMARY")
	if p == "" {
		return nil
	}
	file, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return &flakegate.Error{Code: flakegate.EINTERNAL, Op: op, Path: p, Message: "cannot append the step summary", Err: err}
	}
	werr := report.Markdown(file, sum)
	if cerr := file.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return &flakegate.Error{Code: flakegate.EINTERNAL, Op: op, Path: p, Message: "cannot append the step summary", Err: werr}
	}
	return nil
}

// writeOutput writes a report to path, or to stdout for "-". A file is
// replaced atomically and durably (internal/atomicfile), so a reader never
// sees half a report.
func writeOutput(ios *IO, path, op string, write func(io.Writer) error) error {
	if path == "-" {
		return write(ios.Out)
	}
	f, err := atomicfile.New(path, 0o644)
	if err != nil {
		return &flakegate.Error{Code: flakegate.EINVALID, Op: op, Path: path, Message: "cannot create the report", Err: err}
	}
	defer f.Cleanup()
	werr := write(f)
	if werr == nil {
		werr = f.Commit()
	}
	if werr != nil {
		if flakegate.ErrorCode(werr) != flakegate.EINTERNAL {
			return werr
		}
		return &flakegate.Error{Code: flakegate.EINTERNAL, Op: op, Path: path, Message: "cannot write the report", Err: werr}
	}
	return nil
}
