package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDigestCommand(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "fixture", "data.bin")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("abc"), 0o644); err != nil {
		t.Fatal(err)
	}
	odd := filepath.Join(dir, "a\\b")
	if err := os.WriteFile(odd, []byte("abc"), 0o644); err != nil {
		t.Fatal(err)
	}
	abc := "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
	// The tree digest of a folder holding only data.bin, from FORMAT.md.
	stream := "flakegate-tree-v1\nf " + abc + " data.bin\x00"
	sum := sha256.Sum256([]byte(stream))
	tree := hex.EncodeToString(sum[:])
	missing := filepath.Join(dir, "missing")

	type testCase struct {
		name   string
		args   []string
		code   int
		out    string
		errOut []string // substrings of stderr
	}
	run := func(t *testing.T, tc testCase) {
		out, errOut, code := runCLI(t, "", tc.args...)
		if code != tc.code {
			t.Fatalf("exit %d, want %d; stderr:\n%s", code, tc.code, errOut)
		}
		if out != tc.out {
			t.Fatalf("stdout:\n%s\nwant:\n%s", out, tc.out)
		}
		for _, s := range tc.errOut {
			if !strings.Contains(errOut, s) {
				t.Fatalf("stderr %q does not contain %q", errOut, s)
			}
		}
		if len(tc.errOut) == 0 && errOut != "" {
			t.Fatalf("unexpected stderr %q", errOut)
		}
	}
	for _, tc := range []testCase{
		{name: "file", args: []string{"digest", file}, out: abc + "  " + file + "\n"},
		{name: "folder", args: []string{"digest", filepath.Dir(file)}, out: tree + "  " + filepath.Dir(file) + "\n"},
		{name: "several", args: []string{"digest", file, filepath.Dir(file)}, out: abc + "  " + file + "\n" + tree + "  " + filepath.Dir(file) + "\n"},
		{name: "escaped like sha256sum", args: []string{"digest", odd}, out: `\` + abc + "  " + strings.ReplaceAll(odd, `\`, `\\`) + "\n"},
		{name: "missing path", args: []string{"digest", missing}, code: ExitUsage, errOut: []string{"Error: digest: " + missing + ": no such file or directory"}},
		{name: "missing among others", args: []string{"digest", missing, file}, code: ExitUsage, out: abc + "  " + file + "\n", errOut: []string{missing}},
		{name: "no path", args: []string{"digest"}, code: ExitUsage, errOut: []string{"no path given", "Try: flakegate digest PATH ..."}},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func TestNewCmdDigestFlags(t *testing.T) {
	testParse(t, NewCmdDigest, []parseCase[DigestOptions]{
		{name: "paths", args: []string{"tests/fixtures/retry", "prop.py"}, want: func(t *testing.T, o *DigestOptions) {
			same(t, "Paths", o.Paths, []string{"tests/fixtures/retry", "prop.py"})
		}},
		{name: "a path that looks like a flag after --", args: []string{"--", "-odd"}, want: func(t *testing.T, o *DigestOptions) {
			same(t, "Paths", o.Paths, []string{"-odd"})
		}},
		{name: "no path", args: nil, errText: "no path given"},
		{name: "unknown flag", args: []string{"--algo", "md5", "x"}, errText: "unknown flag: --algo", errCode: "cobra"},
	})
}
