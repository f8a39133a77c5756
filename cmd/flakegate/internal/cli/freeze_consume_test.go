package cli

import (
	"testing"

	"github.com/flakegate/flakegate"
)

func TestNewCmdFreezeConsumeFlags(t *testing.T) {
	testParse(t, underFreeze(NewCmdFreezeConsume), []parseCase[FreezeConsumeOptions]{
		{name: "digest left to the run step", args: []string{"consume", "--property", "p.py", "--seed", "7", "--fixture-sha256", "f"},
			want: func(t *testing.T, o *FreezeConsumeOptions) {
				same(t, "Triple", o.Triple, flakegate.Triple{PropertyPath: "p.py", Seed: "7", FixtureSHA256: "f"})
				same(t, "PropertySHA256", o.PropertySHA256, "")
				same(t, "By", o.By, "")
				same(t, "JSON", o.JSON, false)
			}},
		{name: "every flag", args: []string{"consume", "--property", "p.py", "--seed", "7", "--fixture-sha256", "f",
			"--property-sha256", "beef", "--by", "runner-3", "--json"}, want: func(t *testing.T, o *FreezeConsumeOptions) {
			same(t, "PropertySHA256", o.PropertySHA256, "beef")
			same(t, "By", o.By, "runner-3")
			same(t, "JSON", o.JSON, true)
		}},
		{name: "no triple", args: []string{"consume"}, errText: "--property is required"},
		{name: "seed with a space", args: []string{"consume", "--property", "p", "--seed", "a b", "--fixture-sha256", "f"}, errText: `seed "a b"`},
	})
}
