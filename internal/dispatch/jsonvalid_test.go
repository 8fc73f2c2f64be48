package dispatch

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

var jsonCases = []string{
	``, ` `, `{}`, `[]`, `""`, `0`, `-0`, `-`, `01`, `1.`, `1.5`, `1e`, `1e+`, `1E-7`, `-1.25e+10`,
	`true`, `false`, `null`, `tru`, `nul`, `True`, `{"a":1}`, `{"a":1,}`, `{"a"}`, `{"a":}`, `{a:1}`,
	`[1,2,]`, `[,]`, `[1 2]`, ` {"a" : [1, {"b": null}] } `, `{} {}`, `{}x`, `"\u00e9"`, `"\u00g9"`,
	`"\ud800"`, `"\x"`, `"\/"`, "\"\t\"", "\"\x7f\"", "\"é\"", "\"\xff\"", "\"\xed\xa0\x80\"", `"abc`,
	"[\"a\"\n,\r\"b\"]", `{"type":"custom","data":{"k":[true,false,null,-1.5e3]}}`,
	strings.Repeat("[", maxJSONDepth) + strings.Repeat("]", maxJSONDepth),
	strings.Repeat("[", maxJSONDepth+1) + strings.Repeat("]", maxJSONDepth+1),
	strings.Repeat(`{"a":`, maxJSONDepth) + "1" + strings.Repeat("}", maxJSONDepth),
	strings.Repeat(`{"a":`, maxJSONDepth+1) + "1" + strings.Repeat("}", maxJSONDepth+1),
}

func reference(p []byte) bool { return json.Valid(p) && utf8.Valid(p) }

func TestValidJSONAgreesWithEncodingJSON(t *testing.T) {
	for _, c := range jsonCases {
		if got, want := validJSON([]byte(c)), reference([]byte(c)); got != want {
			t.Errorf("validJSON(%.60q) = %v, want %v", c, got, want)
		}
	}
}

func FuzzValidJSON(f *testing.F) {
	for _, c := range jsonCases {
		if len(c) < 1000 {
			f.Add([]byte(c))
		}
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		if got, want := validJSON(p), reference(p); got != want {
			t.Fatalf("validJSON(%q) = %v, json.Valid && utf8.Valid = %v", p, got, want)
		}
	})
}

func BenchmarkValidJSON(b *testing.B) {
	for _, impl := range []struct {
		name string
		fn   func([]byte) bool
	}{{"ours", validJSON}, {"encoding-json+utf8", reference}} {
		b.Run(impl.name, func(b *testing.B) {
			b.SetBytes(int64(len(benchPayload)))
			for b.Loop() {
				if !impl.fn(benchPayload) {
					b.Fatal("invalid")
				}
			}
		})
	}
}
