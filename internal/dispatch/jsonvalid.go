package dispatch

import (
	"bytes"
	"encoding/binary"
	"unicode/utf8"
)

// maxJSONDepth is encoding/json's nesting limit, kept so that validJSON
// accepts exactly what json.Valid accepts (and is valid UTF-8).
const maxJSONDepth = 10000

// validJSON reports whether p is exactly one JSON value (RFC 8259) in valid
// UTF-8. It accepts what json.Valid(p) && utf8.Valid(p) accepts (FuzzValidJSON
// holds it to that) at a fraction of the cost: every publish pays for this
// check, and encoding/json's byte-at-a-time scanner was the largest item in
// the dispatcher's profile. UTF-8 matters because encoding/json lets invalid
// bytes through inside strings, which upstream's serde-based peers refuse.
func validJSON(p []byte) bool {
	v := jsonValidator{p: p}
	v.space()
	if !v.value(0) {
		return false
	}
	v.space()
	return v.i == len(p)
}

type jsonValidator struct {
	p []byte
	i int
}

func (v *jsonValidator) space() {
	for v.i < len(v.p) {
		switch v.p[v.i] {
		case ' ', '\t', '\n', '\r':
			v.i++
		default:
			return
		}
	}
}

func (v *jsonValidator) value(depth int) bool {
	if v.i >= len(v.p) {
		return false
	}
	switch c := v.p[v.i]; {
	case c == '"':
		return v.str()
	case c == '{':
		return v.object(depth + 1)
	case c == '[':
		return v.array(depth + 1)
	case c == 't':
		return v.literal("true")
	case c == 'f':
		return v.literal("false")
	case c == 'n':
		return v.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		return v.number()
	}
	return false
}

func (v *jsonValidator) object(depth int) bool {
	if depth > maxJSONDepth {
		return false
	}
	v.i++ // {
	v.space()
	if v.i < len(v.p) && v.p[v.i] == '}' {
		v.i++
		return true
	}
	for {
		if v.i >= len(v.p) || v.p[v.i] != '"' || !v.str() {
			return false
		}
		v.space()
		if v.i >= len(v.p) || v.p[v.i] != ':' {
			return false
		}
		v.i++
		v.space()
		if !v.value(depth) {
			return false
		}
		if more, ok := v.separator('}'); !more {
			return ok
		}
	}
}

func (v *jsonValidator) array(depth int) bool {
	if depth > maxJSONDepth {
		return false
	}
	v.i++ // [
	v.space()
	if v.i < len(v.p) && v.p[v.i] == ']' {
		v.i++
		return true
	}
	for {
		if !v.value(depth) {
			return false
		}
		if more, ok := v.separator(']'); !more {
			return ok
		}
	}
}

// separator consumes what follows a member or an element: a comma (more
// follows) or the container's closing byte (ok, no more); anything else is
// invalid.
func (v *jsonValidator) separator(closing byte) (more, ok bool) {
	v.space()
	if v.i >= len(v.p) {
		return false, false
	}
	switch v.p[v.i] {
	case ',':
		v.i++
		v.space()
		return true, true
	case closing:
		v.i++
		return false, true
	}
	return false, false
}

func (v *jsonValidator) literal(word string) bool {
	if len(v.p)-v.i < len(word) || string(v.p[v.i:v.i+len(word)]) != word {
		return false
	}
	v.i += len(word)
	return true
}

// plain marks the bytes a string may contain as they are: printable ASCII
// other than the quote and the backslash.
var plain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// plainWord reports whether all eight bytes of x are plain (see plain): none
// is below 0x20, a quote, a backslash or non-ASCII. It uses the classic
// has-zero-byte test (x - 0x01…) & ^x & 0x80…, which is exact about whether
// some byte matches.
func plainWord(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	hasZero := func(y uint64) uint64 { return (y - ones) & ^y & highs }
	below20 := (x - ones*0x20) & ^x & highs
	quote := hasZero(x ^ (ones * '"'))
	backslash := hasZero(x ^ (ones * '\\'))
	return (below20 | quote | backslash | x&highs) == 0
}

// asciiPrintable reports whether every byte of b is at least 0x20 and
// below 0x80. Per word, (x - 0x20…) | x has a byte's high bit set exactly
// when that byte is non-ASCII or borrowed (was below 0x20); a borrow only
// ever starts at such a byte, so the test is exact. Two words per step
// shorten the dependency chain.
func asciiPrintable(b []byte) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for len(b) >= 16 {
		x, y := binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:])
		if ((x-ones*0x20)|x|(y-ones*0x20)|y)&highs != 0 {
			return false
		}
		b = b[16:]
	}
	if len(b) >= 8 {
		x := binary.LittleEndian.Uint64(b)
		if ((x-ones*0x20)|x)&highs != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c < 0x20 || c >= 0x80 {
			return false
		}
	}
	return true
}

// str consumes a string starting at its opening quote.
func (v *jsonValidator) str() bool {
	v.i++ // "
	p := v.p
	for v.i < len(p) {
		i := v.i
		// Eight bytes at a time while none needs a look, then byte by
		// byte to the one that does. A string whose first two words are
		// plain is likely long and plain, and most of a payload's bytes:
		// then its closing quote is found with the vectorised IndexByte
		// and the span before it checked for a backslash (IndexByte
		// again) and for control or non-ASCII bytes (four instructions a
		// word). Short strings never pay for the two calls.
		for words := 0; i+8 <= len(p) && plainWord(binary.LittleEndian.Uint64(p[i:])); words++ {
			i += 8
			if words == 1 {
				if q := bytes.IndexByte(p[i:], '"'); q >= 0 {
					if body := p[i : i+q]; asciiPrintable(body) && bytes.IndexByte(body, '\\') < 0 {
						v.i = i + q + 1
						return true
					}
				}
			}
		}
		for i < len(p) && plain[p[i]] {
			i++
		}
		v.i = i
		if i == len(p) {
			return false
		}
		c := p[i]
		switch {
		case c == '"':
			v.i++
			return true
		case c == '\\':
			if !v.escape() {
				return false
			}
		case c < 0x20:
			return false
		case c < utf8.RuneSelf:
			v.i++
		default:
			r, size := utf8.DecodeRune(v.p[v.i:])
			if r == utf8.RuneError && size == 1 {
				return false
			}
			v.i += size
		}
	}
	return false
}

func (v *jsonValidator) escape() bool {
	v.i++ // backslash
	if v.i >= len(v.p) {
		return false
	}
	switch v.p[v.i] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		v.i++
		return true
	case 'u':
		if len(v.p)-v.i < 5 {
			return false
		}
		for _, h := range v.p[v.i+1 : v.i+5] {
			if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
				return false
			}
		}
		v.i += 5
		return true
	}
	return false
}

func (v *jsonValidator) number() bool {
	if v.p[v.i] == '-' {
		v.i++
	}
	if v.i >= len(v.p) {
		return false
	}
	switch c := v.p[v.i]; {
	case c == '0':
		v.i++
	case c >= '1' && c <= '9':
		v.digits()
	default:
		return false
	}
	if v.i < len(v.p) && v.p[v.i] == '.' {
		v.i++
		if !v.digits() {
			return false
		}
	}
	if v.i < len(v.p) && (v.p[v.i] == 'e' || v.p[v.i] == 'E') {
		v.i++
		if v.i < len(v.p) && (v.p[v.i] == '+' || v.p[v.i] == '-') {
			v.i++
		}
		if !v.digits() {
			return false
		}
	}
	return true
}

// digits consumes one or more decimal digits.
func (v *jsonValidator) digits() bool {
	start := v.i
	for v.i < len(v.p) && v.p[v.i] >= '0' && v.p[v.i] <= '9' {
		v.i++
	}
	return v.i > start
}
