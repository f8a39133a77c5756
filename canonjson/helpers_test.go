package canonjson

import (
	"crypto/sha256"
	"encoding/json"
)

func sha256Sum(b []byte) [32]byte { return sha256.Sum256(b) }

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
