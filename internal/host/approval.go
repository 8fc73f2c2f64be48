package host

import (
	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/host/ask"
)

// RequestApproval implements hostapi.Approval: the question and the
// allowances are internal/host/ask's.
func (call *Call) RequestApproval(action, resource string) (bool, error) {
	defer call.leave(call.enter(opRequestApproval))
	const op = "approval"
	if err := call.live(op); err != nil {
		return false, err
	}
	a := call.c.deps.Approvals
	if a == nil || call.c.deps.Bus == nil {
		return false, hostapi.Errorf(hostapi.CodeUnavailable, op, "this kernel has no frontend to ask")
	}
	return a.Request(call.asker(), call.c.deps.Store, action, resource)
}

// Elicit implements hostapi.Elicit: the question is internal/host/ask's.
func (call *Call) Elicit(q hostapi.ElicitRequest) (hostapi.ElicitAnswer, error) {
	defer call.leave(call.enter(opElicit))
	const op = "elicit"
	if err := call.live(op); err != nil {
		return hostapi.ElicitAnswer{}, err
	}
	e := call.c.deps.Elicits
	if e == nil || call.c.deps.Bus == nil {
		return hostapi.ElicitAnswer{}, hostapi.Errorf(hostapi.CodeUnavailable, op, "this kernel has no frontend to ask")
	}
	return e.Ask(call.asker(), q)
}

// asker is the call as a question to a person is asked for it: its
// capsule and principal, its trace, the tool call it serves (its cancel
// key), its context and how that ended.
func (call *Call) asker() ask.Asker {
	return ask.Asker{
		Bus: call.c.deps.Bus, Dispatcher: call.c.deps.Dispatcher,
		Capsule: call.c.id, Principal: call.principal, Trace: call.caller.Trace, CallID: call.cancelKeyNow(),
		Ctx: call.ctx, Ended: call.live, Uplink: call.c.isUplink, Log: call.c.log,
	}
}
