package dispatch

import (
	"encoding/json"
	"math/rand/v2"
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

// toolCallPayload is many short strings, as a tool call's JSON is.
var toolCallPayload = []byte(`{"type":"tool_execute_request","call_id":"c-7f3a9b2e41d0","tool_name":"read_file","arguments":{"file_path":"src/main.go","start_line":1,"end_line":40}}`)

func BenchmarkValidJSON(b *testing.B) {
	for _, payload := range []struct {
		name string
		p    []byte
	}{{"long-string", benchPayload}, {"short-strings", toolCallPayload}} {
		for _, impl := range []struct {
			name string
			fn   func([]byte) bool
		}{{"ours", validJSON}, {"encoding-json+utf8", reference}} {
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

// plainWord must agree with the byte table on every word: a false "plain"
// would let a quote, a backslash, a control or a non-ASCII byte through
// unchecked. Every single byte value in every lane, and random words.
func TestPlainWordAgreesWithTheByteTable(t *testing.T) {
	check := func(x uint64) {
		want := true
		for k := 0; k < 8; k++ {
			want = want && plain[byte(x>>(8*k))]
		}
		if got := plainWord(x); got != want {
			t.Fatalf("plainWord(%#016x) = %v, the table says %v", x, got, want)
		}
	}
	const base = 0x6161616161616161 // "aaaaaaaa"
	for lane := 0; lane < 8; lane++ {
		for b := 0; b < 256; b++ {
			check(base&^(0xff<<(8*lane)) | uint64(b)<<(8*lane))
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		check(rng.Uint64())
		// Mostly-plain words, where a mistake would hide.
		x := uint64(0)
		for k := 0; k < 8; k++ {
			x |= uint64(0x20+rng.IntN(0x60)) << (8 * k)
		}
		check(x)
	}
}

// TestASCIIPrintableEveryLane puts each boundary byte at every offset of
// strings long enough for both word loops and the tail, and compares with
// the byte-by-byte rule; then validJSON on the same string quoted.
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
				if got, want := validJSON(quoted), reference(quoted); got != want {
					t.Fatalf("validJSON(%q) = %v, want %v", quoted, got, want)
				}
			}
		}
	}
}
