package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/flakegate/flakegate"
)

// freezeLister is the part of a store resolveFixturePrefix reads.
type freezeLister interface {
	ListFreezes(ctx context.Context) ([]flakegate.Freeze, error)
}

// resolveFixturePrefix completes the --fixture-sha256 of t from the
// freezes of its (property, name, seed): freeze list shows 12 characters,
// and any prefix that names one freeze's digest stands for it. A prefix
// that names several is refused, listing them; one that names none is
// left as given (the store then says there is no such freeze).
func resolveFixturePrefix(ctx context.Context, s freezeLister, t flakegate.Triple, op string) (flakegate.Triple, error) {
	fs, err := s.ListFreezes(ctx)
	if err != nil {
		return t, err
	}
	var matches []string
	for _, f := range fs {
		if f.PropertyPath != t.PropertyPath || f.Name != t.Name || f.Seed.String() != t.Seed.String() {
			continue
		}
		if f.FixtureSHA256 == t.FixtureSHA256 {
			return t, nil // the full digest
		}
		if strings.HasPrefix(f.FixtureSHA256, t.FixtureSHA256) {
			matches = append(matches, f.FixtureSHA256)
		}
	}
	switch len(matches) {
	case 0:
		return t, nil
	case 1:
		t.FixtureSHA256 = matches[0]
		return t, nil
	}
	return t, &flakegate.Error{Code: flakegate.EINVALID, Op: op,
		Message: fmt.Sprintf("--fixture-sha256 %s is ambiguous: it begins %d freezes' fixture digests of %s seed %s (%s)",
			t.FixtureSHA256, len(matches), t.PropertyPath, t.Seed, strings.Join(matches, ", ")),
		Hint: "give more characters of the digest, or all 64 (flakegate freeze list --json shows them)"}
}
