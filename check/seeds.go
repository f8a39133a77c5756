// Seeds drawn for the candidate (random_seeds in the config), keyed by the
// store's secret.

package check

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"strconv"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/config"
)

// MaxDrawnSeed bounds drawn seeds: 1 to 2^53-1, integers every JSON
// reader keeps exactly and every framework accepts (never 0, which rapid
// reads as "pick a random seed").
const MaxDrawnSeed = 1<<53 - 1

// DrawSeeds returns n seeds drawn for the base commit and the argv
// template digest (RunSHA256) with the store's secret
// (flakegate.SeedSecretStore). The candidate's sha is not an input: a
// patch author who amends, rewords or pushes the commit again gets the
// same seeds, so re-rolling a commit until its drawn seeds miss a
// regression draws nothing new. Nor is the property: every property with
// the same run template on the same base draws the same seeds, so one
// process per seed can run them all (batches). Another base, template or
// store (another secret) draws other seeds. Without the secret nobody can
// tell which seeds a base will draw.
//
// Seed i is the first 8 bytes of HMAC-SHA256(secret, "flakegate drawn
// seed v2\x00" + base sha + "\x00" + run template digest + "\x00" + i),
// as a big-endian integer, mod 2^53-1, plus 1, fitted to the range the
// framework's seed option takes (config.FitDrawnSeed: fast-check's 32
// bits); a value that repeats an earlier one is skipped. The caller drops a drawn seed that a property
// lists already (drawnFor).
func DrawSeeds(secret []byte, baseSHA, runSHA256, framework string, n int) []flakegate.Seed {
	seen := map[flakegate.Seed]bool{}
	var out []flakegate.Seed
	for i := 0; len(out) < n; i++ {
		mac := hmac.New(sha256.New, secret)
		mac.Write([]byte("flakegate drawn seed v2\x00" + baseSHA + "\x00" + runSHA256 + "\x00" + strconv.Itoa(i)))
		sum := mac.Sum(nil)
		v := binary.BigEndian.Uint64(sum[:8])%MaxDrawnSeed + 1
		v = config.FitDrawnSeed(framework, v) // fast-check takes 32 bits (config/seedrange.go)
		s := flakegate.Seed(strconv.FormatUint(v, 10))
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// drawnFor is the drawn seeds of property ps on this check's base, less
// those the property lists (they run as listed seeds).
func (c *checker) drawnFor(ps *propState) []flakegate.Seed {
	listed := map[flakegate.Seed]bool{}
	for _, s := range ps.prop.Seeds {
		listed[s] = true
	}
	// A property that batches draws for its batches' key (the command
	// less the test and package it selects), so that drawn seeds are the
	// same for every property of one batch, across packages too; the key
	// comes from the base's config, like the run template's digest.
	key := ps.runSHA256
	if bk := batchTemplateKey(ps); bk != "" {
		key = "batch " + flakegate.SHA256Hex([]byte(bk))
	}
	if s := ps.prop.Suite; s != nil {
		key = suiteDrawKey(s)
	}
	var out []flakegate.Seed
	for _, s := range DrawSeeds(c.secret, c.baseSHA, key, ps.prop.Framework, ps.prop.RandomSeeds) {
		if !listed[s] {
			out = append(out, s)
		}
	}
	return out
}

// suiteDrawKey is what the triples of suite s draw their seeds for:
// the suite itself (its framework and path), so that every test of it,
// in every Go package, gets the same drawn order seeds, as they all get
// its listed ones; one drawn seed is one order of the whole suite (one
// process per package, or one pytest process), never a seed per package.
func suiteDrawKey(s *config.Suite) string {
	b, _ := json.Marshal([]string{s.Framework, s.Path})
	return "suite " + flakegate.SHA256Hex(b)
}

// seedSecret fetches the store's seed secret when some property draws
// seeds; a check without drawn seeds neither reads nor makes one. The
// secret stays in the checker: it is never written, logged or passed to
// an attempt.
func (c *checker) seedSecret(ctx context.Context) error {
	for _, ps := range c.props {
		if ps.prop.RandomSeeds > 0 {
			secret, err := c.store.SeedSecret(ctx)
			if err != nil {
				return flakegate.StoreError("read the store's seed secret", err)
			}
			c.secret = secret
			return nil
		}
	}
	return nil
}
