package jsonscan

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
)

func TestDecodeStrings(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string // nil: not recognised
	}{
		{`[]`, []string{}},
		{`["fs"]`, []string{"fs"}},
		{`["fs","router","a.b-c"]`, []string{"fs", "router", "a.b-c"}},
		{`[""]`, []string{""}},
		{`["é","日本"]`, []string{"é", "日本"}},
		{`["a", "b"]`, nil},  // a space
		{` ["a"]`, nil},      // a space
		{`["a\"b"]`, nil},    // an escape
		{`["a\u0041"]`, nil}, // an escape
		{"[\"a\x01\"]", nil}, // a control byte
		{"[\"\xff\"]", nil},  // not UTF-8
		{`[1]`, nil},         // not a string
		{`["a",]`, nil},      // a trailing comma
		{`["a""b"]`, nil},    // no comma
		{`["a"`, nil},        // unterminated
		{`["a]`, nil},        // unterminated string
		{`{"a":"b"}`, nil},   // not an array
		{`[`, nil},
		{``, nil},
	} {
		got, ok := DecodeStrings([]byte(c.in))
		if ok != (c.want != nil) || !slices.Equal(got, c.want) {
			t.Errorf("DecodeStrings(%q) = %q, %v; want %q", c.in, got, ok, c.want)
		}
	}
}

// FuzzDecodeStrings: what DecodeStrings recognises, encoding/json decodes
// to the same strings; what encoding/json writes from plain strings, it
// recognises.
func FuzzDecodeStrings(f *testing.F) {
	f.Add([]byte(`["fs","router"]`))
	f.Add([]byte(`["a\"b",""]`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, ok := DecodeStrings(data)
		if ok {
			var want []string
			if err := json.Unmarshal(data, &want); err != nil || !slices.Equal(got, want) || want == nil {
				t.Fatalf("%q recognised as %q; encoding/json: %q, %v", data, got, want, err)
			}
		}
		// What encoding/json writes from data's strings is recognised
		// whenever it holds no escape.
		var ss []string
		if err := json.Unmarshal(data, &ss); err != nil || ss == nil {
			return // not a list of strings (JSON null decodes to no list: encoding/json writes it back as null)
		}
		out, err := json.Marshal(ss)
		if err != nil {
			t.Fatal(err)
		}
		again, ok := DecodeStrings(out)
		// encoding/json escapes what is not plain (quotes, backslashes,
		// control bytes, <>&, bad UTF-8, U+2028/9).
		plain := !bytes.Contains(out, []byte{'\\'})
		if ok != plain || (ok && !slices.Equal(again, ss)) {
			t.Fatalf("%q (from %q): recognised %v as %q; without escapes: %v", out, data, ok, again, plain)
		}
	})
}

func TestDecodeString(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string
		ok   bool
	}{
		{`"plain"`, "plain", true},
		{`"a\nb\t\"c\"\\\/"`, "a\nb\t\"c\"\\/", true},
		{`"é"`, "é", true},
		{`""`, "", true},
		{`"\u0041"`, "", false},  // \u: encoding/json's to decode
		{`"a`, "", false},        // unterminated
		{"\"a\x01\"", "", false}, // a control byte
		{"\"\xff\"", "", false},  // not UTF-8
		{`"\x"`, "", false},      // not an escape
		{`1`, "", false},
	} {
		got, ok := DecodeString([]byte(c.in))
		if ok != c.ok || got != c.want {
			t.Errorf("DecodeString(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
		if ok {
			var want string
			if err := json.Unmarshal([]byte(c.in), &want); err != nil || want != got {
				t.Errorf("%q: encoding/json decodes %q (%v)", c.in, want, err)
			}
		}
	}
}
