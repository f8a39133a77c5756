package cli

import "testing"

func TestNewCmdFreezeVerifyFlags(t *testing.T) {
	testParse(t, underFreeze(NewCmdFreezeVerify), []parseCase[FreezeVerifyOptions]{
		{name: "defaults", args: []string{"verify"}, want: func(t *testing.T, o *FreezeVerifyOptions) {
			same(t, "By", o.By, "")
			same(t, "JSON", o.JSON, false)
		}},
		{name: "by and json", args: []string{"verify", "--by", "nightly", "--json", "--ledger", "postgres://x/y"}, want: func(t *testing.T, o *FreezeVerifyOptions) {
			same(t, "By", o.By, "nightly")
			same(t, "JSON", o.JSON, true)
			same(t, "Ledger", o.Ledger, "postgres://x/y")
		}},
		{name: "an argument", args: []string{"verify", "ledger.json"}, errText: `unknown command "ledger.json"`, errCode: "cobra"},
	})
}
