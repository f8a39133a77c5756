package template

import (
	"slices"
	"strings"
	"testing"

	"github.com/flakegate/flakegate"
)

func TestExpand(t *testing.T) {
	vars := Vars{Path: "tests/props/test_retry.py", Seed: "1402", Samples: "200", Fixture: "tests/fixtures/retry"}
	type testCase struct {
		name    string
		tmpl    []string
		vars    Vars
		want    []string
		wantErr string // substring of the EINVALID message
	}
	run := func(t *testing.T, tc testCase) {
		got, err := Expand(tc.tmpl, tc.vars)
		if tc.wantErr != "" {
			if err == nil {
				t.Fatalf("Expand(%q) = %q, want an error containing %q", tc.tmpl, got, tc.wantErr)
			}
			if code := flakegate.ErrorCode(err); code != flakegate.EINVALID {
				t.Errorf("error code = %q, want %q", code, flakegate.EINVALID)
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error = %q, want it to contain %q", err, tc.wantErr)
			}
			return
		}
		if err != nil {
			t.Fatalf("Expand(%q): %v", tc.tmpl, err)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("Expand(%q) = %q, want %q", tc.tmpl, got, tc.want)
		}
	}
	for _, tc := range []testCase{
		{name: "all placeholders", vars: vars,
			tmpl: []string{"pytest", "{path}", "{seed}", "{samples}", "{fixture}"},
			want: []string{"pytest", vars.Path, "1402", "200", vars.Fixture}},
		{name: "inside a longer argument", vars: vars,
			tmpl: []string{"pytest", "-q", "{path}", "--hypothesis-seed={seed}", "--n={samples}/{samples}"},
			want: []string{"pytest", "-q", vars.Path, "--hypothesis-seed=1402", "--n=200/200"}},
		{name: "no placeholders", vars: Vars{},
			tmpl: []string{"go", "test", "./..."},
			want: []string{"go", "test", "./..."}},
		{name: "braces that are not placeholders stay", vars: vars,
			tmpl: []string{"find", ".", "-exec", "{}", ";", `{"a":1}`, "[0-9]{3}", "{", "}", "{{seed}}", "{seed"},
			want: []string{"find", ".", "-exec", "{}", ";", `{"a":1}`, "[0-9]{3}", "{", "}", "{1402}", "{seed"}},
		{name: "a value is not expanded again", vars: Vars{Path: "{seed}", Seed: "7"},
			tmpl: []string{"run", "{path}"},
			want: []string{"run", "{seed}"}},
		{name: "placeholder in the command name", vars: Vars{Path: "./prop.sh"},
			tmpl: []string{"{path}", "x"},
			want: []string{"./prop.sh", "x"}},
		{name: "empty argv", vars: vars, tmpl: nil, wantErr: "the command is empty"},
		{name: "empty command name", vars: vars, tmpl: []string{"", "x"}, wantErr: "command name is empty"},
		{name: "unknown placeholder", vars: vars, tmpl: []string{"pytest", "--x={seeds}"}, wantErr: "unknown placeholder {seeds}"},
		{name: "unknown placeholder, upper case", vars: vars, tmpl: []string{"pytest", "{Seed}"}, wantErr: "unknown placeholder {Seed}"},
		{name: "placeholder without a value", vars: Vars{Seed: "1"}, tmpl: []string{"pytest", "{samples}"}, wantErr: "{samples} has no value"},
		{name: "NUL in a value", vars: Vars{Seed: "1\x00; rm"}, tmpl: []string{"pytest", "{seed}"}, wantErr: "contains a NUL"},
		{name: "NUL in the template", vars: vars, tmpl: []string{"pytest", "a\x00b"}, wantErr: "contains a NUL"},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func FuzzExpand(f *testing.F) {
	f.Add("--seed={seed}", "1402")
	f.Add("{x}{", "")
	f.Add("{{path}}", "a{seed}")
	f.Fuzz(func(t *testing.T, arg, val string) {
		got, err := Expand([]string{"cmd", arg}, Vars{Path: val, Seed: val, Samples: val, Fixture: val})
		if err != nil {
			return
		}
		if len(got) != 2 || got[0] != "cmd" {
			t.Fatalf("Expand changed the argv shape: %q", got)
		}
		if strings.IndexByte(got[1], 0) >= 0 {
			t.Fatalf("Expand let a NUL through: %q", got[1])
		}
	})
}
