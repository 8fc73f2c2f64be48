package jsonscan

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// FuzzScanObject: the structural scanner that GuestBytes and PayloadType use
// agrees with encoding/json on every valid input.
func FuzzScanObject(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"a":1}`, `{"a":"\"}","b":[{"c":"]"}],"a":null}`, `[]`, `null`, `"x"`, `{"\u0061":true}`,
		` { "a" : { } , "b" : [ ] } `, `{"a":-1.5e3,"b":false}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		last := map[string][]byte{}
		ok := ScanObject(raw, func(m Member) bool {
			last[m.Key()] = raw[m.ValStart:m.End]
			if !m.Is(m.Key()) {
				t.Fatalf("member %q does not match its own key", m.Key())
			}
			return true
		})
		if !json.Valid(raw) || !utf8.Valid(raw) {
			return
		}
		var obj map[string]json.RawMessage
		isObject := json.Unmarshal(raw, &obj) == nil && obj != nil
		if ok != isObject {
			t.Fatalf("ScanObject(%q) = %v, encoding/json says object=%v", raw, ok, isObject)
		}
		if !ok {
			return
		}
		if len(last) != len(obj) {
			t.Fatalf("ScanObject(%q) saw keys %v, encoding/json %v", raw, last, obj)
		}
		for k, v := range obj {
			if !bytes.Equal(last[k], v) {
				t.Fatalf("ScanObject(%q): member %q = %q, encoding/json %q", raw, k, last[k], v)
			}
		}
	})
}
