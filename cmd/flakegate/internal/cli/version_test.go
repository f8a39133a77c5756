package cli

import (
	"runtime"
	"strings"
	"testing"

	"github.com/flakegate/flakegate"
)

func TestNewCmdVersionFlags(t *testing.T) {
	testParse(t, NewCmdVersion, []parseCase[VersionOptions]{
		{name: "no arguments", args: nil, want: func(t *testing.T, o *VersionOptions) {
			if o.IO == nil {
				t.Error("no IO")
			}
		}},
		{name: "an argument", args: []string{"extra"}, errText: `unknown command "extra"`, errCode: "cobra"},
		{name: "a flag", args: []string{"--short"}, errText: "unknown flag: --short", errCode: "cobra"},
	})
}

func TestVersionCommand(t *testing.T) {
	out, errOut, code := runCLI(t, "", "version")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	want := "flakegate " + flakegate.Version + " (" + runtime.Version() + ", schema " + flakegate.Schema + ")\n"
	if out != want {
		t.Errorf("stdout %q, want %q", out, want)
	}
	if !strings.HasPrefix(flakegate.Schema, "flakegate.run/") {
		t.Errorf("schema %q", flakegate.Schema)
	}
}
