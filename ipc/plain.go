package ipc

// The bytes of a JSON string that stand for themselves, found eight at a
// time: the payload validator and the tool codec spend most of their time
// in strings, and in a Go guest under wazero's termination checks a
// byte-at-a-time loop is also one exit to the host per byte
// (docs/RATIONALE.md).

import (
	"encoding/binary"
	"unicode/utf8"
)

// plain marks the bytes a JSON string may contain as they are: printable
// ASCII other than the quote and the backslash.
var plain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// plainWord reports whether all eight bytes of x are plain: none is below
// 0x20, a quote, a backslash or non-ASCII. It uses the classic has-zero-byte
// test (x - 0x01…) & ^x & 0x80…, which is exact about whether some byte
// matches.
func plainWord(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	hasZero := func(y uint64) uint64 { return (y - ones) & ^y & highs }
	below20 := (x - ones*0x20) & ^x & highs
	quote := hasZero(x ^ (ones * '"'))
	backslash := hasZero(x ^ (ones * '\\'))
	return (below20 | quote | backslash | x&highs) == 0
}

// plainPrefix returns the length of the longest prefix of s whose bytes are
// all plain: the index of the first byte that needs a look (a quote, a
// backslash, a control byte or the start of a multi-byte rune), or len(s).
func plainPrefix[T string | []byte](s T) int {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		// Spelled out so that the compiler loads the word at once, for
		// strings as for byte slices.
		x := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		if !plainWord(x) {
			break
		}
	}
	for i < len(s) && plain[s[i]] {
		i++
	}
	return i
}

// noControl reports whether no byte of b is below 0x20: per word,
// (x - 0x20…) & ^x has a byte's high bit set exactly when that byte is
// below 0x20 or the borrow of one that is (the classic has-less test).
func noControl(b []byte) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		if (x-ones*0x20)&^x&highs != 0 {
			return false
		}
	}
	for ; i < len(b); i++ {
		if b[i] < 0x20 {
			return false
		}
	}
	return true
}
