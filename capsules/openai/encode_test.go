package openai

import (
	"bytes"
	"testing"

	"github.com/astrid-go/astrid/ipc"
)

// The fast path writes exactly what ipc writes, for every text, and what
// it writes decodes to the event it was given.
func TestEventEncoderMatchesIPC(t *testing.T) {
	for _, id := range []string{"r1", `odd "id" \ with <html> & é`} {
		enc, err := newEventEncoder(id)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range []ipc.StreamEvent{
			{Kind: ipc.StreamTextDelta, Text: " plain text <b>&</b>"},
			{Kind: ipc.StreamTextDelta, Text: ""},
			{Kind: ipc.StreamTextDelta, Text: `a "quoted" \ line` + "\n\t"},
			{Kind: ipc.StreamTextDelta, Text: "café ☕ \u2028"},
			{Kind: ipc.StreamReasoningDelta, Text: "thinking"},
			{Kind: ipc.StreamToolCallDelta, ID: "call_1", ArgsDelta: `{"a":`},
			{Kind: ipc.StreamToolCallStart, ID: "call_1", Name: "read_file"},
			{Kind: ipc.StreamUsage, Usage: ipc.Usage{InputTokens: 1, OutputTokens: 2}},
			{Kind: ipc.StreamDone},
		} {
			got, err := enc.encode(ev)
			if err != nil {
				t.Fatal(err)
			}
			want, err := ipc.LLMStreamEvent{RequestID: id, Event: ev}.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%+v:\n got %s\nwant %s", ev, got, want)
			}
			var back ipc.LLMStreamEvent
			if err := back.UnmarshalJSON(got); err != nil || back.RequestID != id || back.Event != ev {
				t.Errorf("%s decodes to %+v (%v)", got, back, err)
			}
		}
	}
}
