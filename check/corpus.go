// The failure corpus: every seed that failed a candidate of a property
// runs again for the property's later candidates (seed_origin "corpus").

package check

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/attempt"
	"github.com/flakegate/flakegate/transcript"
)

// CorpusKey names a property in the failure corpus: the hex sha256 of
// its path, its test name and the digest of its argv template, NUL
// separated (a key any store can hold). Not the base: a seed that
// caught a regression keeps running as the base moves on, on every
// branch of the store, as Hypothesis's example database keeps a test's
// failing examples. (A seed of another lineage only costs a run; a seed
// forgotten would let a re-roll through.)
func CorpusKey(path, name, runSHA256 string) string {
	return flakegate.SHA256Hex([]byte(path + "\x00" + name + "\x00" + runSHA256))
}

func (ps *propState) corpusKey() string { return CorpusKey(ps.prop.Path, ps.prop.Name, ps.runSHA256) }

// readCorpus tells the store the check's base (a new one ages the
// corpus: a seed whose newest failure is flakegate.MaxCorpusAge bases
// old leaves, and the check says how many), then reads each property's
// failure corpus: the seeds that failed a candidate of the property on
// another base, the most recently failed first (at most
// flakegate.MaxCorpusSeeds). Seeds that first failed on this base are
// left out: they are this base's listed or drawn seeds and run anyway,
// and leaving them out keeps the triples of one base the same while its
// checks add failures (shards and runners of one check agree).
func (c *checker) readCorpus(ctx context.Context) error {
	gone, err := c.store.CorpusBase(ctx, c.baseSHA)
	if err != nil {
		return flakegate.StoreError("age the failure corpus", err)
	}
	if gone > 0 {
		c.say(fmt.Sprintf("corpus: %s left the failure corpus: the store's checks ran on %d bases since their newest failure", count(gone, "seed", "seeds"), flakegate.MaxCorpusAge))
	}
	for _, ps := range c.props {
		es, err := c.store.Failures(ctx, ps.corpusKey())
		if err != nil {
			return flakegate.StoreError("read the failure corpus", err)
		}
		ps.corpus = nil
		for _, e := range es {
			if e.FirstBaseSHA != c.baseSHA {
				ps.corpus = append(ps.corpus, e.Seed)
			}
		}
	}
	return nil
}

// addFailure puts j's seed into its property's corpus when a candidate
// attempt ran and failed it (t.candidateFailed): a triple the diff, the
// digests or a prepare decided ran no attempt, and the "fail" its record
// carries is no seed that failed. A seed the store refuses (this
// candidate added one of the property already, or a bound is reached)
// is counted for sayCorpus.
func (c *checker) addFailure(ctx context.Context, j *job, t *transcriptRun) error {
	if !t.candidateFailed() {
		return nil
	}
	did, err := c.store.AddFailure(ctx, j.ps.corpusKey(), flakegate.CorpusEntry{
		Seed: j.seed, FirstBaseSHA: c.baseSHA, CandidateSHA: c.candSHA, FailedAt: c.now()})
	if err != nil {
		return flakegate.StoreError("add the failing seed to the failure corpus", err)
	}
	if !did.Kept() {
		c.corpusMu.Lock()
		defer c.corpusMu.Unlock()
		if c.corpusRefused == nil {
			c.corpusRefused = map[flakegate.CorpusAdd][]string{}
		}
		c.corpusRefused[did] = append(c.corpusRefused[did], j.ps.prop.ID()+" seed "+j.seed.String())
	}
	return nil
}

// corpusWhy says why the store refused a failing seed.
var corpusWhy = map[flakegate.CorpusAdd]string{
	flakegate.CorpusOnePerCandidate: "this candidate added a seed of the property already (one new seed per candidate and property)",
	flakegate.CorpusKeyFull:         fmt.Sprintf("the property's corpus holds %d seeds", flakegate.MaxCorpusSeeds),
	flakegate.CorpusFull:            fmt.Sprintf("the corpus holds %d seeds", flakegate.MaxCorpusTotal),
}

// sayCorpus says, once the triples ran, which failing seeds the corpus
// did not keep and why: a full corpus refuses new seeds rather than
// dropping old ones, and they leave only by age.
func (c *checker) sayCorpus() {
	c.corpusMu.Lock()
	defer c.corpusMu.Unlock()
	for _, did := range []flakegate.CorpusAdd{flakegate.CorpusOnePerCandidate, flakegate.CorpusKeyFull, flakegate.CorpusFull} {
		ids := c.corpusRefused[did]
		if len(ids) == 0 {
			continue
		}
		slices.Sort(ids)
		some := strings.Join(ids[:min(len(ids), 3)], ", ")
		if len(ids) > 3 {
			some += ", ..."
		}
		c.say(fmt.Sprintf("corpus: %s not kept: %s; a seed leaves the corpus only by age (%d bases after its newest failure), never for a newer one (%s)",
			count(len(ids), "failing seed", "failing seeds"), corpusWhy[did], flakegate.MaxCorpusAge, some))
	}
}

// candidateFailed says the triple's first candidate attempt ran and
// failed.
func (t *transcriptRun) candidateFailed() bool {
	for _, a := range t.attempts {
		if a.Side == transcript.SideCandidate && a.Index == 0 {
			return a.Result == attempt.Fail
		}
	}
	return false
}

// count is n things in words: "1 seed", "3 seeds".
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
