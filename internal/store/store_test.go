package store_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/filestore"
	"github.com/flakegate/flakegate/internal/store"
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
