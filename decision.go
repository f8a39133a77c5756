package flakegate

import (
	"bytes"
	"encoding/json"
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
func (d Decision) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	d.AppendJSON(&b)
	return b.Bytes(), nil
}

// AppendJSON writes the decision's JSON object to b without allocating
// more than the buffer needs.
func (d Decision) AppendJSON(b *bytes.Buffer) {
	b.WriteString(`{"label":"`)
	b.WriteString(string(d.Label))
	b.WriteString(`","freeze":`)
	if d.Freeze {
		b.WriteString("true")
	} else {
		b.WriteString("false")
	}
	b.WriteString(`,"row":`)
	writeInt(b, d.Row)
	b.WriteString(`,"record_sha256":`)
	if d.RecordSHA256 == "" {
		b.WriteString("null")
	} else {
		b.WriteByte('"')
		b.WriteString(d.RecordSHA256)
		b.WriteByte('"')
	}
	if d.Missing != nil {
		b.WriteString(`,"missing":`)
		writeStrings(b, d.Missing)
	}
	if d.Paths != nil {
		b.WriteString(`,"paths":`)
		writeStrings(b, d.Paths)
	}
	if d.Reason != "" {
		b.WriteString(`,"reason":`)
		writeJSONString(b, d.Reason)
	}
	if d.Label == Scheduler {
		b.WriteString(`,"seed":`)
		b.WriteString(string(d.Seed))
		b.WriteString(`,"property_path":`)
		writeJSONString(b, d.PropertyPath)
		b.WriteString(`,"fixture_sha256":`)
		writeJSONString(b, d.FixtureSHA256)
	}
	b.WriteByte('}')
}

func writeInt(b *bytes.Buffer, n int) {
	var tmp [20]byte
	i := len(tmp)
	neg := n < 0
	if neg {
		n = -n
	}
	for {
		i--
		tmp[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			break
		}
	}
	if neg {
		i--
		tmp[i] = '-'
	}
	b.Write(tmp[i:])
}

func writeStrings(b *bytes.Buffer, ss []string) {
	b.WriteByte('[')
	for i, s := range ss {
		if i > 0 {
			b.WriteByte(',')
		}
		writeJSONString(b, s)
	}
	b.WriteByte(']')
}

// writeJSONString writes s as a JSON string: UTF-8 kept, quotes,
// backslashes and control characters escaped, and <, >, & and U+2028/9
// escaped as encoding/json does, so the output is safe in HTML too.
func writeJSONString(b *bytes.Buffer, s string) {
	simple := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' || c >= 0x80 {
			simple = false
			break
		}
	}
	if simple {
		b.WriteByte('"')
		b.WriteString(s)
		b.WriteByte('"')
		return
	}
	enc, _ := json.Marshal(s)
	b.Write(enc)
}
