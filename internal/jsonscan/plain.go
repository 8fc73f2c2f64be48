package jsonscan

// The bytes of a JSON string that stand for themselves, found eight at a
// time: the payload validator and the tool codec spend most of their time
// in strings, and in a Go guest under wazero's termination checks a
// byte-at-a-time loop is also one exit to the host per byte
// (docs/rationale/kernel-bus.md).

import (
	"bytes"
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

// PlainPrefix returns the length of the longest prefix of s whose bytes are
// all plain: the index of the first byte that needs a look (a quote, a
// backslash, a control byte or the start of a multi-byte rune), or len(s).
func PlainPrefix[T string | []byte](s T) int {
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

// PlainLiteral reports whether lit, a string literal already delimited
// (by ScanObject, for instance), has a body that is its value: no escape, no
// control byte, valid UTF-8.
func PlainLiteral(lit []byte) bool {
	if len(lit) < 2 || lit[0] != '"' || lit[len(lit)-1] != '"' {
		return false
	}
	body := lit[1 : len(lit)-1]
	i := PlainPrefix(body)
	if i == len(body) {
		return true
	}
	// Past the plain prefix: no escape or control byte anywhere, and
	// valid UTF-8.
	rest := body[i:]
	return noControl(rest) && bytes.IndexByte(rest, '\\') < 0 && utf8.Valid(rest)
}

// DecodeString decodes lit, a string literal already delimited, when it
// holds only valid UTF-8 and the short escapes (\" \\ \/ \b \f \n \r \t),
// to what encoding/json decodes it to; ok is false for anything else (a \u
// escape, a control byte, bad UTF-8), which encoding/json then decides.
func DecodeString(lit []byte) (s string, ok bool) {
	if len(lit) < 2 || lit[0] != '"' || lit[len(lit)-1] != '"' {
		return "", false
	}
	body := lit[1 : len(lit)-1]
	first := PlainPrefix(body)
	if first == len(body) {
		return string(body), true
	}
	rest := body[first:]
	if !noControl(rest) || !utf8.Valid(rest) {
		return "", false
	}
	if bytes.IndexByte(rest, '\\') < 0 {
		return string(body), true
	}
	out := make([]byte, 0, len(body))
	for i := 0; i < len(body); i++ {
		// Everything up to the next backslash is copied as it is.
		if k := bytes.IndexByte(body[i:], '\\'); k != 0 {
			if k < 0 {
				out = append(out, body[i:]...)
				break
			}
			out = append(out, body[i:i+k]...)
			i += k
		}
		i++ // past the backslash
		if i >= len(body) {
			return "", false
		}
		switch body[i] {
		case '"', '\\', '/':
			out = append(out, body[i])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		default: // \u and anything malformed
			return "", false
		}
	}
	return string(out), true
}
