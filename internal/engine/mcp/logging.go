//lint:file-ignore SA1019 logging is deprecated (SEP-2577) but still works; docs/rationale/mcp.md says why a tool's log messages use it

package mcp

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/astrid-go/astrid/ipc"
)

// A server's notifications/message during a tool call becomes an
// agent.v1.tool.log event for the call's principal, naming the call
// (docs/rationale/mcp.md), as its progress does. A log message names no
// call: it counts for the one call in flight on the server's session and
// is dropped when none or several run (the wrong call's frontend must not
// see it). A message the handler takes after its call's answer is
// dropped too. At most maxLogsPerCall messages of a call become events.

// maxLogsPerCall bounds the log events of one call.
const maxLogsPerCall = 100

// askForLogs asks a server that offers logging for its messages from
// level info up (a server need not send any until asked). A refusal only
// costs the messages.
func askForLogs(ctx context.Context, session *mcp.ClientSession, log *slog.Logger) {
	init := session.InitializeResult()
	if init == nil || init.Capabilities == nil || init.Capabilities.Logging == nil {
		return
	}
	if err := session.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		log.Info("mcp: the server refused logging/setLevel; its log messages are not asked for", "err", err)
	}
}

// onLog publishes a server's log message as the call's agent.v1.tool.log
// event.
func (e *Engine) onLog(_ context.Context, req *mcp.LoggingMessageRequest) {
	if req == nil || req.Params == nil {
		return
	}
	pc, err := e.progress.onlyCall(req.Session, true)
	if err != nil {
		e.log.Debug("mcp: log message dropped", "why", err)
		return
	}
	if pc.logs > maxLogsPerCall {
		if pc.logs == maxLogsPerCall+1 {
			e.log.Info("mcp: the server's further log messages about the call are dropped", "tool", pc.tool, "call_id", pc.callID, "limit", maxLogsPerCall)
		}
		return
	}
	ev := ipc.AgentToolLog{CallID: pc.callID, Name: pc.tool, Level: ipc.ToolLogLevel(string(req.Params.Level)),
		Logger: clipRunes(req.Params.Logger, 64), Message: logText(req.Params.Data)}
	payload, err := json.Marshal(ev)
	if err == nil {
		err = pc.call.Publish(ipc.AgentToolLogTopic, payload)
	}
	if err != nil {
		e.log.Warn("mcp: log event not published", "tool", pc.tool, "call_id", pc.callID, "err", err)
	}
}

// logText is a log message's data as text: a string as it is, anything
// else as its JSON, cut at ipc.MaxToolLogMessage bytes.
func logText(data any) string {
	s, ok := data.(string)
	if !ok {
		b, err := json.Marshal(data)
		if err != nil {
			return ""
		}
		s = string(b)
	}
	return clipBytes(s, ipc.MaxToolLogMessage)
}
