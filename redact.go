package flakegate

// MinSecretSize is the shortest value redacted wherever it appears.
const MinSecretSize = 8

// WeakSecret reports whether v is too weak to be redacted wherever it
// appears: shorter than MinSecretSize bytes, or a word (ASCII letters
// only, such as the DSN password "flakegate"). Redacting such a value as
// a substring would blank ordinary words of flakegate's own output
// (every "flakegate" became "[redacted]"), and it is guessable anyway.
// A weak password is redacted only as a whole token of its DSN: the DSN
// itself and its "user:password@" part.
func WeakSecret(v string) bool {
	if len(v) < MinSecretSize {
		return true
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}
