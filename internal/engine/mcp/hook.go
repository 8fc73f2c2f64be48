package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/capsule"
)

// hookAnswer is what astrid_hook_intercept may answer, as JSON text: an
// action ("continue", "final" or "deny"), the payload the next link sees
// (continue) and the reason (deny). Upstream servers answer the replacement
// payload itself, or nothing; both still work (see verdictOf).
type hookAnswer struct {
	Action  string          `json:"action"`
	Payload json.RawMessage `json:"payload,omitempty"`
	Reason  string          `json:"reason,omitempty"`
}

// intercept runs one of the manifest's interceptors by calling the server's
// astrid_hook_intercept tool with {hook, payload}. A server without that
// tool does not handle interceptors (not supported, so the Composite asks
// its next engine). Errors count as Deny in a chain (fail closed).
func (e *Engine) intercept(ctx context.Context, inv hostapi.Invocation) (hostapi.Verdict, error) {
	e.mu.Lock()
	hasHook := e.hasHook
	e.mu.Unlock()
	if !hasHook {
		return hostapi.Verdict{}, capsule.ErrNotSupported
	}
	if !json.Valid(inv.Payload) {
		return hostapi.Verdict{}, fmt.Errorf("mcp hook %s: the payload on %s is not JSON", inv.Handler, inv.Topic)
	}
	call, cctx := e.host.Begin(ctx, inv.Principal)
	defer call.End()
	s, release, err := e.serverFor(cctx, call, inv.Principal)
	if err != nil {
		return hostapi.Verdict{}, fmt.Errorf("mcp hook %s: %w", inv.Handler, err)
	}
	defer release()
	callCtx, cancel := context.WithCancelCause(cctx)
	defer cancel(nil)
	unwatch := context.AfterFunc(s.done, func() { cancel(context.Cause(s.done)) })
	defer unwatch()
	res, err := s.session.CallTool(callCtx, &mcp.CallToolParams{Name: hookTool, Arguments: map[string]any{
		"hook":    inv.Handler,
		"payload": json.RawMessage(inv.Payload),
	}})
	if err != nil {
		if cause := context.Cause(callCtx); cause != nil {
			err = fmt.Errorf("%w (%v)", err, cause)
		}
		return hostapi.Verdict{}, fmt.Errorf("mcp hook %s on %s: %w", inv.Handler, inv.Topic, err)
	}
	if res.IsError {
		return hostapi.Verdict{}, fmt.Errorf("mcp hook %s on %s: the server answered an error: %s", inv.Handler, inv.Topic, resultText(res))
	}
	return verdictOf(resultText(res))
}

// errBadHookAnswer is wrapped when a hook names an action that does not exist.
var errBadHookAnswer = errors.New("unknown hook action")

// verdictOf reads a hook's answer. Nothing (or null) continues unchanged; a
// JSON object with an "action" is a verdict; any other text continues with
// that text as the new payload (upstream's only answer).
func verdictOf(text string) (hostapi.Verdict, error) {
	text = strings.TrimSpace(text)
	if text == "" || text == "null" {
		return hostapi.Verdict{Action: hostapi.Continue}, nil
	}
	var a hookAnswer
	if strings.HasPrefix(text, "{") && json.Unmarshal([]byte(text), &a) == nil && a.Action != "" {
		var payload []byte
		if p := strings.TrimSpace(string(a.Payload)); p != "" && p != "null" {
			payload = a.Payload
		}
		switch a.Action {
		case "continue":
			return hostapi.Verdict{Action: hostapi.Continue, Payload: payload}, nil
		case "final":
			return hostapi.Verdict{Action: hostapi.Final, Payload: payload}, nil
		case "deny":
			reason := a.Reason
			if reason == "" {
				reason = "denied by MCP hook"
			}
			return hostapi.Verdict{Action: hostapi.Deny, Reason: reason}, nil
		}
		return hostapi.Verdict{}, fmt.Errorf("%w %q (want continue, final or deny)", errBadHookAnswer, a.Action)
	}
	return hostapi.Verdict{Action: hostapi.Continue, Payload: []byte(text)}, nil
}
