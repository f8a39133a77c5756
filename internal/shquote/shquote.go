// Package shquote writes a string as one word of a POSIX shell.
package shquote

import "strings"

// Word is s in single quotes, where sh reads every byte literally; a
// single quote is written as quote, backslash, quote, quote.
func Word(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Readable is s as it reads best: as it is when sh reads all of it
// literally (letters, digits and -_./=:,+@%), else Word(s).
func Readable(s string) string {
	if s == "" {
		return "''"
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%", r)) {
			return Word(s)
		}
	}
	return s
}
