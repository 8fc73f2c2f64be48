package toolclient

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/ipc"
)

// Sampler answers a sample request the called tool's provider (capsule)
// makes during the call; it may block while the client's model answers,
// and should answer with an Error when ctx ends first or it refuses. The
// answer's RequestID is filled in by the caller.
type Sampler func(ctx context.Context, capsule string, q ipc.AgentToolSample) ipc.AgentToolSampleReply

// answerSamples answers, with c.Sample, the sample requests about callID
// that the provider of tool name makes, until the returned stop is
// called. A request from any other capsule, or one that does not
// validate, is not answered.
func (c *ToolClient) answerSamples(ctx context.Context, callID, name string) (stop func()) {
	execute := ipc.ToolExecuteTopic(name)
	stop, err := c.follow(ctx, ipc.AgentToolSampleTopic, false, func(ctx context.Context, d bus.Delivery) {
		var q ipc.AgentToolSample
		if json.Unmarshal(ipc.GuestBytes(d.Envelope.Payload), &q) != nil || q.CallID != callID || q.Name != name {
			return
		}
		if !slices.Contains(c.k.Interceptors(execute), d.Envelope.SourceID) {
			c.k.Logger().Warn("sample request ignored: only the tool's provider may make one", "source", d.Envelope.SourceID, "tool", name)
			return
		}
		r := ipc.AgentToolSampleReply{Error: "the sample request is malformed"}
		if err := q.Validate(); err != nil {
			r.Error = err.Error()
		} else {
			r = c.Sample(ctx, d.Envelope.SourceID, q)
		}
		r.RequestID = q.RequestID
		if len(r.Text) > ipc.MaxSampleText {
			r = ipc.AgentToolSampleReply{RequestID: q.RequestID, Error: "the model's answer is larger than a sample's answer may be"}
		}
		p, err := json.Marshal(r)
		if err == nil {
			err = c.publishAnswer(ipc.AgentToolSampleReplyTopic(q.RequestID), p)
		}
		if err != nil {
			c.k.Logger().Warn("sample answer not published", "request_id", q.RequestID, "err", err)
		}
	})
	if err != nil {
		c.k.Logger().Warn("sample requests not followed", "tool", name, "call_id", callID, "err", err)
		return func() {}
	}
	return stop
}
