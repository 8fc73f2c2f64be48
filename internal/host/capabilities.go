package host

import (
	"errors"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/caps"
)

// maxGrantRequestID bounds the approval question id a grant names.
const maxGrantRequestID = 128

// MintCapability implements hostapi.Capabilities: a token for the invoking
// principal, signed and kept by the kernel's caps.Book.
func (call *Call) MintCapability(g hostapi.CapabilityGrant) (string, error) {
	defer call.leave(call.enter(opMintCapability))
	const op = "mint_capability"
	book, err := call.capsBook(op)
	if err != nil {
		return "", err
	}
	kind := caps.KindAlways
	if g.Session {
		kind = caps.KindSession
	}
	if len(g.RequestID) > maxGrantRequestID {
		return "", hostapi.Errorf(hostapi.CodeInvalid, op, "request id of %d bytes (at most %d)", len(g.RequestID), maxGrantRequestID)
	}
	t, err := book.Mint(caps.Request{Kind: kind, Principal: call.principal, Capsule: g.Capsule, Tool: g.Tool, Pattern: g.Pattern, TTL: g.TTL, Answer: g.RequestID})
	if errors.Is(err, caps.ErrInvalid) {
		return "", hostapi.Errorf(hostapi.CodeInvalid, op, "%v", err)
	}
	if err != nil {
		return "", hostapi.Errorf(hostapi.CodeUnavailable, op, "%v", err)
	}
	return t.ID, nil
}

// CheckCapability implements hostapi.Capabilities.
func (call *Call) CheckCapability(capsule, tool, resource string) (string, error) {
	defer call.leave(call.enter(opCheckCapability))
	const op = "check_capability"
	book, err := call.capsBook(op)
	if err != nil {
		return "", err
	}
	t, ok, err := book.Check(call.principal, capsule, tool, resource)
	if err != nil {
		return "", hostapi.Errorf(hostapi.CodeUnavailable, op, "%v", err)
	}
	if !ok {
		return "", nil
	}
	return t.ID, nil
}

// capsBook is the kernel's token book, for a capsule that holds
// tool_middleware only: a token lets a tool run without asking, which is
// the plumbing's decision (DESIGN §4c).
func (call *Call) capsBook(op string) (*caps.Book, error) {
	if call.c.deps.Caps == nil {
		return nil, hostapi.Errorf(hostapi.CodeUnavailable, op, "this kernel keeps no capability tokens")
	}
	if call.c.deps.Grants == nil {
		return nil, hostapi.Errorf(hostapi.CodeDenied, op, "this host cannot tell whether %s holds tool_middleware", call.c.id)
	}
	if m, loaded := call.c.deps.Grants(call.c.id); !loaded || !m.ToolMiddleware {
		return nil, hostapi.Errorf(hostapi.CodeDenied, op, "capsule %s does not hold tool_middleware, which capability tokens need", call.c.id)
	}
	return call.c.deps.Caps, nil
}
