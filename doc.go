// Package flakegate is the domain of the failure-class merge check: the run
// record, its canonical hash, the decision table that labels a triple, the
// freeze ledger's types and the store interfaces.
//
// The package touches nothing outside the process: no os/exec, no database
// driver, no network. Adapters live in packages named after what they touch
// (git, runner, digest, filestore, postgres, report).
//
// docs/design.md in the repository describes the table, the record, the
// hash, the stores and the threat model.
package flakegate

// Version is the tool version written into records; set at link time with
// -ldflags "-X github.com/flakegate/flakegate.Version=...".
var Version = "0.1.0-dev"

// Schema is the value of the "schema" key of records flakegate writes.
const Schema = "flakegate.run/v1"
