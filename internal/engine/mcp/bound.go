package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/ipc"
)

// A server a frontend's session brought (an editor's mcpServers, ACP)
// serves that session's request scope and nothing else: its tools are
// described to a describe request of that scope only (any other gets an
// empty answer, at once, so no fan-out waits for it), a call from any
// other scope or principal is refused with an error result, and the
// server runs in the scope's workspace for its principal, confined to the
// capsule's grants resolved there. Its tools are all mutable whatever
// their read-only hint says: the hint is the editor's server's word, so
// the approval layer asks for every call unless the operator's rules
// allow it. The kernel unloads the capsule when the scope closes.

// Binding is the one request scope an engine serves (Options.Bound).
type Binding struct {
	// Scope is the request scope's id (host.Scopes).
	Scope uint64
	// Principal and Workspace are the scope's: the server runs there.
	Principal string
	Workspace string
}

// inBinding says whether a call of principal in scope is the bound one's.
func (e *Engine) inBinding(scope uint64, principal string) bool {
	b := e.opts.Bound
	return b == nil || scope == b.Scope && principal == b.Principal
}

// outsideBinding answers an invocation from outside the engine's binding:
// a describe request with no tools, a tool call with an error result.
// done is false for an invocation of the bound scope, which goes on as
// any other.
func (e *Engine) outsideBinding(ctx context.Context, inv hostapi.Invocation) (v hostapi.Verdict, done bool, err error) {
	if e.inBinding(dispatch.ScopeFrom(ctx), inv.Principal) {
		return hostapi.Verdict{}, false, nil
	}
	call, _ := e.host.Begin(ctx, inv.Principal)
	defer call.End()
	switch {
	case inv.Handler == describeHandler:
		if describer(e) != e {
			return hostapi.Verdict{}, false, nil // not ours to answer either way
		}
		payload, err := json.Marshal(ipc.ToolDescribeResponse{Tools: []ipc.ToolDescriptor{}, ScopeBound: true})
		if err == nil {
			err = call.Publish(ipc.ToolDescribeResponseTopic(e.capsuleID), payload)
		}
		if err != nil {
			return hostapi.Verdict{}, true, fmt.Errorf("mcp: describe %s: %w", e.capsuleID, err)
		}
		return hostapi.Verdict{}, true, nil
	case strings.HasPrefix(inv.Handler, toolHandlerPrefix):
		t, ok := e.lookup(inv.Handler)
		if !ok {
			return hostapi.Verdict{}, false, nil
		}
		var req ipc.ToolExecuteRequest
		if err := json.Unmarshal(inv.Payload, &req); err != nil || req.CallID == "" {
			return hostapi.Verdict{}, true, fmt.Errorf("mcp tool %s: dropped a request with nowhere to answer", t.busName)
		}
		e.log.Warn("mcp tool of a session called from outside it: refused", "tool", t.busName, "principal", inv.Principal)
		v, err := e.answer(call, ipc.ToolResultTopic(t.busName), ipc.ToolCallError(req.CallID,
			fmt.Sprintf("tool %s belongs to another session (an editor's MCP server serves only the session that brought it)", t.busName)))
		return v, true, err
	}
	return hostapi.Verdict{}, false, nil
}
