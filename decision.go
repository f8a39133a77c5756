package flakegate

import (
	"bytes"
	"strconv"

	"github.com/flakegate/flakegate/canonjson"
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

// Append appends the decision's JSON object to b and returns it. Strings
// are in the output form (canonjson.AppendString: encoding/json's), not
// the canonical form the record hash is over.
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
		b = canonjson.AppendString(b, d.RecordSHA256)
	}
	if d.Missing != nil {
		b = append(b, `,"missing":`...)
		b = canonjson.AppendStrings(b, d.Missing)
	}
	if d.Paths != nil {
		b = append(b, `,"paths":`...)
		b = canonjson.AppendStrings(b, d.Paths)
	}
	if d.Reason != "" {
		b = append(b, `,"reason":`...)
		b = canonjson.AppendString(b, d.Reason)
	}
	if d.Label == Scheduler {
		b = append(b, `,"seed":`...)
		b = append(b, d.Seed...)
		b = append(b, `,"property_path":`...)
		b = canonjson.AppendString(b, d.PropertyPath)
		b = append(b, `,"fixture_sha256":`...)
		b = canonjson.AppendString(b, d.FixtureSHA256)
	}
	return append(b, '}')
}
