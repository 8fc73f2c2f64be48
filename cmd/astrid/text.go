package main

import (
	"bytes"
	"encoding/json"
	"strings"
)

// oneLine folds s's whitespace into single spaces and cuts it at max runes,
// marking a cut with an ellipsis: a one-line note for a person.
func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= max {
		return s
	}
	return string(r[:max]) + "…"
}

// compactJSON is raw without insignificant whitespace (raw itself when it
// does not parse).
func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}
