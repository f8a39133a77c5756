package cli

import "testing"

func TestNewCmdFreezeListFlags(t *testing.T) {
	testParse(t, underFreeze(NewCmdFreezeList), []parseCase[FreezeListOptions]{
		{name: "defaults", args: []string{"list"}, want: func(t *testing.T, o *FreezeListOptions) {
			same(t, "JSON", o.JSON, false)
			same(t, "Ledger", o.Ledger, "")
		}},
		{name: "json and ledger", args: []string{"list", "--json", "--ledger", "/l"}, want: func(t *testing.T, o *FreezeListOptions) {
			same(t, "JSON", o.JSON, true)
			same(t, "Ledger", o.Ledger, "/l")
		}},
		{name: "an argument", args: []string{"list", "extra"}, errText: `unknown command "extra"`, errCode: "cobra"},
	})
}
