// Package batch runs the attempts of a batch of triples in the order
// that decides their labels. A triple alone is a batch of one: both go
// through one Driver, so the rules of retries, budgets and the flake
// origin are written once.
//
// The files:
//
//	drive.go   the Driver: the first attempt, the base seed (the replay
//	           cache, else one base attempt), the retries under the cap,
//	           the flake probes and the origin; the Runner and Cache it
//	           asks, and the Tally each member's attempts decide
//	origin.go  the SCHEDULER signals and the flake origin: this base's
//	           history, the replay and the probes
//	argv.go    the command of one triple: TripleArgv, Vars,
//	           EvidenceFramework
//	framework.go  Framework: which triples batch, under which framework
//	shape.go   a triple's Shape in a batch (ShapeOf; go and pytest) and
//	           the batch's command (Argv)
//	js.go      the jest and vitest shapes, command and report
//	report.go  a batch's Report (go JSON events, pytest JUnit, js JSON
//	           report), its report file, and Judge: a member's outcome
//	known.go   the known answers planted in every batch (ArmKnown,
//	           KnownSet.Judge), per framework in knowngo.go, knownpy.go
//	           and knownjs.go
//	knowndraws.go  a go package's known answers drawn once per check,
//	           tree and package (KnownDraws)
//
// The package starts no process: the batch's command, report file and
// known answers are put on an attempt.Command its caller runs. The Driver
// starts none either: a Runner (check's, for a triple alone
// and for a batch) makes each attempt it asks for and writes it to the
// members' transcripts.
package batch
