package flakegate

import (
	"encoding/json"
	"strconv"

	"github.com/flakegate/flakegate/internal/lazyre"
)

// Seed is a property seed in its canonical JSON text: the exact decimal
// digits of an integer seed (1402, any size), or a quoted string of
// [A-Za-z0-9._:-] ("nightly-3"). Keeping the JSON text keeps 1402 and
// "1402" apart, as the record hash does.
type Seed string

// The record's "seed_origin" for a seed not listed in the config (absent
// for a listed one).
const (
	// SeedDrawn is a seed drawn for the candidate.
	SeedDrawn = "drawn"
	// SeedCorpus is a seed of the failure corpus.
	SeedCorpus = "corpus"
)

var (
	seedIntRe = lazyre.New(`^-?(0|[1-9][0-9]*)$`)
	seedStrRe = lazyre.New(`^[A-Za-z0-9._:-]+$`)
)

// ParseSeed reads a seed as a user types it on the command line or in the
// config: digits are an integer seed, anything else must be a seed string.
func ParseSeed(s string) (Seed, error) {
	if seedIntRe.MatchString(s) {
		if s == "-0" {
			s = "0"
		}
		return Seed(s), nil
	}
	if seedStrRe.MatchString(s) {
		return Seed(strconv.Quote(s)), nil
	}
	return "", Errorf(EINVALID, "seed %q: want an integer or a string of [A-Za-z0-9._:-]", s)
}

// IsInt reports whether the seed is an integer seed.
func (s Seed) IsInt() bool { return len(s) > 0 && s[0] != '"' }

// String returns the seed as a user writes it: digits, or the bare string.
func (s Seed) String() string {
	if len(s) >= 2 && s[0] == '"' {
		return string(s[1 : len(s)-1])
	}
	return string(s)
}

// Valid reports whether s is a well-formed canonical seed.
func (s Seed) Valid() bool {
	if s.IsInt() {
		return seedIntRe.MatchString(string(s)) && s != "-0"
	}
	return len(s) >= 3 && s[len(s)-1] == '"' && seedStrRe.MatchString(string(s[1:len(s)-1]))
}

// MarshalJSON writes the seed's JSON text as is.
func (s Seed) MarshalJSON() ([]byte, error) {
	if !s.Valid() {
		return nil, Errorf(EINVALID, "invalid seed %q", string(s))
	}
	return []byte(s), nil
}

// UnmarshalJSON accepts a JSON integer or a seed string.
func (s *Seed) UnmarshalJSON(b []byte) error {
	var v Seed
	if len(b) > 0 && b[0] == '"' {
		var str string
		if err := json.Unmarshal(b, &str); err != nil {
			return err
		}
		if !seedStrRe.MatchString(str) {
			return Errorf(EINVALID, "seed %q: want a string of [A-Za-z0-9._:-]", str)
		}
		v = Seed(strconv.Quote(str))
	} else {
		v = Seed(b)
		if v == "-0" {
			v = "0"
		}
		if !v.Valid() {
			return Errorf(EINVALID, "seed %s: want an integer or a string", string(b))
		}
	}
	*s = v
	return nil
}
