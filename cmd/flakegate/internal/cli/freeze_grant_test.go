package cli

import (
	"testing"

	"github.com/flakegate/flakegate/config"
)

func TestNewCmdFreezeGrantFlags(t *testing.T) {
	testParse(t, underFreeze(NewCmdFreezeGrant), []parseCase[FreezeGrantOptions]{
		{name: "defaults", args: []string{"grant", "--record", "r.json", "--owner", "alice"}, want: func(t *testing.T, o *FreezeGrantOptions) {
			same(t, "Record", o.Record, "r.json")
			same(t, "Owner", o.Owner, "alice")
			same(t, "Runs", o.Runs, config.DefaultExpiresAfterRuns)
			same(t, "Replace", o.Replace, false)
			same(t, "By", o.By, "")
			same(t, "JSON", o.JSON, false)
			same(t, "Ledger", o.Ledger, "")
		}},
		{name: "every flag", args: []string{"grant", "--record", "-", "--owner", "Zoë <zoe@example.com>", "--runs", "100",
			"--replace", "--by", "bot", "--json", "--ledger", "/srv/ledger"}, want: func(t *testing.T, o *FreezeGrantOptions) {
			same(t, "Record", o.Record, "-")
			same(t, "Owner", o.Owner, "Zoë <zoe@example.com>")
			same(t, "Runs", o.Runs, 100)
			same(t, "Replace", o.Replace, true)
			same(t, "By", o.By, "bot")
			same(t, "JSON", o.JSON, true)
			same(t, "Ledger", o.Ledger, "/srv/ledger")
		}},
		{name: "ledger before the subcommand", args: []string{"--ledger", "postgres://ci@db/fg", "grant", "--record", "r", "--owner", "a"},
			want: func(t *testing.T, o *FreezeGrantOptions) { same(t, "Ledger", o.Ledger, "postgres://ci@db/fg") }},
		{name: "ledger from the environment", args: []string{"grant", "--record", "r", "--owner", "a"}, env: map[string]string{"FLAKEGATE_LEDGER": "/env"},
			want: func(t *testing.T, o *FreezeGrantOptions) { same(t, "Ledger", o.Ledger, "/env") }},
		{name: "no record", args: []string{"grant", "--owner", "alice"}, errText: "no record given"},
		{name: "no owner", args: []string{"grant", "--record", "r.json"}, errText: "the owner is empty"},
		{name: "blank owner", args: []string{"grant", "--record", "r.json", "--owner", "  "}, errText: "the owner is empty"},
		{name: "zero runs", args: []string{"grant", "--record", "r.json", "--owner", "a", "--runs", "0"}, errText: "runs is 0"},
		{name: "too many runs", args: []string{"grant", "--record", "r.json", "--owner", "a", "--runs", "101"}, errText: "1 to 100 runs"},
		{name: "runs not a number", args: []string{"grant", "--record", "r.json", "--owner", "a", "--runs", "ten"}, errText: "invalid argument", errCode: "cobra"},
	})
}
