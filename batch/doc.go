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
//
// The Driver starts no process: a Runner (check's, for a triple alone
// and for a batch) makes each attempt it asks for and writes it to the
// members' transcripts.
package batch
