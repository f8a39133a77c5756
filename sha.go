package flakegate

import (
	"crypto/sha256"
	"encoding/hex"
)

// SHA256Hex returns the sha256 of b in lowercase hex, as records, keys
// and digests write it.
func SHA256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// ShortSHA returns the first 12 characters of a commit hash or a sha256
// digest, as people read them in lines and tables; a shorter string is
// returned whole.
func ShortSHA(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// ValidCommitSHA reports whether s is a full git commit hash: 40 (SHA-1)
// or 64 (SHA-256) lowercase hex digits.
func ValidCommitSHA(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// ValidSHA256 reports whether s is 64 lowercase hex digits.
func ValidSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
