// Package report turns a check summary and the stores into what people
// read: JUnit XML for CI test views, a Markdown summary and GitHub workflow
// annotations for pull requests, a self-contained HTML page over the freeze
// ledger, and the progress lines of a running check.
//
// Every function writes to an io.Writer; the command line decides where the
// bytes go.
package report
