package cli

import (
	"testing"

	"github.com/flakegate/flakegate"
)

func TestNewCmdFreezeRevokeFlags(t *testing.T) {
	triple := []string{"--property", "./tests//props/p.py", "--seed", "1402", "--fixture-sha256", "f00d"}
	args := func(more ...string) []string { return append(append([]string{"revoke"}, triple...), more...) }
	testParse(t, underFreeze(NewCmdFreezeRevoke), []parseCase[FreezeRevokeOptions]{
		{name: "triple cleaned, default reason", args: args("--by", " alice "), want: func(t *testing.T, o *FreezeRevokeOptions) {
			same(t, "Triple", o.Triple, flakegate.Triple{PropertyPath: "tests/props/p.py", Seed: "1402", FixtureSHA256: "f00d"})
			same(t, "By", o.By, "alice")
			same(t, "Reason", o.Reason, "revoked by hand")
		}},
		{name: "string seed and reason", args: []string{"revoke", "--property", "p.py", "--seed", "nightly-3", "--fixture-sha256", "f",
			"--by", "bob", "--reason", "fixed upstream"}, want: func(t *testing.T, o *FreezeRevokeOptions) {
			same(t, "Seed", o.Triple.Seed, flakegate.Seed(`"nightly-3"`))
			same(t, "Reason", o.Reason, "fixed upstream")
		}},
		{name: "no by", args: args(), errText: "--by is required"},
		{name: "no property", args: []string{"revoke", "--seed", "1", "--fixture-sha256", "f", "--by", "a"}, errText: "--property is required"},
		{name: "no seed", args: []string{"revoke", "--property", "p", "--fixture-sha256", "f", "--by", "a"}, errText: "--seed is required"},
		{name: "no fixture", args: []string{"revoke", "--property", "p", "--seed", "1", "--by", "a"}, errText: "--fixture-sha256 is required"},
		{name: "bad seed", args: []string{"revoke", "--property", "p", "--seed", "1 2", "--fixture-sha256", "f", "--by", "a"}, errText: `seed "1 2"`},
	})
}
