package toolclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"time"

	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/request"
	"github.com/astrid-go/astrid/ipc"
)

// ClientID is the identity the CLI acts under on the bus: an orchestrator
// that may ask for tools and their descriptions, and nothing else.
const ClientID = ipc.ToolCallerID

// ACL is the CLI's frontend identity, for kernel.Options.Frontends: the
// kernel registers it at boot and reserves its id against capsules.
func ACL() dispatch.CapsuleACL {
	return dispatch.CapsuleACL{
		ID:        ClientID,
		Publish:   []string{ipc.ToolRequestExecuteTopic, ipc.ToolRequestDescribeTopic, ipc.ToolRequestCancelTopic, ipc.ApprovalResponseTopic("*"), ipc.ElicitResponseTopic("*"), ipc.AgentToolSampleReplyPattern},
		Subscribe: []string{ipc.ToolExecuteResultTopic, "tool.v1.response.describe.*", ipc.ApprovalRequestTopic, ipc.ElicitRequestTopic, ipc.AgentToolProgressTopic, ipc.AgentToolLogTopic, ipc.AgentToolSampleTopic},
	}
}

// Kernel is the kernel as a frontend reaches it: publish and subscribe
// under the frontend identity registered at boot (ACL), and the Runner
// that lets a waiting caller make the calls its publish causes. The
// kernel's *dispatch.Dispatcher is one.
type Kernel interface {
	Publish(from dispatch.Caller, topic string, payload json.RawMessage) (dispatch.Result, error)
	// PublishRequest publishes a request (DESIGN §4b): the kernel answers
	// it on req.ReplyTo when no handler does.
	PublishRequest(from dispatch.Caller, topic string, payload json.RawMessage, req dispatch.Request) (dispatch.Result, error)
	Subscribe(from dispatch.Caller, pattern string, scoped bool) (bus.Subscription, error)
	Interceptors(topic string) []string
	// HoldsToolMiddleware reports whether a capsule is loaded and holds
	// the privileged tool-plumbing grant (DESIGN §4c): only such a capsule,
	// or the kernel itself, may publish a consolidated tool result.
	HoldsToolMiddleware(capsuleID string) bool
	// Logger is where the client reports what it refused or could not do.
	Logger() *slog.Logger
}

// NewCallID returns a random call id of 128 bits.
func NewCallID() string { return request.NewID("call_") }

// ErrNoRouter is returned when no capsule intercepts tool.v1.request.execute.
var ErrNoRouter = errors.New("no capsule routes tool calls (tool.v1.request.execute has no interceptor)")

// CallTool publishes a tool call as an orchestrator would, with a fresh
// call id, and waits for its consolidated result on tool.v1.execute.result.
func CallTool(ctx context.Context, k Kernel, principal, name string, args json.RawMessage, timeout time.Duration) (ipc.ToolCallResult, error) {
	return CallToolWithID(ctx, k, principal, NewCallID(), name, args, timeout)
}

// CallToolWithID is CallTool with a caller-chosen call id. On timeout or
// cancellation of ctx it publishes tool.v1.request.cancel for the id.
func CallToolWithID(ctx context.Context, k Kernel, principal, callID, name string, args json.RawMessage, timeout time.Duration) (ipc.ToolCallResult, error) {
	return callTool(ctx, k, principal, callID, name, args, timeout, nil, nil)
}

// CallToolApproving is CallTool for a frontend that answers approval
// questions about the call (a mutable tool held by an approval layer) with
// approve.
func CallToolApproving(ctx context.Context, k Kernel, principal, name string, args json.RawMessage, timeout time.Duration, approve Approver) (ipc.ToolCallResult, error) {
	return callTool(ctx, k, principal, NewCallID(), name, args, timeout, approve, nil)
}

// CallToolAsking is CallToolApproving for a frontend that also answers the
// elicit questions the call's tool asks (hostapi.Elicit) with elicit.
func CallToolAsking(ctx context.Context, k Kernel, principal, name string, args json.RawMessage, timeout time.Duration, approve Approver, elicit Elicitor) (ipc.ToolCallResult, error) {
	return callTool(ctx, k, principal, NewCallID(), name, args, timeout, approve, elicit)
}

func callTool(ctx context.Context, k Kernel, principal, callID, name string, args json.RawMessage, timeout time.Duration, approve Approver, elicit Elicitor) (ipc.ToolCallResult, error) {
	c, err := New(k, principal)
	if err != nil {
		return ipc.ToolCallResult{}, err
	}
	defer c.Close()
	c.Approve, c.Elicit = approve, elicit
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := c.Call(ctx, callID, name, args)
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return res, fmt.Errorf("tool %s: no result within %s (call %s cancelled): %w", name, timeout, callID, context.DeadlineExceeded)
	case errors.Is(err, context.Canceled):
		return res, fmt.Errorf("tool %s: interrupted (call %s cancelled): %w", name, callID, err)
	}
	return res, err
}

// ToolClient is an orchestrator's side of the tool convention: one
// long-lived subscription to tool.v1.execute.result for one principal, over
// which calls are made one after another (as a react loop does); it is not
// for concurrent use.
//
// While it waits for a result, the client's goroutine makes the interceptor
// calls its request causes (router, tool, router) itself, as a
// dispatch.Runner, instead of waking a worker for each: see
// docs/rationale/kernel-bus.md.
type ToolClient struct {
	k      Kernel
	caller dispatch.Caller // with runner, for the request
	runner *dispatch.Runner
	sub    bus.Subscription
	// Approve, if set before a Call, answers the approval questions asked
	// about that call (an approval capsule holding a mutable tool's call
	// for a person's decision) with one of the ipc.Decision* values. Left
	// nil, nobody answers and the approval layer's timeout decides.
	Approve Approver
	// Elicit, if set before a Call, answers the elicit questions the
	// host asks on behalf of that call's tool. Left nil, nobody answers
	// and the host's elicit window decides.
	Elicit Elicitor
	// Progress, if set before a Call, receives the progress the called
	// tool's provider reports (agent.v1.tool.progress), in order, all of
	// what came before the result before Call returns. It must not block.
	Progress func(ipc.AgentToolProgress)
	// Log, if set before a Call, receives the log messages the called
	// tool's provider emits during it (agent.v1.tool.log), as Progress
	// receives its reports. It must not block.
	Log func(ipc.AgentToolLog)
	// Sample, if set before a Call, answers the sample requests the
	// called tool's provider makes during it (agent.v1.tool.sample):
	// astrid mcp serve asks its client's model. Left nil, nobody answers.
	Sample Sampler
}

// Approver decides an approval question; it may block while a person
// answers, and should return ipc.DecisionDeny when ctx ends first.
type Approver func(ctx context.Context, q ipc.ApprovalRequired) string

// New subscribes for principal's tool results. Close it when done.
func New(k Kernel, principal string) (*ToolClient, error) {
	if len(k.Interceptors(ipc.ToolRequestExecuteTopic)) == 0 {
		return nil, ErrNoRouter
	}
	caller := dispatch.Caller{Capsule: ClientID, Principal: principal}
	sub, err := k.Subscribe(caller, ipc.ToolExecuteResultTopic, true)
	if err != nil {
		return nil, err
	}
	// In-process, the waiting caller runs the calls its publish causes; a
	// remote kernel (the daemon's socket) has no Runner to offer.
	var runner *dispatch.Runner
	if rk, ok := k.(RunnerKernel); ok {
		runner = rk.NewRunner()
		caller.Runner = runner
	}
	return &ToolClient{k: k, caller: caller, runner: runner, sub: sub}, nil
}

// RunnerKernel is a Kernel in this process, whose Runner lets a waiting
// caller make the interceptor calls its publish causes (the kernel's
// Frontend is one).
type RunnerKernel interface {
	Kernel
	NewRunner() *dispatch.Runner
}

// Close ends the subscription.
func (c *ToolClient) Close() { c.sub.Close() }

// Call publishes tool.v1.request.execute for name with callID and waits for
// that call's consolidated result until ctx ends; then it publishes
// tool.v1.request.cancel for the id and returns ctx's error.
func (c *ToolClient) Call(ctx context.Context, callID, name string, args json.RawMessage) (ipc.ToolCallResult, error) {
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	if !json.Valid(args) {
		// Not quoted: arguments can be large, and can hold secrets.
		return ipc.ToolCallResult{}, fmt.Errorf("tool arguments are not valid JSON (%d bytes)", len(args))
	}
	req, err := ipc.ToolExecuteRequest{CallID: callID, ToolName: name, Arguments: args}.MarshalJSON()
	if err != nil {
		return ipc.ToolCallResult{}, err
	}
	if c.Approve != nil {
		stopAnswering, err := c.answerApprovals(ctx, callID)
		if err != nil {
			return ipc.ToolCallResult{}, err
		}
		defer stopAnswering()
	}
	if c.Progress != nil {
		defer c.forwardProgress(ctx, callID, name)()
	}
	if c.Log != nil {
		defer c.forwardLogs(ctx, callID, name)()
	}
	if c.Sample != nil {
		defer c.answerSamples(ctx, callID, name)()
	}
	if c.Elicit != nil {
		stopAnswering, err := c.answerElicits(ctx, callID)
		if err != nil {
			return ipc.ToolCallResult{}, err
		}
		defer stopAnswering()
	}
	// A request correlated by the call id: a call no one takes or answers
	// is answered by the kernel on the result topic (DESIGN §4b).
	send := func() error {
		return request.Send(c.k, c.caller, ipc.ToolRequestExecuteTopic, req, ipc.ToolExecuteResultTopic, callID, dispatch.MaxRequestTimeout)
	}
	if c.runner == nil {
		if err := send(); err != nil {
			return ipc.ToolCallResult{}, err
		}
		return c.await(ctx, callID, name)
	}
	c.runner.Open()
	if err := send(); err != nil {
		c.runner.Close()
		return ipc.ToolCallResult{}, err
	}
	// The handlers run here may outlast ctx; then the cancel goes out from
	// a timer, as it would from the wait below, and the call's own cancel
	// key ends the handler.
	stop := context.AfterFunc(ctx, func() { cancelCall(c.k, c.plainCaller(), callID) })
	c.runner.Run()
	c.runner.Close()
	if !stop() {
		// Interrupted while the handlers ran here; whatever they
		// answered, the caller asked to stop waiting.
		return ipc.ToolCallResult{}, ctx.Err()
	}
	return c.await(ctx, callID, name)
}

// await waits for callID's consolidated result until ctx ends; then it
// publishes the call's cancel and returns ctx's error. The kernel's
// failure of the call reads as the call's error result, as a relayed one
// does (ipc.ToolExecuteResult.UnmarshalJSON), so every caller handles it.
func (c *ToolClient) await(ctx context.Context, callID, name string) (ipc.ToolCallResult, error) {
	res, err := request.Await(ctx, c.sub, callID, func(d bus.Delivery) (ipc.ToolCallResult, bool) {
		var res ipc.ToolExecuteResult
		// The hand-written decoder directly: the bus validated the JSON.
		if res.UnmarshalJSON(ipc.GuestBytes(d.Envelope.Payload)) != nil || res.CallID != callID {
			return ipc.ToolCallResult{}, false
		}
		if !consolidates(c.k, d.Envelope.SourceID) {
			// Anyone with a [publish] grant for the topic could answer
			// every call; only tool plumbing may (DESIGN §4c).
			c.k.Logger().Warn("tool result refused: its source does not hold tool_middleware", "source", d.Envelope.SourceID, "call_id", callID, "tool", name)
			return ipc.ToolCallResult{}, false
		}
		if res.Result.CallID == "" {
			res.Result.CallID = callID
		}
		return res.Result, true
	})
	if f, ok := request.AsFailed(err); ok {
		return ipc.ToolCallResult{CallID: callID, Content: ipc.FailureText(f.RequestFailed, "the tool call"), IsError: true}, nil
	}
	if err != nil {
		if ctx.Err() != nil {
			cancelCall(c.k, c.plainCaller(), callID)
			return ipc.ToolCallResult{}, ctx.Err()
		}
		return ipc.ToolCallResult{}, fmt.Errorf("tool %s: %w", name, err)
	}
	return res, nil
}

// consolidates reports whether source may publish consolidated tool
// results: the kernel itself, or a loaded capsule holding tool_middleware.
func consolidates(k Kernel, source string) bool {
	return source == ipc.KernelSourceID || k.HoldsToolMiddleware(source)
}

// plainCaller is the client's identity without its Runner, for publishes
// made off the client's goroutine or after the call.
func (c *ToolClient) plainCaller() dispatch.Caller {
	return dispatch.Caller{Capsule: c.caller.Capsule, Principal: c.caller.Principal}
}

func cancelCall(k Kernel, caller dispatch.Caller, callID string) {
	// A cancel stops work: the CPU budget never refuses it.
	caller.Continues = true
	p, err := ipc.EncodePayload(ipc.ToolCancelRequest{CallIDs: []string{callID}})
	if err == nil {
		_, err = k.Publish(caller, ipc.ToolRequestCancelTopic, p)
	}
	if err != nil {
		k.Logger().Warn("cancel not published", "call_id", callID, "err", err)
	}
}

// ToolInfo is one tool as the describe protocol reports it.
type ToolInfo struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
	Mutable     bool            `json:"mutable"`
	Capsule     string          `json:"capsule"`
	// Host is the host serving the tool when it is not the kernel's own
	// (a bus spanning hosts, docs/nats.md), else empty.
	Host string `json:"host,omitempty"`
}

// ListTools runs the describe protocol: it asks every capsule that
// intercepts tool.v1.request.describe, on this host or another, and
// finishes as soon as each has answered, or when window passes. Missing
// answers are reported by id. A name is listed once, from the first
// capsule in the order the kernel names them (this host's first), as the
// model is offered it (sdk.DescribeTools).
func ListTools(ctx context.Context, k Kernel, principal string, window time.Duration) ([]ToolInfo, []string, error) {
	caller := dispatch.Caller{Capsule: ClientID, Principal: principal}
	sub, err := k.Subscribe(caller, "tool.v1.response.describe.*", true)
	if err != nil {
		return nil, nil, err
	}
	defer sub.Close()
	waiting := map[string]bool{}
	var order []string
	for _, id := range k.Interceptors(ipc.ToolRequestDescribeTopic) {
		if !waiting[id] {
			waiting[id] = true
			order = append(order, id)
		}
	}
	if _, err := k.Publish(caller, ipc.ToolRequestDescribeTopic, json.RawMessage("{}")); err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, window)
	defer cancel()
	answers := map[string][]ipc.ToolDescriptor{}
	hosts := map[string]string{}
	for len(waiting) > 0 {
		d, err := sub.Recv(ctx)
		if err != nil {
			break
		}
		src := d.Envelope.SourceID
		if !waiting[src] || d.Envelope.Topic != ipc.ToolDescribeResponseTopic(src) {
			continue
		}
		delete(waiting, src)
		var resp ipc.ToolDescribeResponse
		if err := json.Unmarshal(ipc.GuestBytes(d.Envelope.Payload), &resp); err != nil {
			k.Logger().Warn("malformed describe answer", "capsule", src, "err", err)
			continue
		}
		answers[src], hosts[src] = resp.Tools, d.Envelope.Host()
	}
	var tools []ToolInfo
	seen := map[string]bool{}
	for _, id := range order {
		for _, t := range answers[id] {
			if t.Name != "" && seen[t.Name] {
				continue
			}
			seen[t.Name] = true
			tools = append(tools, ToolInfo{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema, Mutable: t.Mutable, Capsule: id, Host: hosts[id]})
		}
	}
	missing := make([]string, 0, len(waiting))
	for id := range waiting {
		missing = append(missing, id)
	}
	sort.Strings(missing)
	sort.Slice(tools, func(i, j int) bool { return tools[i].Name < tools[j].Name })
	return tools, missing, nil
}
