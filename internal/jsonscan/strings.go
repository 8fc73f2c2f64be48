package jsonscan

import "strings"

// DecodeStrings decodes a JSON array of strings in the form encoding/json
// writes one from plain strings: no space anywhere, no escape in any
// string (the kernel's answers to "who intercepts topic T" and "list keys"
// are capsule ids and keys, nearly always plain). It reports false for
// anything else, which the caller then gives to encoding/json. The strings
// share one copy of b.
//
// Why not encoding/json: in a wasm guest its scanner calls a function per
// byte of every string, and each call of a branching function is a trip to
// the host's termination check (docs/rationale/engines.md); a list of two ids cost
// the router ≈ 25 guest calls.
func DecodeStrings(b []byte) ([]string, bool) {
	if len(b) < 2 || b[0] != '[' || b[len(b)-1] != ']' {
		return nil, false
	}
	body := b[1 : len(b)-1]
	if len(body) == 0 {
		return []string{}, true
	}
	// Count first, so that the slice is made once at its size.
	n := 0
	for rest := body; ; {
		_, after, ok := cutPlainLiteral(rest)
		if !ok {
			return nil, false
		}
		n++
		if len(after) == 0 {
			break
		}
		if after[0] != ',' {
			return nil, false
		}
		rest = after[1:]
	}
	// Every literal is now known plain: a quote, bytes that hold no
	// quote, a quote; then a comma or the end.
	all := string(body)
	out := make([]string, 0, n)
	for i := 0; i < len(all); {
		end := i + 1 + strings.IndexByte(all[i+1:], '"')
		out = append(out, all[i+1:end])
		i = end + 2
	}
	return out, true
}

// cutPlainLiteral cuts the string literal at the start of b when its body
// is its value (PlainLiteral), returning the literal with its quotes.
func cutPlainLiteral(b []byte) (lit, rest []byte, ok bool) {
	if len(b) == 0 || b[0] != '"' {
		return nil, b, false
	}
	end, escaped := SkipString(b, 0)
	if end < 0 || escaped || !PlainLiteral(b[:end]) {
		return nil, b, false
	}
	return b[:end], b[end:], true
}
