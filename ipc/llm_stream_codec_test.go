package ipc

import (
	"bytes"
	"testing"
)

// The stream event encoder writes exactly what the generic path writes,
// for every kind it takes and every awkward string, and its output decodes
// back to the event.
func TestStreamEventCodecMatchesGeneric(t *testing.T) {
	for _, s := range codecStrings {
		for _, ev := range []StreamEvent{
			{Kind: StreamDone},
			{Kind: StreamTextDelta, Text: s}, {Kind: StreamReasoningDelta, Text: s}, {Kind: StreamError, Text: s},
			{Kind: StreamToolCallStart, ID: s, Name: s + "n"},
			{Kind: StreamToolCallDelta, ID: s, ArgsDelta: s + `{"a":`},
			{Kind: StreamToolCallEnd, ID: s},
		} {
			p := LLMStreamEvent{RequestID: "r" + s, Event: ev}
			got, err := p.MarshalJSON()
			type wire LLMStreamEvent
			want, werr := marshalTagged(TypeLLMStreamEvent, wire(p))
			if err != nil || werr != nil || !bytes.Equal(got, want) {
				t.Fatalf("%+v: got %s (%v), want %s (%v)", p, got, err, want, werr)
			}
			var back LLMStreamEvent
			if err := back.UnmarshalJSON(got); err != nil || back.Event.Kind != ev.Kind {
				t.Fatalf("decode %s: %+v, %v", got, back, err)
			}
		}
	}
	// Usage takes the generic path.
	if _, ok := appendLLMStreamEvent(nil, LLMStreamEvent{RequestID: "r", Event: StreamEvent{Kind: StreamUsage}}); ok {
		t.Fatal("the fast path wrote a Usage event")
	}
}
