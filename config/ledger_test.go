package config_test

import (
	"strings"
	"testing"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/config"
)

// TestLoadLedgerKeyEnv: ledger.key_env names the variable of the ledger
// key (default FLAKEGATE_LEDGER_KEY); anything but a variable name, or
// another key in the block, is refused with the key named.
func TestLoadLedgerKeyEnv(t *testing.T) {
	type testCase struct {
		name, block, want, err string
	}
	run := func(t *testing.T, tc testCase) {
		yaml := "version: 1\n" + tc.block + "properties:\n  - {path: a.py, seeds: [1], run: [x], wall_budget: 1s}\n"
		cfg, err := config.Load([]byte(yaml), "")
		if tc.err != "" {
			if flakegate.ErrorCode(err) != flakegate.EINVALID || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("Load = %v, want EINVALID with %q", err, tc.err)
			}
			return
		}
		if err != nil || cfg.Ledger.KeyEnv != tc.want {
			t.Fatalf("Load = %+v, %v; want key_env %s", cfg.Ledger, err, tc.want)
		}
	}
	for _, tc := range []testCase{
		{name: "default", want: config.DefaultLedgerKeyEnv},
		{name: "named", block: "ledger: {key_env: CI_LEDGER_KEY}\n", want: "CI_LEDGER_KEY"},
		{name: "not a name", block: "ledger: {key_env: \"A-B\"}\n", err: "ledger.key_env"},
		{name: "not a string", block: "ledger: {key_env: [A]}\n", err: "ledger.key_env"},
		{name: "unknown key", block: "ledger: {key: abc}\n", err: "key"},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}
