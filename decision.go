package flakegate

import (
	"bytes"
	"strconv"
	"unicode/utf8"
)

// Decision is the decision table's answer for one record. Its JSON holds the
// listing's keys (label, freeze, missing, paths, reason, and for SCHEDULER
// seed, property_path, fixture_sha256), the record_sha256 (null where the
// bytes are not a JSON value) and the table row that matched.
type Decision struct {
	Label  Label
	Freeze bool
	Row    int
	// RecordSHA256 is the canonical hash; "" when the bytes are not JSON.
	RecordSHA256 string
	// Missing lists required keys that are absent (row 1 only).
	Missing []string
	// Paths lists the watched paths found in diff_paths (CONTAMINATED).
	Paths []string
	// Reason says in words why the row matched (INCOMPLETE, BUDGET, ...).
	Reason string
	// Seed, PropertyPath and FixtureSHA256 name the triple (SCHEDULER).
	Seed          Seed
	PropertyPath  string
	FixtureSHA256 string
}

// Triple returns the triple a SCHEDULER decision names.
func (d Decision) Triple() Triple {
	return Triple{PropertyPath: d.PropertyPath, Seed: d.Seed, FixtureSHA256: d.FixtureSHA256}
}

// MarshalJSON writes the decision with keys in a fixed order.
func (d Decision) MarshalJSON() ([]byte, error) { return d.Append(nil), nil }

// AppendJSON writes the decision's JSON object to b.
func (d Decision) AppendJSON(b *bytes.Buffer) { b.Write(d.Append(b.AvailableBuffer())) }

// Append appends the decision's JSON object to b and returns it.
func (d Decision) Append(b []byte) []byte {
	b = append(b, `{"label":"`...)
	b = append(b, d.Label...)
	b = append(b, `","freeze":`...)
	b = strconv.AppendBool(b, d.Freeze)
	b = append(b, `,"row":`...)
	b = strconv.AppendInt(b, int64(d.Row), 10)
	b = append(b, `,"record_sha256":`...)
	if d.RecordSHA256 == "" {
		b = append(b, "null"...)
	} else {
		b = appendJSONString(b, d.RecordSHA256)
	}
	if d.Missing != nil {
		b = append(b, `,"missing":`...)
		b = appendStrings(b, d.Missing)
	}
	if d.Paths != nil {
		b = append(b, `,"paths":`...)
		b = appendStrings(b, d.Paths)
	}
	if d.Reason != "" {
		b = append(b, `,"reason":`...)
		b = appendJSONString(b, d.Reason)
	}
	if d.Label == Scheduler {
		b = append(b, `,"seed":`...)
		b = append(b, d.Seed...)
		b = append(b, `,"property_path":`...)
		b = appendJSONString(b, d.PropertyPath)
		b = append(b, `,"fixture_sha256":`...)
		b = appendJSONString(b, d.FixtureSHA256)
	}
	return append(b, '}')
}

func appendStrings(b []byte, ss []string) []byte {
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, s)
	}
	return append(b, ']')
}

// appendJSONString appends s as a JSON string the way encoding/json writes
// it: UTF-8 kept, quotes, backslashes and control characters escaped, <, >,
// & and U+2028/9 escaped so the output is safe in HTML too, and invalid
// UTF-8 written as U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += n
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += n
			start = i
			continue
		}
		i += n
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
