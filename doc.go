// Package flakegate is the domain of the failure-class merge check: the run
// record (Record, read from a JSON value by NewRecord), the decision table
// that labels it (Table, Classify, ClassifyBytes and the reusable
// Classifier), the freeze ledger's types (Triple, Freeze), the skip rule
// (Skip) and the store interfaces.
//
// Reading JSON strictly and hashing it in the listing's canonical form is
// the job of package canonjson; classifying a JSON-lines stream on every
// core is package classifyjsonl. This package touches nothing outside the
// process (no os/exec, no database driver, no network), starts no
// goroutines and uses no unsafe. Adapters live in packages named after what
// they touch (git, runner, digest, filestore, postgres, report).
//
// docs/design.md in the repository describes the table, the record, the
// hash, the stores and the threat model.
package flakegate

// Version is the tool version written into records; set at link time with
// -ldflags "-X github.com/flakegate/flakegate.Version=...".
var Version = "0.1.0-dev"

// Schema is the value of the "schema" key of records flakegate writes.
const Schema = "flakegate.run/v1"
