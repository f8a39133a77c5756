package flakegate_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/flakegate/flakegate"
	"github.com/flakegate/flakegate/canonjson"
)

// addVectorSeeds seeds a fuzz target with every conformance vector's bytes
// (testdata/fuzz/<target>/ holds the corpus found by earlier runs).
func addVectorSeeds(f *testing.F) {
	f.Helper()
	for _, v := range loadVectors(f) {
		f.Add(v.raw(f))
	}
	f.Add([]byte(goodRecord))
}

// writeReversed writes v as JSON with the members of every object in
// reverse order: the same record, other bytes.
func writeReversed(b *bytes.Buffer, v *canonjson.Value) {
	plain := &jsonLayout{}
	switch v.Kind {
	case canonjson.KindNull:
		b.WriteString("null")
	case canonjson.KindBool:
		if v.Bool {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case canonjson.KindNumber:
		b.WriteString(v.Str)
	case canonjson.KindString:
		plain.writeString(b, v.Str)
	case canonjson.KindArray:
		b.WriteByte('[')
		for i := range v.Members {
			if i > 0 {
				b.WriteByte(',')
			}
			writeReversed(b, v.Elem(i))
		}
		b.WriteByte(']')
	case canonjson.KindObject:
		b.WriteString("{ ")
		for i := len(v.Members) - 1; i >= 0; i-- {
			if i < len(v.Members)-1 {
				b.WriteString(" , ")
			}
			plain.writeString(b, v.Members[i].Key)
			b.WriteString(" : ")
			writeReversed(b, &v.Members[i].Value)
		}
		b.WriteString(" }")
	}
}

func reversed(v *canonjson.Value) []byte {
	var b bytes.Buffer
	writeReversed(&b, v)
	return b.Bytes()
}

func isHex64(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range []byte(s) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// FuzzRecordSHA256: the hash is 64 hex digits, agrees with ClassifyBytes,
// and does not move when the record is written again with every object's
// keys reversed and spaces added.
func FuzzRecordSHA256(f *testing.F) {
	addVectorSeeds(f)
	f.Fuzz(func(t *testing.T, raw []byte) {
		sum, err := flakegate.RecordSHA256(raw)
		if d := flakegate.ClassifyBytes(raw); d.RecordSHA256 != sum {
			t.Fatalf("ClassifyBytes hash %q, RecordSHA256 %q (%v)", d.RecordSHA256, sum, err)
		}
		if err != nil {
			if sum != "" {
				t.Fatalf("hash %q with error %v", sum, err)
			}
			return
		}
		if !isHex64(sum) {
			t.Fatalf("hash %q is not 64 lowercase hex digits", sum)
		}
		v, err := canonjson.Read(raw)
		if err != nil {
			t.Fatalf("RecordSHA256 reads %q, ReadValue refuses it: %v", raw, err)
		}
		rev := reversed(&v)
		sum2, err := flakegate.RecordSHA256(rev)
		if err != nil || sum2 != sum {
			t.Fatalf("keys reversed: hash %q (%v), want %q\n%q\n%q", sum2, err, sum, raw, rev)
		}
	})
}

// FuzzClassify: never a panic, a known label, freeze only with SCHEDULER,
// a reason for INCOMPLETE, a decision that prints as JSON, and the same
// decision for the record with its keys reversed.
func FuzzClassify(f *testing.F) {
	addVectorSeeds(f)
	f.Fuzz(func(t *testing.T, raw []byte) {
		d := flakegate.ClassifyBytes(raw)
		if !d.Label.Known() {
			t.Fatalf("label %q is not one of the seven", d.Label)
		}
		if d.Freeze != (d.Label == flakegate.Scheduler) {
			t.Fatalf("%s with freeze=%v", d.Label, d.Freeze)
		}
		if d.Row < 1 || d.Row > 10 {
			t.Fatalf("row %d is not in the table", d.Row)
		}
		if d.Label == flakegate.Incomplete && d.Reason == "" {
			t.Fatalf("INCOMPLETE without a reason")
		}
		out, err := json.Marshal(d)
		if err != nil || !json.Valid(out) {
			t.Fatalf("decision JSON %q: %v", out, err)
		}
		if d.RecordSHA256 == "" {
			return
		}
		v, err := canonjson.Read(raw)
		if err != nil {
			t.Fatalf("hashed but not readable: %v", err)
		}
		d2 := flakegate.ClassifyBytes(reversed(&v))
		if d2.Label != d.Label || d2.Freeze != d.Freeze || d2.RecordSHA256 != d.RecordSHA256 {
			t.Fatalf("keys reversed: %s %s, want %s %s", d2.Label, d2.RecordSHA256, d.Label, d.RecordSHA256)
		}
	})
}
