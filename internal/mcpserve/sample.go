//lint:file-ignore SA1019 sampling is deprecated (SEP-2577) but still works; docs/rationale/mcp.md says why a tool may ask it

package mcpserve

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/astrid-go/astrid/ipc"
)

// sample answers a capsule's sample request during a call by asking the
// client that made the call (sampling/createMessage): it is that client's
// model the tool's caller stands behind. Refused, with the reason the
// capsule reads, unless the operator allows the capsule to sample
// (Options.Sampling: config.toml [mcp] sampling) and the client offers
// sampling. docs/rationale/mcp.md.
func (s *Server) sample(ctx context.Context, c *call, capsule string, q ipc.AgentToolSample) ipc.AgentToolSampleReply {
	refuse := func(format string, a ...any) ipc.AgentToolSampleReply {
		why := fmt.Sprintf(format, a...)
		s.log.Info("mcp serve: sample request refused", "tool", c.tool, "capsule", capsule, "why", why)
		return ipc.AgentToolSampleReply{Error: why}
	}
	if s.opts.Sampling == nil || !s.opts.Sampling(capsule) {
		return refuse("sampling refused: config.toml [mcp] sampling does not name capsule %q", capsule)
	}
	if !canSample(c.session) {
		return refuse("sampling refused: the MCP client does not offer sampling")
	}
	params := &mcp.CreateMessageParams{MaxTokens: int64(q.MaxTokens), SystemPrompt: q.SystemPrompt}
	for _, m := range q.Messages {
		params.Messages = append(params.Messages, &mcp.SamplingMessage{Role: mcp.Role(m.Role), Content: &mcp.TextContent{Text: m.Text}})
	}
	var content []mcp.Content
	var model, stop string
	// An older client answers a request of the server's own; a client on
	// protocol 2026-07-28 answers in its retry, as a result with tools.
	switch r := c.ask(ctx, "sample", params).(type) {
	case *mcp.CreateMessageResult:
		content, model, stop = []mcp.Content{r.Content}, r.Model, r.StopReason
	case *mcp.CreateMessageWithToolsResult:
		content, model, stop = r.Content, r.Model, r.StopReason
	default:
		return refuse("the MCP client did not answer the sampling request")
	}
	var text string
	for _, part := range content {
		t, ok := part.(*mcp.TextContent)
		if !ok {
			return refuse("the MCP client's model answered %T, not text", part)
		}
		text += t.Text
	}
	return ipc.AgentToolSampleReply{Text: text, Model: model, StopReason: stop}
}

// canSample reports whether the client declared sampling.
func canSample(ss *mcp.ServerSession) bool {
	p := ss.InitializeParams()
	//lint:ignore SA1019 sampling is deprecated (SEP-2577) but still works; docs/rationale/mcp.md says why a tool may ask it
	return p != nil && p.Capabilities != nil && p.Capabilities.Sampling != nil
}
