package jsonscan

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
		if got, want := Valid([]byte(c)), reference([]byte(c)); got != want {
			t.Errorf("Valid(%.60q) = %v, want %v", c, got, want)
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
		if got, want := Valid(p), reference(p); got != want {
			t.Fatalf("Valid(%q) = %v, json.Valid && utf8.Valid = %v", p, got, want)
		}
	})
}

// longStringPayload is 256 bytes, most of them one plain string, as the
// dispatcher's benchmark (a) publishes.
var longStringPayload = func() []byte {
	prefix := `{"type":"custom","data":"`
	return []byte(prefix + strings.Repeat("x", 256-len(prefix)-2) + `"}`)
}()

// escapedLines is a tool result holding about n bytes of text lines: a
// string with an escape every 37 bytes. Its time per byte must not grow
// with n (it did: every escape rescanned to the closing quote).
func escapedLines(n int) []byte {
	line := `0123456789abcdefghijklmnopqrstuvwxyz\n`
	return []byte(`{"type":"tool_execute_result","call_id":"c1","result":{"call_id":"c1","content":"` + strings.Repeat(line, n/37) + `","is_error":false}}`)
}

// toolCallPayload is many short strings, as a tool call's JSON is.
var toolCallPayload = []byte(`{"type":"tool_execute_request","call_id":"c-7f3a9b2e41d0","tool_name":"read_file","arguments":{"file_path":"src/main.go","start_line":1,"end_line":40}}`)

func BenchmarkValidJSON(b *testing.B) {
	for _, payload := range []struct {
		name string
		p    []byte
	}{{"long-string", longStringPayload}, {"short-strings", toolCallPayload}, {"escaped-lines-4KiB", escapedLines(4 << 10)}, {"escaped-lines-64KiB", escapedLines(64 << 10)}} {
		for _, impl := range []struct {
			name string
			fn   func([]byte) bool
		}{{"ours", Valid}, {"encoding-json+utf8", reference}} {
			b.Run(payload.name+"/"+impl.name, func(b *testing.B) {
				b.SetBytes(int64(len(payload.p)))
				for b.Loop() {
					if !impl.fn(payload.p) {
						b.Fatal("invalid")
					}
				}
			})
		}
	}
}

// TestASCIIPrintableEveryLane puts each boundary byte at every offset of
// strings long enough for both word loops and the tail, and compares with
// the byte-by-byte rule; then Valid on the same string quoted.
func TestASCIIPrintableEveryLane(t *testing.T) {
	for _, c := range []byte{0x00, 0x1f, 0x20, '"', '\\', 0x7e, 0x7f, 0x80, 0xc3, 0xff} {
		for n := 1; n <= 40; n++ {
			for at := 0; at < n; at++ {
				b := []byte(strings.Repeat("a", n))
				b[at] = c
				want := c >= 0x20 && c < 0x80
				if got := asciiPrintable(b); got != want {
					t.Fatalf("asciiPrintable(%q) = %v, want %v", b, got, want)
				}
				quoted := append(append([]byte{'"'}, b...), '"')
				if got, want := Valid(quoted), reference(quoted); got != want {
					t.Fatalf("Valid(%q) = %v, want %v", quoted, got, want)
				}
			}
		}
	}
}
