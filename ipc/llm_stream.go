package ipc

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/astrid-go/astrid/internal/jsonscan"
)

// StreamKind names a StreamEvent variant, spelled as on the wire.
type StreamKind string

// The stream event kinds.
const (
	StreamTextDelta      StreamKind = "TextDelta"
	StreamToolCallStart  StreamKind = "ToolCallStart"
	StreamToolCallDelta  StreamKind = "ToolCallDelta"
	StreamToolCallEnd    StreamKind = "ToolCallEnd"
	StreamReasoningDelta StreamKind = "ReasoningDelta"
	StreamUsage          StreamKind = "Usage"
	StreamDone           StreamKind = "Done"
	StreamError          StreamKind = "Error"
)

// StreamEvent is one event of a streamed generation. On the wire it is
// externally tagged: {"TextDelta":"..."}, {"ToolCallStart":{"id","name"}},
// {"ToolCallDelta":{"id","args_delta"}}, {"ToolCallEnd":{"id"}},
// {"ReasoningDelta":"..."}, {"Usage":{...}}, "Done", {"Error":"..."}.
type StreamEvent struct {
	Kind StreamKind
	// Text is the delta of TextDelta and ReasoningDelta, and the message
	// of Error.
	Text string
	// ID is the tool call's id in the ToolCall* events.
	ID string
	// Name is the tool's name in ToolCallStart.
	Name string
	// ArgsDelta is the next piece of the arguments' JSON in ToolCallDelta.
	ArgsDelta string
	// Usage is set in Usage events.
	Usage Usage
}

type toolCallStart struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

type toolCallDelta struct {
	ID        string `json:"id"`
	ArgsDelta string `json:"args_delta"`
}

type toolCallEnd struct {
	ID string `json:"id"`
}

// MarshalJSON writes the externally tagged form.
func (e StreamEvent) MarshalJSON() ([]byte, error) {
	var body any
	switch e.Kind {
	case StreamDone:
		return []byte(`"Done"`), nil
	case StreamTextDelta, StreamReasoningDelta, StreamError:
		body = e.Text
	case StreamToolCallStart:
		body = toolCallStart{e.ID, e.Name}
	case StreamToolCallDelta:
		body = toolCallDelta{e.ID, e.ArgsDelta}
	case StreamToolCallEnd:
		body = toolCallEnd{e.ID}
	case StreamUsage:
		body = e.Usage
	default:
		return nil, fmt.Errorf("stream event: unknown kind %q", e.Kind)
	}
	return marshalPlain(map[StreamKind]any{e.Kind: body})
}

// UnmarshalJSON reads the externally tagged form; a unit variant may also
// arrive as {"Done":null}, which serde accepts too.
func (e *StreamEvent) UnmarshalJSON(data []byte) error {
	// Only a string can be the unit variant: an object is not tried as one
	// (a failed decode allocates its error, on every event of a stream).
	var name string
	if trimmed := bytes.TrimLeft(data, " \t\r\n"); len(trimmed) > 0 && trimmed[0] == '"' && json.Unmarshal(data, &name) == nil {
		if StreamKind(name) != StreamDone {
			return fmt.Errorf("stream event: %q is not a unit variant", name)
		}
		*e = StreamEvent{Kind: StreamDone}
		return nil
	}
	var kind StreamKind
	var body []byte
	members := 0
	if !jsonscan.ScanObject(data, func(m jsonscan.Member) bool {
		members++
		kind, body = StreamKind(m.Key()), data[m.ValStart:m.End]
		return true
	}) || members != 1 {
		return fmt.Errorf("stream event: want a string or an object with one key")
	}
	out := StreamEvent{Kind: kind}
	var err error
	switch kind {
	case StreamDone:
		if string(body) != "null" {
			err = fmt.Errorf("the Done event takes no value")
		}
	case StreamTextDelta, StreamReasoningDelta, StreamError:
		if string(body) == "null" {
			err = fmt.Errorf("%s: want a string", kind)
		} else if text, ok := jsonscan.DecodeString(body); ok {
			out.Text = text // most deltas: no \u escape, so no reflection
		} else {
			err = json.Unmarshal(body, &out.Text)
		}
	case StreamToolCallStart:
		var v toolCallStart
		err = decodeObject(body, &v, "id", "name")
		out.ID, out.Name = v.ID, v.Name
	case StreamToolCallDelta:
		var v toolCallDelta
		err = decodeObject(body, &v, "id", "args_delta")
		out.ID, out.ArgsDelta = v.ID, v.ArgsDelta
	case StreamToolCallEnd:
		var v toolCallEnd
		err = decodeObject(body, &v, "id")
		out.ID = v.ID
	case StreamUsage:
		err = out.Usage.UnmarshalJSON(body)
	default:
		err = fmt.Errorf("unknown kind %q", kind)
	}
	if err != nil {
		return fmt.Errorf("stream event: %w", err)
	}
	*e = out
	return nil
}
