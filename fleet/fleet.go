// Package fleet hands a check's triples out and takes their results
// back: the worker pool and its finisher (pool.go: Run, over a Source and
// a Worker the caller gives), the check's list or a shard of it (List,
// Shard and --shard I/N in shard.go), the queue shared by the runners of
// a --join check (queue.go: Join, QueuedSummary), and the merge of the
// shards' summaries (merge.go: MergeShards). It knows no checker: the
// triples are positions and ids, their attempts and records are the
// Worker's, and it imports nothing of the project but the root package.
package fleet
