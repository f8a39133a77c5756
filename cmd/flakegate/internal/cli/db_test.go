package cli

import (
	"context"
	"strings"
	"testing"
)

// The migration itself runs against a real PostgreSQL in
// postgres/cli_test.go; here only the command line is parsed.
func TestNewCmdDBMigrateFlags(t *testing.T) {
	testParse(t, NewCmdDBMigrate, []parseCase[DBMigrateOptions]{
		{name: "ledger flag", args: []string{"--ledger", "postgres://ci@db/flakegate"}, want: func(t *testing.T, o *DBMigrateOptions) {
			same(t, "Ledger", o.Ledger, "postgres://ci@db/flakegate")
		}},
		{name: "flag wins over the environment", args: []string{"--ledger", "postgres://a/x"},
			env: map[string]string{"FLAKEGATE_LEDGER": "postgres://b/y"}, want: func(t *testing.T, o *DBMigrateOptions) {
				same(t, "Ledger", o.Ledger, "postgres://a/x")
			}},
		{name: "environment", env: map[string]string{"FLAKEGATE_LEDGER": "postgresql://b/y"}, want: func(t *testing.T, o *DBMigrateOptions) {
			same(t, "Ledger", o.Ledger, "postgresql://b/y")
		}},
		{name: "nothing named: the run step refuses it", want: func(t *testing.T, o *DBMigrateOptions) {
			same(t, "Ledger", o.Ledger, "")
		}},
		{name: "an argument", args: []string{"postgres://a/x"}, errText: `unknown command "postgres://a/x"`, errCode: "cobra"},
	})
}

// TestDBMigrateRefusals: the run step's own refusals need no database.
func TestDBMigrateRefusals(t *testing.T) {
	for _, tc := range []struct {
		name, ledger, want string
	}{
		{"no database", "", "no database named"},
		{"a folder", "/tmp/ledger", "not a PostgreSQL DSN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := runDBMigrate(context.Background(), &DBMigrateOptions{IO: &IO{}, Ledger: tc.ledger})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
		})
	}
}
