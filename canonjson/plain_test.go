package canonjson

import "testing"

func TestPlain8(t *testing.T) {
	plain := func(c byte) bool { return c >= 0x20 && c < 0x7F && c != '"' && c != '\\' }
	for c := 0; c < 256; c++ {
		for pos := 0; pos < 8; pos++ {
			b := []byte("abcdefgh")
			b[pos] = byte(c)
			if got, want := plain8(string(b)), plain(byte(c)); got != want {
				t.Fatalf("byte %#x at %d: plain8 %v, want %v", c, pos, got, want)
			}
		}
	}
}

func TestNoStop8(t *testing.T) {
	pass := func(c byte) bool { return c >= 0x20 && c != '"' && c != '\\' }
	for c := 0; c < 256; c++ {
		for pos := 0; pos < 8; pos++ {
			b := []byte("abcdefgh")
			b[pos] = byte(c)
			if got, want := noStop8(string(b)), pass(byte(c)); got != want {
				t.Fatalf("byte %#x at %d: noStop8 %v, want %v", c, pos, got, want)
			}
		}
	}
}
