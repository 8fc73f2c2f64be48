package anthropic

import (
	sdkapi "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/astrid-go/astrid/ipc"
)

// translator turns the Messages API's stream events into the bus's stream
// events, one SDK event at a time, remembering only what the next event
// needs: which content block index is which tool call (so its
// input_json_delta and content_block_stop carry the id content_block_start
// gave), and the usage so far (message_delta's counts are cumulative, and
// may omit the input tokens message_start reported), published once, as
// the request's total, just before Done (ipc.Usage).
type translator struct {
	calls map[int64]*openCall
	// input, output and the cache counts are the usage so far.
	input, output, cacheRead, cacheWrite uint64
	stopped                              bool // message_stop arrived
}

type openCall struct {
	id      string
	hasArgs bool
}

func newTranslator() *translator { return &translator{calls: map[int64]*openCall{}} }

// next appends ev's translation to out and returns it.
func (t *translator) next(ev sdkapi.MessageStreamEventUnion, out []ipc.StreamEvent) []ipc.StreamEvent {
	switch ev.Type {
	case "message_start":
		u := ev.Message.Usage
		t.input, t.cacheRead, t.cacheWrite = nonNegative(u.InputTokens), nonNegative(u.CacheReadInputTokens), nonNegative(u.CacheCreationInputTokens)
		t.output = nonNegative(u.OutputTokens)
	case "content_block_start":
		if ev.ContentBlock.Type == "tool_use" {
			t.calls[ev.Index] = &openCall{id: ev.ContentBlock.ID}
			out = append(out, ipc.StreamEvent{Kind: ipc.StreamToolCallStart, ID: ev.ContentBlock.ID, Name: ev.ContentBlock.Name})
		}
	case "content_block_delta":
		switch ev.Delta.Type {
		case "text_delta":
			if ev.Delta.Text != "" {
				out = append(out, ipc.StreamEvent{Kind: ipc.StreamTextDelta, Text: ev.Delta.Text})
			}
		case "thinking_delta":
			if ev.Delta.Thinking != "" {
				out = append(out, ipc.StreamEvent{Kind: ipc.StreamReasoningDelta, Text: ev.Delta.Thinking})
			}
		case "input_json_delta":
			if c := t.calls[ev.Index]; c != nil && ev.Delta.PartialJSON != "" {
				c.hasArgs = true
				out = append(out, ipc.StreamEvent{Kind: ipc.StreamToolCallDelta, ID: c.id, ArgsDelta: ev.Delta.PartialJSON})
			}
		}
	case "content_block_stop":
		if c := t.calls[ev.Index]; c != nil {
			delete(t.calls, ev.Index)
			if !c.hasArgs {
				// A call without arguments streams no input_json_delta; its
				// input is the empty object, which react must see as JSON.
				out = append(out, ipc.StreamEvent{Kind: ipc.StreamToolCallDelta, ID: c.id, ArgsDelta: "{}"})
			}
			out = append(out, ipc.StreamEvent{Kind: ipc.StreamToolCallEnd, ID: c.id})
		}
	case "message_delta":
		u := ev.Usage
		if u.InputTokens > 0 {
			t.input = uint64(u.InputTokens)
		}
		if u.CacheReadInputTokens > 0 {
			t.cacheRead = uint64(u.CacheReadInputTokens)
		}
		if u.CacheCreationInputTokens > 0 {
			t.cacheWrite = uint64(u.CacheCreationInputTokens)
		}
		t.output = nonNegative(u.OutputTokens)
	case "message_stop":
		t.stopped = true
		// Anthropic's input_tokens leave out the cached ones; the bus's
		// count them (ipc.Usage).
		u := ipc.Usage{InputTokens: t.input, OutputTokens: t.output, CachedTokens: t.cacheRead}
		u.InputTokens = ipc.Usage{InputTokens: u.InputTokens}.Add(ipc.Usage{InputTokens: t.cacheRead}).Add(ipc.Usage{InputTokens: t.cacheWrite}).InputTokens
		out = append(out, ipc.StreamEvent{Kind: ipc.StreamUsage, Usage: u}, ipc.StreamEvent{Kind: ipc.StreamDone})
	}
	// Other events (signature_delta, citations, event types added later,
	// which the API's versioning policy allows) carry nothing for the bus.
	return out
}

func nonNegative(n int64) uint64 {
	if n < 0 {
		return 0
	}
	return uint64(n)
}
