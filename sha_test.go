package flakegate_test

import (
	"testing"

	"github.com/flakegate/flakegate"
)

func TestShortSHA(t *testing.T) {
	for in, want := range map[string]string{
		"":                                 "",
		"abc":                              "abc",
		"0123456789ab":                     "0123456789ab",
		"0123456789abc":                    "0123456789ab",
		"3f2a9c0d1e7b5a4c8f6e2d1c0b9a8f7e": "3f2a9c0d1e7b",
	} {
		if got := flakegate.ShortSHA(in); got != want {
			t.Errorf("ShortSHA(%q) = %q, want %q", in, got, want)
		}
	}
}
