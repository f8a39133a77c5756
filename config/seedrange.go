// Seeds a framework can take: fast-check (vitest, jest) reads 32 bits of
// its seed, rapid's -rapid.seed is a 64-bit unsigned integer, and
// Hypothesis's --hypothesis-seed takes an integer of any size or a
// string (drawn seeds, 1 to 2^53-1, fit 64 bits). A
// seed the framework would cut to another value runs a test other than the
// one its record names, so a listed seed outside the range is a config
// error and a drawn one is brought inside it (FitDrawnSeed).

package config

import (
	"math/big"
)

// Seed ranges by framework: 1 to MaxSeed32 for fast-check (a positive
// 32-bit integer: the same number whether fast-check reads it signed or
// unsigned), 1 to MaxSeed64 for rapid.
const (
	MaxSeed32 = 1<<31 - 1
	MaxSeed64 = 1<<64 - 1
)

// SeedRange is the largest integer seed the framework's seed option
// takes, and whether it takes string seeds (Hypothesis does; rapid's
// -rapid.seed and fast-check's seed do not). Hypothesis (pytest) and a
// framework flakegate does not know (none) take any seed: max is nil.
func SeedRange(framework string) (max *big.Int, strings bool) {
	switch framework {
	case FrameworkVitest, FrameworkJest:
		return big.NewInt(MaxSeed32), false
	case FrameworkGo:
		return new(big.Int).SetUint64(MaxSeed64), false
	}
	return nil, true
}

// FitDrawnSeed brings a drawn seed v (1 or more) inside the range of the
// framework's seed option: v itself where it fits, else 1 + (v-1) mod max.
func FitDrawnSeed(framework string, v uint64) uint64 {
	max, _ := SeedRange(framework)
	if max == nil || !max.IsUint64() || v <= max.Uint64() || v == 0 {
		return v
	}
	return 1 + (v-1)%max.Uint64()
}

// seedFits says why the listed seed s (its record form: digits, or a
// quoted string) is outside what the framework takes, "" when it fits.
func seedFits(framework, s string) string {
	max, strs := SeedRange(framework)
	if max == nil {
		return ""
	}
	name := map[string]string{FrameworkVitest: "fast-check", FrameworkJest: "fast-check", FrameworkGo: "rapid"}[framework]
	if len(s) > 0 && s[0] == '"' {
		if strs {
			return ""
		}
		return "seed " + s + " is a string, but " + name + " (framework " + framework + ") takes only integer seeds"
	}
	v, ok := new(big.Int).SetString(s, 10)
	if !ok || v.Sign() < 0 || v.Cmp(max) > 0 {
		return "seed " + s + " is outside what " + name + " (framework " + framework + ") takes, 0 to " + max.String() + ": it would run another seed than its record names"
	}
	return ""
}
