package flakegate

// ShortSHA returns the first 12 characters of a commit hash or a sha256
// digest, as people read them in lines and tables; a shorter string is
// returned whole.
func ShortSHA(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}
