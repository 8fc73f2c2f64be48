package sdktest

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/kernel"
	"github.com/astrid-go/astrid/internal/toolclient"
	"github.com/astrid-go/astrid/ipc"
)

// ApproverID is the frontend identity that hears approval questions and
// answers them (Approvals, Answer), as the CLI does for a person. An
// approval layer under test must count it as an approver (for
// capsules/approval: Config {"approvers": sdktest.ApproverID}).
const ApproverID = "sdktest-approver"

// approverACL lets the test frontend hear the questions and answer them,
// and nothing else.
func approverACL() dispatch.CapsuleACL {
	return dispatch.CapsuleACL{
		ID:        ApproverID,
		Publish:   []string{ipc.ApprovalResponseTopic("*")},
		Subscribe: []string{ipc.ApprovalRequestTopic},
	}
}

// Approvals is the approver frontend's view of one principal's questions.
type Approvals struct {
	k   *Kernel
	sub *bus.Route
}

// Approvals subscribes the approver frontend to principal's questions on
// astrid.v1.approval. The route is closed when the test ends.
func (k *Kernel) Approvals(principal string) *Approvals {
	k.t.Helper()
	sub, err := k.k.Dispatcher.Subscribe(dispatch.Caller{Capsule: ApproverID, Principal: principal}, ipc.ApprovalRequestTopic, true)
	if err != nil {
		k.t.Fatalf("sdktest: subscribe %s: %v", ipc.ApprovalRequestTopic, err)
	}
	k.t.Cleanup(sub.Close)
	return &Approvals{k: k, sub: sub}
}

// Next returns the next question and who asked it, failing the test if
// none comes within k.Timeout or it does not decode.
func (a *Approvals) Next() (q ipc.ApprovalRequired, source string) {
	a.k.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), a.k.Timeout)
	defer cancel()
	d, err := a.sub.Recv(ctx)
	if err != nil {
		a.k.t.Fatalf("sdktest: no approval question: %v", err)
	}
	return decodeQuestion(a.k, d), d.Envelope.SourceID
}

// Pending returns the questions already delivered and not yet taken by
// Next, without waiting.
func (a *Approvals) Pending() []ipc.ApprovalRequired {
	a.k.t.Helper()
	var out []ipc.ApprovalRequired
	for {
		d, ok := a.sub.TryRecv()
		if !ok {
			return out
		}
		out = append(out, decodeQuestion(a.k, d))
	}
}

func decodeQuestion(k *Kernel, d bus.Delivery) ipc.ApprovalRequired {
	k.t.Helper()
	var q ipc.ApprovalRequired
	if err := q.UnmarshalJSON(ipc.GuestBytes(d.Envelope.Payload)); err != nil {
		k.t.Fatalf("sdktest: a question that does not decode: %v", err)
	}
	return q
}

// Answer publishes decision for requestID as the approver frontend, for
// principal, on astrid.v1.approval.response.<requestID>.
func (k *Kernel) Answer(principal, requestID, decision string) {
	k.t.Helper()
	p, err := ipc.ApprovalResponse{RequestID: requestID, Decision: decision}.MarshalJSON()
	if err == nil {
		_, err = k.k.Frontend().Publish(dispatch.Caller{Capsule: ApproverID, Principal: principal}, ipc.ApprovalResponseTopic(requestID), p)
	}
	if err != nil {
		k.t.Fatalf("sdktest: answer %s: %v", requestID, err)
	}
}

// PendingCall is a tool call made in the background (StartTool), whose
// result is waited for with Wait.
type PendingCall struct {
	k      *Kernel
	name   string
	cancel context.CancelFunc
	done   chan struct{}
	res    ipc.ToolCallResult
	err    error
}

// StartTool calls a tool for principal in the background, with callID (a
// fresh one if empty), so that the test can answer the questions the call
// causes meanwhile. args is marshalled as CallTool's.
func (k *Kernel) StartTool(principal, callID, name string, args any) *PendingCall {
	k.t.Helper()
	raw, err := rawJSON(args)
	if err != nil {
		k.t.Fatalf("sdktest: arguments: %v", err)
	}
	if callID == "" {
		callID = toolclient.NewCallID()
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &PendingCall{k: k, name: name, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		defer cancel()
		p.res, p.err = toolclient.CallToolWithID(ctx, k.k.Frontend(), principal, callID, name, raw, k.Timeout)
	}()
	// A test that ends without waiting still waits here, so no call
	// outlives its kernel.
	k.t.Cleanup(func() { <-p.done })
	return p
}

// Wait returns the call's result, failing the test if it has none within
// the kernel's Timeout.
func (p *PendingCall) Wait() ipc.ToolCallResult {
	p.k.t.Helper()
	<-p.done
	if p.err != nil {
		p.k.t.Fatalf("sdktest: call %s: %v", p.name, p.err)
	}
	return p.res
}

// PublishToolRequest publishes a tool_execute_request for principal as the
// tool client does, without waiting for its result: for a test that needs
// the request queued before what it publishes next.
func (k *Kernel) PublishToolRequest(principal, callID, name string, args any) {
	k.t.Helper()
	raw, err := rawJSON(args)
	var req []byte
	if err == nil {
		req, err = ipc.ToolExecuteRequest{CallID: callID, ToolName: name, Arguments: raw}.MarshalJSON()
	}
	if err == nil {
		_, err = k.k.Frontend().Publish(dispatch.Caller{Capsule: toolclient.ClientID, Principal: principal}, ipc.ToolRequestExecuteTopic, req)
	}
	if err != nil {
		k.t.Fatalf("sdktest: publish a request for %s: %v", name, err)
	}
}

// Done is closed when the call has its result (or failed).
func (p *PendingCall) Done() <-chan struct{} { return p.done }

// Cancel stops waiting for the call, as an interrupted frontend does: the
// tool client publishes tool.v1.request.cancel for its call id. It returns
// once the client has.
func (p *PendingCall) Cancel() {
	p.cancel()
	<-p.done
}

// WatchdogTick publishes astrid.v1.watchdog.tick for principal as the
// kernel's watchdog does every watchdog_interval, so a test need not wait
// for the next one.
func (k *Kernel) WatchdogTick(principal string) {
	k.t.Helper()
	if _, err := k.k.Dispatcher.Publish(dispatch.Caller{Principal: principal}, ipc.WatchdogTickTopic, []byte(`{}`), dispatch.KernelTick); err != nil {
		k.t.Fatalf("sdktest: watchdog tick: %v", err)
	}
}

// Restart closes k and boots a new kernel on the same $ASTRID_HOME and
// workspace with capsules (their Config and KV seeds are stored again), as
// an operator restarting astrid would: durable state survives, volatile
// state and everything in flight does not.
func (k *Kernel) Restart(capsules ...Capsule) *Kernel {
	k.t.Helper()
	k.k.Close()
	return bootNet(k.t, k.cfg, k.egress, k.home, k.Workspace, capsules)
}

// Load loads one more capsule into the running kernel, natively, and
// returns the loader's error (a manifest the kernel refuses, say). The
// running kernel holds the state store, so c may carry no Config or KV.
func (k *Kernel) Load(c Capsule) error {
	if len(c.Config) > 0 || len(c.KV) > 0 {
		return fmt.Errorf("sdktest: Load takes no Config or KV: the running kernel holds the store (give them to New)")
	}
	return k.k.LoadNative(context.Background(), kernel.Builtin{Manifest: c.Manifest, New: c.New})
}

// Unload unloads capsule id from the running kernel for good, as the
// daemon does for a capsule removed from $ASTRID_HOME/capsules.
func (k *Kernel) Unload(id string) error {
	return k.k.Unload(context.Background(), id)
}

// rawJSON is args as JSON: a json.RawMessage or string as is, anything
// else marshalled.
func rawJSON(args any) (json.RawMessage, error) {
	switch a := args.(type) {
	case json.RawMessage:
		return a, nil
	case string:
		return json.RawMessage(a), nil
	}
	return json.Marshal(args)
}
