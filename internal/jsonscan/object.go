package jsonscan

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
)

// Member is one top-level member of a JSON object, located by byte offsets
// in the original text so that callers can slice values out without
// decoding and re-encoding them.
type Member struct {
	QuotedKey  []byte // the key as written, quotes included
	Escaped    bool   // the key holds escapes and must be decoded to compare
	Start, End int    // the member's text, from its key's opening quote to its value's end
	ValStart   int    // the value's text is raw[ValStart:End]
}

// Is reports whether the member's key is name, without allocating for the
// common unescaped key.
func (m Member) Is(name string) bool {
	if !m.Escaped {
		return string(m.QuotedKey[1:len(m.QuotedKey)-1]) == name
	}
	return m.Key() == name
}

// Key is the member's decoded key.
func (m Member) Key() string {
	if !m.Escaped {
		return string(m.QuotedKey[1 : len(m.QuotedKey)-1])
	}
	var s string
	if json.Unmarshal(m.QuotedKey, &s) != nil {
		return ""
	}
	return s
}

// ScanObject calls fn for each top-level member of the JSON object in raw, in
// order, until fn returns false. It reports whether raw looked like one
// object. It is a cheap structural scan (strings, nesting, commas), not a full
// validator: literals and numbers are skipped, not checked. Callers that need
// validity check it separately; the scan itself never panics on any input.
func ScanObject(raw []byte, fn func(m Member) bool) bool {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return false
	}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return skipSpace(raw, i+1) == len(raw)
	}
	stopped := false
	for {
		if i >= len(raw) || raw[i] != '"' {
			return false
		}
		keyEnd, escaped := SkipString(raw, i)
		if keyEnd < 0 {
			return false
		}
		m := Member{Start: i, QuotedKey: raw[i:keyEnd], Escaped: escaped}
		i = skipSpace(raw, keyEnd)
		if i >= len(raw) || raw[i] != ':' {
			return false
		}
		i = skipSpace(raw, i+1)
		m.ValStart = i
		m.End = SkipValue(raw, i)
		if m.End < 0 {
			return false
		}
		if !stopped && !fn(m) {
			stopped = true
		}
		i = skipSpace(raw, m.End)
		if i >= len(raw) {
			return false
		}
		switch raw[i] {
		case ',':
			i = skipSpace(raw, i+1)
		case '}':
			return skipSpace(raw, i+1) == len(raw)
		default:
			return false
		}
	}
}

func skipSpace(raw []byte, i int) int {
	for i < len(raw) {
		switch raw[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// SkipString returns the index just past the string starting at raw[i] (a
// quote) and whether it holds escapes; -1 if it is unterminated.
func SkipString(raw []byte, i int) (int, bool) {
	// Fast path: most strings hold no backslash, and IndexByte is
	// vectorised.
	k := bytes.IndexByte(raw[i+1:], '"')
	if k < 0 {
		return -1, false
	}
	if bytes.IndexByte(raw[i+1:i+1+k], '\\') < 0 {
		return i + 2 + k, false
	}
	// Jump from one quote or backslash to the next: a backslash takes the
	// byte after it with it, the first other quote ends the string.
	for j := i + 1; j < len(raw); j++ {
		k := indexQuoteOrBackslash(raw[j:])
		if k < 0 {
			break
		}
		j += k
		if raw[j] == '"' {
			return j + 1, true
		}
		j++ // the escaped byte
	}
	return -1, true
}

// SkipValue returns the index just past the value starting at raw[i], or -1.
func SkipValue(raw []byte, i int) int {
	if i >= len(raw) {
		return -1
	}
	switch raw[i] {
	case '"':
		end, _ := SkipString(raw, i)
		return end
	case '{', '[':
		depth := 0
		for j := i; j < len(raw); j++ {
			switch raw[j] {
			case '"':
				end, _ := SkipString(raw, j)
				if end < 0 {
					return -1
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	default:
		j := i
		for j < len(raw) {
			switch raw[j] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				if j == i {
					return -1
				}
				return j
			}
			j++
		}
		if j == i {
			return -1
		}
		return j
	}
}

// MissingKey returns the first of keys that the JSON object raw has no
// top-level member for (a Member whose value is null counts as present), or
// "" when none is missing; isObject is false when raw is not an object. It
// scans without decoding: raw is assumed valid (a payload the dispatcher
// admitted, or part of one).
func MissingKey(raw []byte, keys ...string) (missing string, isObject bool) {
	var seen uint64
	if len(keys) > 64 {
		return "", false
	}
	if !ScanObject(raw, func(m Member) bool {
		for i, k := range keys {
			if m.Is(k) {
				seen |= 1 << i
			}
		}
		return true
	}) {
		return "", false
	}
	for i, k := range keys {
		if seen&(1<<i) == 0 {
			return k, true
		}
	}
	return "", true
}

// indexQuoteOrBackslash is the index of the first quote or backslash in b,
// or -1: eight bytes at a time.
func indexQuoteOrBackslash(b []byte) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		q, bs := x^(ones*'"'), x^(ones*'\\')
		if ((q-ones)&^q|(bs-ones)&^bs)&highs != 0 {
			break
		}
	}
	for ; i < len(b); i++ {
		if b[i] == '"' || b[i] == '\\' {
			return i
		}
	}
	return -1
}
