package ipc

// A provider publishes one llm_stream_event per token, so its encoding is
// on the path of every streamed token; like the tool payloads
// (tool_codec.go) it has a hand-written encoder whose output is byte for
// byte the generic one's (TestStreamEventCodecMatchesGeneric holds it to
// that). Usage and unknown kinds take the generic path.

// appendLLMStreamEvent appends p's JSON to dst; ok is false for an event
// the fast path does not write.
func appendLLMStreamEvent(dst []byte, p LLMStreamEvent) (out []byte, ok bool) {
	e := p.Event
	dst = append(dst, `{"type":"llm_stream_event","request_id":`...)
	dst = appendString(dst, p.RequestID)
	dst = append(dst, `,"event":`...)
	switch e.Kind {
	case StreamDone:
		dst = append(dst, `"Done"`...)
		return append(dst, '}'), true
	case StreamTextDelta, StreamReasoningDelta, StreamError:
		dst = append(dst, `{"`...)
		dst = append(dst, e.Kind...)
		dst = append(dst, `":`...)
		dst = appendString(dst, e.Text)
	case StreamToolCallStart:
		dst = append(dst, `{"ToolCallStart":{"id":`...)
		dst = appendString(dst, e.ID)
		dst = append(dst, `,"name":`...)
		dst = appendString(dst, e.Name)
		dst = append(dst, '}')
	case StreamToolCallDelta:
		dst = append(dst, `{"ToolCallDelta":{"id":`...)
		dst = appendString(dst, e.ID)
		dst = append(dst, `,"args_delta":`...)
		dst = appendString(dst, e.ArgsDelta)
		dst = append(dst, '}')
	case StreamToolCallEnd:
		dst = append(dst, `{"ToolCallEnd":{"id":`...)
		dst = appendString(dst, e.ID)
		dst = append(dst, '}')
	default:
		return nil, false
	}
	return append(dst, "}}"...), true
}
