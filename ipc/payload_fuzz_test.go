package ipc

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// FuzzDecodePayload: decoding never panics and never loses a message; what
// decodes re-encodes stably; handlers get the bytes DecodePayload describes.
func FuzzDecodePayload(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "payloads", "*.json"))
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	for _, s := range []string{
		``, `null`, `[]`, `{}`, `"x"`, `{"type":"custom"}`, `{"type":"custom","data":[1,{"a":"}"}]}`,
		`{"type":"raw_json","type":"raw_json","x":{"type":1}}`, `{"type":"user_input","text":"a","TEXT":"b"}`,
		`{"type":"custom","data":1,"Data":2}`, `{"type":"user\u005finput","text":"\ud800"}`, `{"type":"x"`,
		`{"a":"\"","type":"custom","data":"}"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		orig := bytes.Clone(raw)
		p := DecodePayload(raw)
		if p == nil || p.Type() == TypeUnknown {
			t.Fatalf("DecodePayload(%q) = %#v", raw, p)
		}
		guest := GuestBytes(raw)
		if !bytes.Equal(raw, orig) {
			t.Fatalf("input modified: %q became %q", orig, raw)
		}
		strict, err := ParsePayload(raw)
		if err != nil || strict.Type() == TypeUnknown {
			// The custom fallback holds the original bytes.
			if c, ok := p.(Custom); !ok || !bytes.Equal(c.Data, raw) {
				t.Fatalf("DecodePayload(%q) = %#v, want Custom holding the original", raw, p)
			}
		}
		if !json.Valid(raw) {
			// Dispatch refuses malformed payloads at publish; for them
			// GuestBytes only has to not panic.
			return
		}
		switch v := p.(type) {
		case Custom:
			if !bytes.Equal(guest, v.Data) {
				t.Fatalf("GuestBytes(%q) = %q, DecodePayload's data is %q", raw, guest, v.Data)
			}
		case RawJSON:
			if !bytes.Equal(guest, v.Value) {
				t.Fatalf("GuestBytes(%q) = %q, DecodePayload's value is %q", raw, guest, v.Value)
			}
		default:
			if !bytes.Equal(guest, raw) {
				t.Fatalf("GuestBytes(%q) = %q, want it unchanged for %s", raw, guest, p.Type())
			}
		}
		enc, err := EncodePayload(p)
		if err != nil {
			t.Fatalf("EncodePayload(DecodePayload(%q)) = %v", raw, err)
		}
		if PayloadType(enc) != p.Type() {
			t.Fatalf("encoded %q carries tag %q, want %q", enc, PayloadType(enc), p.Type())
		}
		again, err := EncodePayload(DecodePayload(enc))
		if err != nil || !bytes.Equal(again, enc) {
			t.Fatalf("re-encoding is not stable:\n first %q\nsecond %q (%v)", enc, again, err)
		}
	})
}

// FuzzGuestBytes: skipping the scan when no member can be a custom or
// raw_json tag gives what the scan gives.
func FuzzGuestBytes(f *testing.F) {
	for _, s := range []string{
		`{"type":"tool_execute_result","call_id":"c","result":{"content":"x"}}`,
		`{"type":"custom","data":{"a":1}}`, `{"type":"cust\u006fm","data":2}`,
		`{"type":"raw_json","x":1}`, `{"type":"x","type":"custom","data":3}`,
		`{"data":1,"type":"raw\u005fjson"}`, `{"text":"custom"}`, `[1]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !ValidJSON(raw) {
			return
		}
		if got, want := GuestBytes(raw), guestBytesScan(raw); !bytes.Equal(got, want) {
			t.Fatalf("%q: GuestBytes %q, the scan %q", raw, got, want)
		}
	})
}
