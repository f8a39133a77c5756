package store_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/cmd/flakegate/internal/store"
	"github.com/flakegate/flakegate/filestore"
	"github.com/flakegate/flakegate/postgres"
)

func TestOpen(t *testing.T) {
	type testCase struct {
		name    string
		spec    string
		common  string
		wantDir string // the folder the file store opens; "" = an error
		code    string
	}
	tmp := t.TempDir()
	run := func(t *testing.T, tc testCase) {
		s, err := store.Open(context.Background(), tc.spec, tc.common)
		if tc.code != "" {
			if flakegate.ErrorCode(err) != tc.code {
				t.Fatalf("Open: %v, want code %q", err, tc.code)
			}
			return
		}
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		defer s.Close()
		fs, ok := s.(*filestore.Store)
		if !ok || fs.Dir() != tc.wantDir {
			t.Fatalf("Open: %T in %v, want a file store in %s", s, fs, tc.wantDir)
		}
		if fi, err := os.Stat(tc.wantDir); err != nil || !fi.IsDir() {
			t.Fatalf("the store folder was not created: %v", err)
		}
	}
	for _, tc := range []testCase{
		{"git common dir", "", filepath.Join(tmp, ".git"), filepath.Join(tmp, ".git", "flakegate"), ""},
		{"folder", filepath.Join(tmp, "ledger"), "/unused", filepath.Join(tmp, "ledger"), ""},
		{"no repository", "", "", "", flakegate.EINVALID},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
	for _, spec := range []string{"postgres://u@h/db", "postgresql://h/db", "/a/dir", ""} {
		if got, want := postgres.IsDSN(spec), spec != "" && spec[0] == 'p'; got != want {
			t.Fatalf("IsDSN(%q) = %v", spec, got)
		}
	}
}

// TestStatus: what doctor says of a file store, read without creating or
// repairing anything.
func TestStatus(t *testing.T) {
	type testCase struct {
		name       string
		setup      func(t *testing.T, dir string) string // returns the spec
		common     string
		warn, fail bool
		text       string
		created    bool // the folder exists afterwards
	}
	run := func(t *testing.T, tc testCase) {
		dir := t.TempDir()
		spec := tc.setup(t, dir)
		common := strings.ReplaceAll(tc.common, "@dir", dir)
		tc.text = strings.ReplaceAll(tc.text, "@dir", dir)
		h := store.Status(context.Background(), spec, common)
		if h.Warn != tc.warn || h.Fail != tc.fail || !strings.Contains(h.Text, tc.text) {
			t.Errorf("Status(%q) = %+v, want warn %v fail %v and %q", spec, h, tc.warn, tc.fail, tc.text)
		}
		if spec != "" && !tc.created {
			if _, err := os.Stat(spec); err == nil {
				t.Errorf("Status created %s", spec)
			}
		}
	}
	for _, tc := range []testCase{
		{name: "not created yet", setup: func(t *testing.T, dir string) string { return filepath.Join(dir, "ledger") },
			text: "(not created yet: the first check creates it)"},
		{name: "an opened store", created: true, setup: func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "ledger")
			if _, err := filestore.Open(p); err != nil {
				t.Fatal(err)
			}
			return p
		}, text: "writable; ledger version 1, 0 freeze(s)"},
		{name: "a broken ledger.json", created: true, fail: true, setup: func(t *testing.T, dir string) string {
			if err := os.WriteFile(filepath.Join(dir, filestore.LedgerFile), []byte("{"), 0o644); err != nil {
				t.Fatal(err)
			}
			return dir
		}, text: "not valid JSON"},
		{name: "a file", created: true, fail: true, setup: func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "f")
			if err := os.WriteFile(p, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			return p
		}, text: "not a folder"},
		{name: "the default store of a repository", common: "@dir", setup: func(t *testing.T, dir string) string { return "" },
			text: "embedded file store @dir/" + filestore.DefaultDir + " (not created yet"},
		{name: "no repository, no ledger", setup: func(t *testing.T, dir string) string { return "" }, fail: true, text: "not in a git repository"},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}
