// Package canonjson reads JSON strictly and writes it in the canonical form
// of Python's json.dumps(v, sort_keys=True, separators=(",", ":")), whose
// sha256 is a run record's record_sha256.
//
// Read refuses what a record must not hold (bad UTF-8, a byte order mark,
// duplicate keys, NaN, lone surrogates, numbers beyond float64, integers
// Python will not read, nesting past MaxDepth). Append writes the canonical
// bytes and SHA256 hashes them. Strings have two escaping rules, kept apart
// (strings.go): AppendPythonString, the canonical form the hash is over,
// and AppendString, the output form (encoding/json's) of the JSON flakegate
// prints. A Reader reads many values one after
// another with little allocation; Lines runs a handler over the lines of a
// JSON-lines stream on several goroutines and writes the outputs in input
// order; its lines are strings over its read buffers (unsafe.String), so a
// LineFunc must not keep one past its return.
//
// The fast reader is fuzzed against a plain one built on jsontext
// (reference_test.go): the same inputs accepted, the same canonical bytes.
package canonjson
