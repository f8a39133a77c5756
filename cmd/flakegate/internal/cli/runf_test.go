package cli

import (
	"bytes"
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/flakegate/flakegate"
	"github.com/spf13/cobra"
)

// parseCase is one command line given to a command whose run step is
// replaced: want checks the options it would run with, or errText names
// the usage error it must give instead (code EINVALID unless errCode).
type parseCase[T any] struct {
	name    string
	args    []string
	env     map[string]string
	want    func(t *testing.T, o *T)
	errText string
	errCode string // "" is EINVALID; "cobra" is an error of cobra's own
}

// testParse runs each case through build(ios, runF) with a runF that
// captures the options and runs nothing, as cli/cli's tests do.
func testParse[T any](t *testing.T, build func(*IO, func(*T) error) *cobra.Command, cases []parseCase[T]) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseWith(build, tc.env, tc.args...)
			if tc.errText != "" {
				if err == nil {
					t.Fatalf("parsed %q into %+v, want an error containing %q", tc.args, got, tc.errText)
				}
				if got != nil {
					t.Errorf("runF was called despite the error %v", err)
				}
				if !strings.Contains(err.Error(), tc.errText) {
					t.Errorf("error %q, want it to contain %q", err, tc.errText)
				}
				switch code := flakegate.ErrorCode(err); tc.errCode {
				case "":
					if code != flakegate.EINVALID {
						t.Errorf("error code %q, want %q (exit 2)", code, flakegate.EINVALID)
					}
				case "cobra":
				default:
					if code != tc.errCode {
						t.Errorf("error code %q, want %q", code, tc.errCode)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("%q: %v", tc.args, err)
			}
			if got == nil {
				t.Fatalf("%q: runF was not called", tc.args)
			}
			tc.want(t, got)
		})
	}
}

func parseWith[T any](build func(*IO, func(*T) error) *cobra.Command, env map[string]string, args ...string) (*T, error) {
	ios := &IO{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{},
		Getenv: func(k string) string { return env[k] }}
	var got *T
	cmd := build(ios, func(o *T) error { got = o; return nil })
	if args == nil {
		args = []string{} // nil would make cobra read os.Args
	}
	cmd.SetArgs(args)
	cmd.SetOut(ios.Out)
	cmd.SetErr(ios.ErrOut)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	err := cmd.ExecuteContext(context.Background())
	return got, err
}

// underFreeze builds a freeze subcommand below a parent that has the
// persistent --ledger flag, as `flakegate freeze` does; the cases' args
// start with the subcommand's name.
func underFreeze[T any](sub func(*IO, func(*T) error) *cobra.Command) func(*IO, func(*T) error) *cobra.Command {
	return func(ios *IO, runF func(*T) error) *cobra.Command {
		parent := &cobra.Command{Use: "freeze"}
		addLedgerFlag(parent)
		parent.AddCommand(sub(ios, runF))
		return parent
	}
}

// same fails the test when got and want differ.
func same(t *testing.T, field string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s = %#v, want %#v", field, got, want)
	}
}
