package jsonscan

import (
	"bytes"
	"encoding/binary"
	"unicode/utf8"
)

// maxJSONDepth is encoding/json's nesting limit, kept so that Valid
// accepts exactly what json.Valid accepts (and is valid UTF-8).
const maxJSONDepth = 10000

// Valid reports whether p is exactly one JSON value (RFC 8259) in valid
// UTF-8. It accepts what json.Valid(p) && utf8.Valid(p) accepts (FuzzValidJSON
// holds it to that) at a fraction of the cost: the dispatcher checks every
// payload published with it, and encoding/json's byte-at-a-time scanner was
// the largest item in its profile. UTF-8 matters because encoding/json lets invalid
// bytes through inside strings, which upstream's serde-based peers refuse.
func Valid(p []byte) bool {
	i := jsonValue(p, skipSpace(p, 0), 0)
	return i >= 0 && skipSpace(p, i) == len(p)
}

// The scanner is free functions over (p, i) that return the index after
// what they consumed, or -1 when p is not valid there: the position stays
// in a register instead of a struct field stored and reloaded around every
// call (≈ a fifth of the validation's time when it was a method set).

// jsonValue consumes one value starting at p[i] (not at space).
func jsonValue(p []byte, i, depth int) int {
	if i >= len(p) {
		return -1
	}
	switch c := p[i]; {
	case c == '"':
		return jsonString(p, i)
	case c == '{':
		return jsonObject(p, i, depth+1)
	case c == '[':
		return jsonArray(p, i, depth+1)
	case c == 't':
		return jsonLiteral(p, i, "true")
	case c == 'f':
		return jsonLiteral(p, i, "false")
	case c == 'n':
		return jsonLiteral(p, i, "null")
	case c == '-' || c >= '0' && c <= '9':
		return jsonNumber(p, i)
	}
	return -1
}

func jsonObject(p []byte, i, depth int) int {
	if depth > maxJSONDepth {
		return -1
	}
	i = skipSpace(p, i+1) // past {
	if i < len(p) && p[i] == '}' {
		return i + 1
	}
	for {
		if i >= len(p) || p[i] != '"' {
			return -1
		}
		if i = jsonString(p, i); i < 0 {
			return -1
		}
		i = skipSpace(p, i)
		if i >= len(p) || p[i] != ':' {
			return -1
		}
		if i = jsonValue(p, skipSpace(p, i+1), depth); i < 0 {
			return -1
		}
		var more bool
		if i, more = separator(p, i, '}'); !more {
			return i
		}
	}
}

func jsonArray(p []byte, i, depth int) int {
	if depth > maxJSONDepth {
		return -1
	}
	i = skipSpace(p, i+1) // past [
	if i < len(p) && p[i] == ']' {
		return i + 1
	}
	for {
		if i = jsonValue(p, i, depth); i < 0 {
			return -1
		}
		var more bool
		if i, more = separator(p, i, ']'); !more {
			return i
		}
	}
}

// separator consumes what follows a Member or an element: a comma and the
// space after it (more follows), or the container's closing byte (no more);
// anything else is invalid (-1, no more).
func separator(p []byte, i int, closing byte) (int, bool) {
	i = skipSpace(p, i)
	if i >= len(p) {
		return -1, false
	}
	switch p[i] {
	case ',':
		return skipSpace(p, i+1), true
	case closing:
		return i + 1, false
	}
	return -1, false
}

func jsonLiteral(p []byte, i int, word string) int {
	if len(p)-i < len(word) || string(p[i:i+len(word)]) != word {
		return -1
	}
	return i + len(word)
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

// jsonString consumes a string starting at its opening quote.
//
// It finds the next quote (the closing one, unless escaped) and, before
// it, the next backslash, both with the vectorised IndexByte, and checks
// each stretch between them once (asciiPrintable: four instructions a word;
// utf8.Valid only when there is non-ASCII). Every byte is looked at a
// bounded number of times, whatever the escapes: an earlier version
// checked from each escape to the closing quote, which made a string with
// many escapes (a file's lines) quadratic, 11 ms for 64 KiB.
func jsonString(p []byte, i int) int {
	i++ // "
	// Short strings (keys, tags, ids) end within two words: found there
	// without the calls. Longer ones go on from the plain bytes seen.
	window := min(len(p), i+16)
	for i+8 <= window && plainWord(binary.LittleEndian.Uint64(p[i:])) {
		i += 8
	}
	for i < window && plain[p[i]] {
		i++
	}
	if i < len(p) && p[i] == '"' {
		return i + 1
	}
	for {
		q := bytes.IndexByte(p[i:], '"')
		if q < 0 {
			return -1
		}
		q += i // the closing quote, unless an escape takes it
		for {
			bs := bytes.IndexByte(p[i:q], '\\')
			if bs < 0 {
				if !validStringBytes(p[i:q]) {
					return -1
				}
				return q + 1
			}
			if !validStringBytes(p[i : i+bs]) {
				return -1
			}
			if i = jsonEscape(p, i+bs); i < 0 {
				return -1
			}
			if i > q {
				break // the escape was \" at q: look for the next quote
			}
		}
	}
}

// validStringBytes reports whether b may stand in a string as it is: no
// control byte, valid UTF-8 (it holds no quote or backslash).
func validStringBytes(b []byte) bool {
	if asciiPrintable(b) {
		return true
	}
	for _, c := range b {
		if c < 0x20 {
			return false
		}
	}
	return utf8.Valid(b)
}

// jsonEscape consumes an escape starting at its backslash.
func jsonEscape(p []byte, i int) int {
	i++ // backslash
	if i >= len(p) {
		return -1
	}
	switch p[i] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return i + 1
	case 'u':
		if len(p)-i < 5 {
			return -1
		}
		for _, h := range p[i+1 : i+5] {
			if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
				return -1
			}
		}
		return i + 5
	}
	return -1
}

func jsonNumber(p []byte, i int) int {
	if p[i] == '-' {
		i++
	}
	if i >= len(p) {
		return -1
	}
	switch c := p[i]; {
	case c == '0':
		i++
	case c >= '1' && c <= '9':
		i = digits(p, i)
	default:
		return -1
	}
	if i < len(p) && p[i] == '.' {
		if i = digits(p, i+1); i < 0 {
			return -1
		}
	}
	if i < len(p) && (p[i] == 'e' || p[i] == 'E') {
		i++
		if i < len(p) && (p[i] == '+' || p[i] == '-') {
			i++
		}
		if i = digits(p, i); i < 0 {
			return -1
		}
	}
	return i
}

// digits consumes one or more decimal digits; -1 if there is none.
func digits(p []byte, i int) int {
	start := i
	for i < len(p) && p[i] >= '0' && p[i] <= '9' {
		i++
	}
	if i == start {
		return -1
	}
	return i
}
