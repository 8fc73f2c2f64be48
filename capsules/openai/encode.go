package openai

import (
	"bytes"

	"github.com/astrid-go/astrid/internal/jsonscan"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// eventEncoder writes one request's llm_stream_event payloads. Text
// deltas are most of a stream, and the general encoder (reflection, an
// encoder per call) was a third of the provider's own cost per token
// (docs/rationale/providers.md); a delta whose text is plain ASCII (no quote, backslash or
// control byte: nothing JSON escapes) is spliced into the request's
// encoded prefix instead, byte for byte what ipc writes. Anything else
// goes through ipc.
type eventEncoder struct {
	requestID string
	// prefix is `{"type":"llm_stream_event","request_id":…,"event":`.
	prefix []byte
}

func newEventEncoder(requestID string) (*eventEncoder, error) {
	done, err := ipc.LLMStreamEvent{RequestID: requestID, Event: ipc.StreamEvent{Kind: ipc.StreamDone}}.MarshalJSON()
	if err != nil {
		return nil, err
	}
	i := bytes.LastIndex(done, []byte(`"event":`))
	return &eventEncoder{requestID: requestID, prefix: done[:i+len(`"event":`)]}, nil
}

func (e *eventEncoder) encode(ev ipc.StreamEvent) ([]byte, error) {
	if (ev.Kind == ipc.StreamTextDelta || ev.Kind == ipc.StreamReasoningDelta) && jsonscan.PlainPrefix(ev.Text) == len(ev.Text) {
		out := make([]byte, 0, len(e.prefix)+len(ev.Kind)+len(ev.Text)+8)
		out = append(out, e.prefix...)
		out = append(out, `{"`...)
		out = append(out, ev.Kind...)
		out = append(out, `":"`...)
		out = append(out, ev.Text...)
		return append(out, `"}}`...), nil
	}
	return sdk.EncodeStreamEvent(e.requestID, ev)
}
