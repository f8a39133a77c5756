// Package fleet hands a check's triples out: to the runners of a
// sharded check (--shard I/N, shard.go) and, back from them, the merge
// of the shards' summaries (merge.go). It knows no checker: it is given
// the triples' ids and the store's records, and imports nothing of the
// project but the root package.
package fleet
