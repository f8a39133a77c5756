// Seeds drawn for the candidate (random_seeds in the config), keyed by the
// store's secret.

package check

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"strconv"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/config"
)

// MaxDrawnSeed bounds drawn seeds: 1 to 2^53-1, integers every JSON
// reader keeps exactly and every framework accepts (never 0, which rapid
// reads as "pick a random seed").
const MaxDrawnSeed = 1<<53 - 1

// DrawSeeds returns n seeds for property p drawn for the candidate sha
// with the store's secret (flakegate.SeedSecretStore): on one store the
// same candidate gets the same seeds, another candidate other ones, and
// another store (another secret) other ones too. Without the secret
// nobody can tell which seeds a commit will draw, so a patch author who
// rewords the commit (and so chooses its sha) cannot steer them.
//
// Seed i is the first 8 bytes of HMAC-SHA256(secret, "flakegate drawn
// seed\x00" + candidate sha + "\x00" + path + "\x00" + name + "\x00" +
// i), as a big-endian integer, mod 2^53-1, plus 1; a value that repeats a
// listed or earlier seed is skipped.
func DrawSeeds(secret []byte, candSHA string, p *config.Property, n int) []flakegate.Seed {
	seen := map[flakegate.Seed]bool{}
	for _, s := range p.Seeds {
		seen[s] = true
	}
	var out []flakegate.Seed
	for i := 0; len(out) < n; i++ {
		mac := hmac.New(sha256.New, secret)
		mac.Write([]byte("flakegate drawn seed\x00" + candSHA + "\x00" + p.Path + "\x00" + p.Name + "\x00" + strconv.Itoa(i)))
		sum := mac.Sum(nil)
		v := binary.BigEndian.Uint64(sum[:8])%MaxDrawnSeed + 1
		v = config.FitDrawnSeed(p.Framework, v) // fast-check takes 32 bits (config/seedrange.go)
		s := flakegate.Seed(strconv.FormatUint(v, 10))
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
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
				return storeError("read the store's seed secret", err)
			}
			c.secret = secret
			return nil
		}
	}
	return nil
}

// SeedDrawn is the record's "seed_origin" for a seed drawn for the
// candidate (absent for a seed listed in the config).
const SeedDrawn = "drawn"
