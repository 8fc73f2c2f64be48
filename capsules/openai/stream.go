package openai

import (
	"encoding/json"
	"fmt"
	"strconv"

	oai "github.com/openai/openai-go/v3"

	"github.com/astrid-go/astrid/ipc"
)

// assembler turns Chat Completion chunks into stream events. Tool calls
// arrive as fragments keyed by their index in the choice: the id may come
// on the first fragment only (OpenAI, vLLM), on every one, or the whole
// call in one chunk (Ollama); whatever the server does, each call gets one
// id, the same on its Start, Deltas and End (spec §6.3 defect a).
type assembler struct {
	emit func(ipc.StreamEvent) error
	// calls by index, and the indexes in the order first seen.
	calls map[int64]*toolCall
	order []int64
	// minted counts the ids made up for calls the server sent none for.
	minted int
	// finished is set once a choice carried a finish_reason.
	finished bool
	usage    *ipc.Usage
}

type toolCall struct {
	id, name string
	started  bool
	ended    bool
	// pending holds argument fragments that came before the name.
	pending string
}

func newAssembler(emit func(ipc.StreamEvent) error) *assembler {
	return &assembler{emit: emit, calls: map[int64]*toolCall{}}
}

// chunk handles one chunk of the stream.
func (a *assembler) chunk(ch *oai.ChatCompletionChunk) error {
	if ch.JSON.Usage.Valid() {
		a.usage = &ipc.Usage{InputTokens: nonNegative(ch.Usage.PromptTokens), OutputTokens: nonNegative(ch.Usage.CompletionTokens),
			CachedTokens: nonNegative(ch.Usage.PromptTokensDetails.CachedTokens)}
	}
	for i := range ch.Choices {
		choice := &ch.Choices[i]
		if choice.Index != 0 {
			continue // n is never set: only the first choice is ours
		}
		d := &choice.Delta
		if r := reasoning(d); r != "" {
			if err := a.emit(ipc.StreamEvent{Kind: ipc.StreamReasoningDelta, Text: r}); err != nil {
				return err
			}
		}
		if d.Content != "" {
			if err := a.emit(ipc.StreamEvent{Kind: ipc.StreamTextDelta, Text: d.Content}); err != nil {
				return err
			}
		}
		if d.Refusal != "" {
			if err := a.emit(ipc.StreamEvent{Kind: ipc.StreamTextDelta, Text: d.Refusal}); err != nil {
				return err
			}
		}
		for j := range d.ToolCalls {
			if err := a.toolFragment(&d.ToolCalls[j]); err != nil {
				return err
			}
		}
		if choice.FinishReason != "" {
			a.finished = true
			if err := a.endCalls(); err != nil {
				return err
			}
		}
	}
	return nil
}

// reasoning is a delta's reasoning text, which the servers that stream it
// send outside the OpenAI schema: vLLM and DeepSeek as reasoning_content,
// Ollama and newer vLLM as reasoning.
func reasoning(d *oai.ChatCompletionChunkChoiceDelta) string {
	for _, key := range [...]string{"reasoning_content", "reasoning"} {
		// Fields outside the schema are never Valid to the SDK; their raw
		// JSON is what there is.
		f, ok := d.JSON.ExtraFields[key]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal([]byte(f.Raw()), &s) == nil && s != "" {
			return s
		}
	}
	return ""
}

func (a *assembler) toolFragment(f *oai.ChatCompletionChunkChoiceDeltaToolCall) error {
	c := a.calls[f.Index]
	// A different id at an index already in use is a new call: some
	// servers number every parallel call 0.
	if c != nil && f.ID != "" && c.id != "" && f.ID != c.id && c.started {
		if err := a.endCall(c); err != nil {
			return err
		}
		c = nil
	}
	if c == nil {
		c = &toolCall{}
		a.calls[f.Index] = c
		a.order = append(a.order, f.Index)
	}
	if c.id == "" && f.ID != "" {
		c.id = f.ID
	}
	if !c.started && f.Function.Name != "" {
		c.name = f.Function.Name
		if c.id == "" {
			a.minted++
			c.id = "call_" + strconv.Itoa(a.minted)
		}
		c.started = true
		if err := a.emit(ipc.StreamEvent{Kind: ipc.StreamToolCallStart, ID: c.id, Name: c.name}); err != nil {
			return err
		}
	}
	args := f.Function.Arguments
	if !c.started {
		c.pending += args
		return nil
	}
	if c.pending != "" {
		args, c.pending = c.pending+args, ""
	}
	if args == "" {
		return nil
	}
	return a.emit(ipc.StreamEvent{Kind: ipc.StreamToolCallDelta, ID: c.id, ArgsDelta: args})
}

// endCalls ends every call still open, in the order they began.
func (a *assembler) endCalls() error {
	for _, idx := range a.order {
		if err := a.endCall(a.calls[idx]); err != nil {
			return err
		}
	}
	return nil
}

func (a *assembler) endCall(c *toolCall) error {
	if !c.started || c.ended {
		return nil
	}
	c.ended = true
	return a.emit(ipc.StreamEvent{Kind: ipc.StreamToolCallEnd, ID: c.id})
}

// finish ends a stream the server ended properly: open calls are ended,
// the usage reported, then Done. A call that never got a name cannot be
// run, and says so.
func (a *assembler) finish() error {
	for _, idx := range a.order {
		if c := a.calls[idx]; !c.started {
			return fmt.Errorf("openai: the server sent a tool call (index %d) without a function name", idx)
		}
	}
	if err := a.endCalls(); err != nil {
		return err
	}
	if a.usage != nil {
		if err := a.emit(ipc.StreamEvent{Kind: ipc.StreamUsage, Usage: *a.usage}); err != nil {
			return err
		}
	}
	return a.emit(ipc.StreamEvent{Kind: ipc.StreamDone})
}

func nonNegative(n int64) uint64 {
	if n < 0 {
		return 0
	}
	return uint64(n)
}
