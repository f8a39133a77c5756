// Package replay is `flakegate replay`: one command, once, in a tree, in
// the sandbox a check builds from the same sandbox block (site's
// BuildIsolation), judged by the evidence a check asks for. It imports no
// check: what both need lives below them (site, batch, grade, suites,
// gocache).
//
// The files:
//
//	replay.go    Options, New (the fixture pinned, the sandbox built and
//	             probed, the Go caches fetched and filled), Replay.Run,
//	             Incomplete: a replay that can be no result
//	checkout.go  AtOptions, Checkout, At: one seed of a config's property
//	             at a commit, in a checkout of the graded tree of its own
//	             (flakegate replay --repo)
//	prepare.go   the prepared layer the command runs over: the check's
//	             own (site.LayerKey), or one built the same way
//	suite.go     Suite: one triple of a suite, replayed as the batch the
//	             check ran it in, listed on the base, judged from the
//	             framework's report (batch.Judge)
//
// The check's own base replay (the replay cache and its lock) stays in
// package check (check/replay.go): it is one step of a check's attempt
// sequence, not this command.
package replay
