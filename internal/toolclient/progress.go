package toolclient

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/ipc"
)

// forwardProgress hands c.Progress the progress reports about callID from
// the provider of tool name (the capsule intercepting its execute topic)
// until the returned stop is called; stop first hands over what is
// already queued, so that in one process every report published before
// the result is delivered before Call returns. A refused subscription
// only costs the reports: the call goes on.
func (c *ToolClient) forwardProgress(ctx context.Context, callID, name string) (stop func()) {
	return forwardFromProvider(c, ctx, ipc.AgentToolProgressTopic, callID, name, func(p ipc.AgentToolProgress) (string, string) { return p.CallID, p.Name }, c.Progress)
}

// forwardLogs is forwardProgress for the provider's log messages about
// the call (agent.v1.tool.log), handed to c.Log.
func (c *ToolClient) forwardLogs(ctx context.Context, callID, name string) (stop func()) {
	return forwardFromProvider(c, ctx, ipc.AgentToolLogTopic, callID, name, func(l ipc.AgentToolLog) (string, string) { return l.CallID, l.Name }, c.Log)
}

// forwardFromProvider hands to the events of type T on topic that name
// callID and tool name and come from that tool's provider.
func forwardFromProvider[T any](c *ToolClient, ctx context.Context, topic, callID, name string, names func(T) (callID, tool string), to func(T)) (stop func()) {
	execute := ipc.ToolExecuteTopic(name)
	stop, err := c.follow(ctx, topic, true, func(_ context.Context, d bus.Delivery) {
		var ev T
		if json.Unmarshal(ipc.GuestBytes(d.Envelope.Payload), &ev) != nil {
			return
		}
		if id, tool := names(ev); id != callID || tool != name {
			return
		}
		if !slices.Contains(c.k.Interceptors(execute), d.Envelope.SourceID) {
			return // only the tool's provider speaks of its calls
		}
		to(ev)
	})
	if err != nil {
		c.k.Logger().Warn("tool events not followed", "topic", topic, "tool", name, "call_id", callID, "err", err)
		return func() {}
	}
	return stop
}
