// Seeds drawn from the candidate sha (random_seeds in the config).

package check

import (
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

// DrawSeeds returns n seeds for property p drawn from the candidate sha:
// the same candidate gets the same seeds, another candidate other ones.
// Seed i is the first 8 bytes of sha256("flakegate drawn seed\x00" +
// candidate sha + "\x00" + path + "\x00" + name + "\x00" + i), as a
// big-endian integer, mod 2^53-1, plus 1; a value that repeats a listed
// or earlier seed is skipped.
func DrawSeeds(candSHA string, p *config.Property, n int) []flakegate.Seed {
	seen := map[flakegate.Seed]bool{}
	for _, s := range p.Seeds {
		seen[s] = true
	}
	var out []flakegate.Seed
	for i := 0; len(out) < n; i++ {
		sum := sha256.Sum256([]byte("flakegate drawn seed\x00" + candSHA + "\x00" + p.Path + "\x00" + p.Name + "\x00" + strconv.Itoa(i)))
		v := binary.BigEndian.Uint64(sum[:8])%MaxDrawnSeed + 1
		s := flakegate.Seed(strconv.FormatUint(v, 10))
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// SeedDrawn is the record's "seed_origin" for a seed drawn from the
// candidate sha (absent for a seed listed in the config).
const SeedDrawn = "drawn"
