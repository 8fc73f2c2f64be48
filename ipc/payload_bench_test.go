package ipc

import (
	"encoding/json"
	"strings"
	"testing"
)

// benchPayloads are ~256-byte payloads of the shapes that dominate traffic.
var benchPayloads = map[string]json.RawMessage{
	"typed":    json.RawMessage(`{"type":"tool_execute_request","call_id":"call_0123456789abcdef0123456789abcdef","tool_name":"read_file","arguments":{"path":"` + strings.Repeat("d/", 70) + `x.go","limit":200}}`),
	"custom":   json.RawMessage(`{"type":"custom","data":{"session_id":"s1","messages":[{"role":"user","content":"` + strings.Repeat("w", 160) + `"}]}}`),
	"untagged": json.RawMessage(`{"session_id":"s1","messages":[{"role":"user","content":"` + strings.Repeat("w", 180) + `"}]}`),
}

func BenchmarkGuestBytes(b *testing.B) {
	for name, raw := range benchPayloads {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			for b.Loop() {
				GuestBytes(raw)
			}
		})
	}
}

func BenchmarkPayloadType(b *testing.B) {
	raw := benchPayloads["typed"]
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		PayloadType(raw)
	}
}

func BenchmarkDecodePayload(b *testing.B) {
	for name, raw := range benchPayloads {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			for b.Loop() {
				DecodePayload(raw)
			}
		})
	}
}

func BenchmarkEncodePayload(b *testing.B) {
	p := DecodePayload(benchPayloads["typed"])
	b.ReportAllocs()
	for b.Loop() {
		if _, err := EncodePayload(p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStreamEventDecode is what an orchestrator pays per streamed
// token: one text delta's llm_stream_event decoded.
func BenchmarkStreamEventDecode(b *testing.B) {
	data := []byte(`{"type":"llm_stream_event","request_id":"bench-1","event":{"TextDelta":" tok123"}}`)
	b.ReportAllocs()
	for b.Loop() {
		var ev LLMStreamEvent
		if err := ev.UnmarshalJSON(data); err != nil || ev.Event.Text != " tok123" {
			b.Fatal(err)
		}
	}
}
