package check

import (
	"context"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/fleet"
)

// tripleID is the identity of a job (flakegate.TripleID).
func (j *job) tripleID() string {
	return flakegate.TripleID(j.ps.prop.Path, j.ps.prop.Name, j.seed)
}

// shard picks the jobs of c.opts.Shard (fleet.Shard: balanced by the
// durations of earlier records in the store), and the summary carries
// the shard's place in the whole.
func (c *checker) shard(ctx context.Context, jobs []job) ([]int, *flakegate.Shard, error) {
	ids := make([]string, len(jobs))
	for i := range jobs {
		ids[i] = jobs[i].tripleID()
	}
	return fleet.Shard(ctx, c.store, c.candSHA, ids, *c.opts.Shard)
}
