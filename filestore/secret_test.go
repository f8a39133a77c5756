package filestore_test

import (
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/filestore"
)

// TestSeedSecretFile: the secret is 64 hex digits and a newline in a file
// of mode 0600, written only when a caller asks for it.
func TestSeedSecretFile(t *testing.T) {
	s := openStore(t)
	path := filepath.Join(s.Dir(), filestore.SecretFile)
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("a new store has a secret file before any check drew a seed: %v", err)
	}
	secret, err := s.SeedSecret(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(raw) != hex.EncodeToString(secret)+"\n" {
		t.Errorf("the file holds %d bytes, not the secret's 64 hex digits and a newline", len(raw))
	}
	ents, err := os.ReadDir(s.Dir())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

// TestSeedSecretGarbled: a secret file that does not hold 32 bytes in hex
// is an error that says what to do; it is never replaced, and the error
// does not quote it.
func TestSeedSecretGarbled(t *testing.T) {
	for name, content := range map[string]string{
		"short":     strings.Repeat("ab", 16) + "\n",
		"long":      strings.Repeat("ab", 33) + "\n",
		"not hex":   strings.Repeat("zq", 32) + "\n",
		"empty":     "",
		"truncated": strings.Repeat("ab", 31) + "a",
	} {
		t.Run(name, func(t *testing.T) {
			s := openStore(t)
			path := filepath.Join(s.Dir(), filestore.SecretFile)
			if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			secret, err := s.SeedSecret(ctx)
			fe, ok := err.(*flakegate.Error)
			if !ok || fe.Code != flakegate.EINVALID || fe.Hint == "" || secret != nil {
				t.Fatalf("SeedSecret: %v (%T), secret %d bytes; want EINVALID with a hint", err, err, len(secret))
			}
			if content != "" && strings.Contains(err.Error()+fe.Hint, strings.TrimSpace(content)) {
				t.Errorf("the error quotes the file: %v", err)
			}
			if raw, _ := os.ReadFile(path); string(raw) != content {
				t.Errorf("the garbled secret was rewritten")
			}
		})
	}
}
