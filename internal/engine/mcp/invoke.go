package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/capsule"
	"github.com/astrid-go/astrid/internal/host"
	"github.com/astrid-go/astrid/ipc"
)

// Invoke implements capsule.Engine: a tool call, a describe request or one
// of the manifest's interceptors; anything else is not this engine's.
func (e *Engine) Invoke(ctx context.Context, inv hostapi.Invocation) (hostapi.Verdict, error) {
	if e.opts.Bound != nil {
		if v, done, err := e.outsideBinding(ctx, inv); done {
			return v, err
		}
	}
	switch {
	case strings.HasPrefix(inv.Handler, toolHandlerPrefix):
		t, ok := e.lookup(inv.Handler)
		if !ok {
			return hostapi.Verdict{}, capsule.ErrNotSupported
		}
		return e.callTool(ctx, inv, t)
	case inv.Handler == describeHandler:
		if describer(e) != e {
			return hostapi.Verdict{}, capsule.ErrNotSupported
		}
		return e.describe(ctx, inv)
	case servedHandler(inv.Handler):
		return e.invokeServed(ctx, inv)
	case e.hooks[inv.Handler]:
		return e.intercept(ctx, inv)
	}
	return hostapi.Verdict{}, capsule.ErrNotSupported
}

// callTool runs one tool call. Whatever happens, the caller gets exactly
// one result on the tool's result topic: the server's answer, an error
// result saying why there is none, or (when the call is cancelled, times
// out or loses its server) the failure reply.
func (e *Engine) callTool(ctx context.Context, inv hostapi.Invocation, t tool) (hostapi.Verdict, error) {
	var req ipc.ToolExecuteRequest
	if err := json.Unmarshal(inv.Payload, &req); err != nil || req.CallID == "" {
		if err == nil {
			err = errors.New("no call_id")
		}
		return hostapi.Verdict{}, fmt.Errorf("mcp tool %s: dropped a request with nowhere to answer: %w", t.busName, err)
	}
	call, cctx := e.host.Begin(ctx, inv.Principal)
	defer call.End()
	if e.remote != nil {
		defer e.remote.calls.add(call)()
	}
	topic := ipc.ToolResultTopic(t.busName)
	setFailure := func(reason string) {
		if err := call.SetFailureReply(topic, errorResult(req.CallID, reason)); err != nil {
			e.log.Error("failure reply not registered", "tool", t.busName, "call_id", req.CallID, "err", err)
		}
	}
	setFailure(fmt.Sprintf("MCP tool %s did not answer", t.busName))
	if err := call.SetCancelKey(req.CallID); err != nil {
		e.log.Warn("cancel key not registered", "tool", t.busName, "call_id", req.CallID, "err", err)
	}

	// The server of the call's workspace: the load-time one, or one
	// started (or being started) for the request's workspace.
	s, release, err := e.serverFor(cctx, call, inv.Principal)
	if err != nil {
		if reason, interrupted := e.cancelled(ctx, cctx); interrupted {
			err = fmt.Errorf("mcp tool %s: call %s: %s while its server started: %w", t.busName, req.CallID, reason, err)
			setFailure(reason)
			call.Fail(err)
			return hostapi.Verdict{}, err
		}
		return e.answer(call, topic, ipc.ToolCallError(req.CallID, err.Error()))
	}
	defer release()
	params := &mcp.CallToolParams{Name: t.mcpName, Arguments: arguments(req.Arguments)}
	progress := func(s *server, done <-chan struct{}) func() {
		return e.progress.track(params, call, s.session, req.CallID, t.busName, done)
	}
	res, callCtx, err := e.run(cctx, s, params, progress)
	if err != nil && e.remote != nil && expiredDuring(s, callCtx, err) && cctx.Err() == nil {
		// The server forgot the session (404): it never ran the call, so
		// the call goes again on the session the supervisor opens next.
		e.log.Info("mcp: the server expired the session; calling again on a new one", "tool", t.busName, "call_id", req.CallID)
		if ns, werr := e.awaitNewSession(cctx, s); werr == nil {
			s = ns
			res, callCtx, err = e.run(cctx, s, params, progress)
		}
	}
	if err == nil {
		return e.answer(call, topic, e.resultOf(t.busName, req.CallID, res))
	}
	if reason, interrupted := e.interruption(s, ctx, cctx, callCtx, err); interrupted {
		err = fmt.Errorf("mcp tool %s: call %s: %s: %w", t.busName, req.CallID, reason, err)
		setFailure(reason)
		call.Fail(err)
		return hostapi.Verdict{}, err
	}
	// The server answered with a protocol error (unknown tool, invalid
	// arguments): that is an answer, given to the caller as an error result.
	return e.answer(call, topic, ipc.ToolCallError(req.CallID, fmt.Sprintf("MCP tool %s failed: %v", t.busName, err)))
}

// run makes one tool call on s, asking for its progress (progress.go)
// while it runs. The call ends at once when its server dies or the call
// is cancelled, not when the session notices; callCtx is the context it
// ran under. An answered call's context lives on for answerGrace: a remote
// server's stream for the request ends just after the answer, and the SDK
// drains it under that context, so cancelling it at once would throw away
// the HTTP connection of every call (a new one dialed for the next).
func (e *Engine) run(cctx context.Context, s *server, params *mcp.CallToolParams, progress func(*server, <-chan struct{}) func()) (*mcp.CallToolResult, context.Context, error) {
	callCtx, cancel := context.WithCancelCause(context.WithoutCancel(cctx))
	stopOuter := context.AfterFunc(cctx, func() { cancel(context.Cause(cctx)) })
	unwatch := context.AfterFunc(s.done, func() { cancel(context.Cause(s.done)) })
	defer func() {
		stopOuter()
		unwatch()
		time.AfterFunc(answerGrace, func() { cancel(nil) })
	}()
	defer progress(s, callCtx.Done())()
	res, err := s.session.CallTool(callCtx, params)
	return res, callCtx, err
}

// expiredDuring says whether a call failed because its remote server
// forgot the session (404): by the call's own error, or, when the session's
// end reached the call first (it is cancelled as its server stopped), by
// the reason the session ended. s.exitErr is set before s.done is
// cancelled, so it is read only after the cancel was seen.
func expiredDuring(s *server, callCtx context.Context, err error) bool {
	if sessionExpired(err) {
		return true
	}
	return errors.Is(context.Cause(callCtx), errServerExited) && sessionExpired(s.exitErr)
}

// answerGrace is how long an answered call's request may still read what
// its server sends after the answer (normally nothing: the stream's end).
const answerGrace = 5 * time.Second

// interruption says whether a failed call was interrupted rather than
// answered, and why, in words for the caller. The server answered only when
// the error is a JSON-RPC error object; anything else means the connection
// broke, and the server is (or is about to be) gone.
func (e *Engine) interruption(s *server, outer, cctx, callCtx context.Context, err error) (string, bool) {
	if !errors.Is(context.Cause(callCtx), errServerExited) {
		if reason, ok := e.cancelled(outer, cctx); ok {
			return reason, true
		}
		var wire *jsonrpc.Error
		if errors.As(err, &wire) {
			return "", false
		}
		// The session saw the break before the exit was reaped; give the
		// reaper a moment so the reason can say how the server ended.
		if !s.waitExit(exitReportWait) {
			return fmt.Sprintf("lost the connection to MCP server %s during the call (%v); %s", e.srv.ID, err, s.next()), true
		}
	}
	return fmt.Sprintf("MCP server %s stopped during the call (%v); %s", e.srv.ID, s.exitErr, s.next()), true
}

// cancelled says whether the call itself ended (its deadline passed or it
// was cancelled: outer is the invocation's context, cctx the call's), and
// why, in words for the caller.
func (e *Engine) cancelled(outer, cctx context.Context) (string, bool) {
	switch {
	case errors.Is(outer.Err(), context.DeadlineExceeded):
		return fmt.Sprintf("MCP tool call timed out: the call's deadline passed (server %s)", e.srv.ID), true
	case cctx.Err() != nil:
		return fmt.Sprintf("MCP tool call cancelled (%v)", context.Cause(cctx)), true
	}
	return "", false
}

// exitReportWait bounds how long a failed call waits to learn how its
// server exited.
const exitReportWait = 2 * time.Second

// answer publishes the call's result on the tool's result topic. A result
// that cannot be published leaves the failure reply to answer.
func (e *Engine) answer(call *host.Call, topic string, r ipc.ToolCallResult) (hostapi.Verdict, error) {
	payload, err := ipc.ToolExecuteResult{CallID: r.CallID, Result: r}.MarshalJSON()
	if err == nil {
		err = call.Publish(topic, payload)
	}
	if err != nil {
		err = fmt.Errorf("mcp: publish %s: %w", topic, err)
		call.Fail(err)
		return hostapi.Verdict{}, err
	}
	return hostapi.Verdict{}, nil
}

// arguments passes the model's arguments through as raw JSON; absent or
// null arguments become the empty object MCP expects.
func arguments(raw json.RawMessage) any {
	if s := strings.TrimSpace(string(raw)); s == "" || s == "null" {
		return map[string]any{}
	}
	return raw
}

func errorResult(callID, reason string) []byte {
	// A result made of strings and a bool always encodes.
	b, _ := ipc.ToolExecuteResult{CallID: callID, Result: ipc.ToolCallError(callID, reason)}.MarshalJSON()
	return b
}

// describe answers a describe request with the tools of every loaded MCP
// engine of the capsule.
func (e *Engine) describe(ctx context.Context, inv hostapi.Invocation) (hostapi.Verdict, error) {
	call, _ := e.host.Begin(ctx, inv.Principal)
	defer call.End()
	resp := ipc.ToolDescribeResponse{Description: e.description, ScopeBound: e.opts.Bound != nil}
	for _, sib := range loadedSiblings(e) {
		resp.Tools = append(resp.Tools, sib.Tools()...)
	}
	payload, err := json.Marshal(resp)
	if err == nil {
		err = call.Publish(ipc.ToolDescribeResponseTopic(e.capsuleID), payload)
	}
	if err != nil {
		return hostapi.Verdict{}, fmt.Errorf("mcp: describe %s: %w", e.capsuleID, err)
	}
	return hostapi.Verdict{}, nil
}
