package kernel

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/ipc"
)

// ClientID is the identity the CLI acts under on the bus: an orchestrator
// that may ask for tools and their descriptions, and nothing else.
const ClientID = "astrid-cli"

var clientACL = dispatch.CapsuleACL{
	ID:        ClientID,
	Publish:   []string{ipc.ToolRequestExecuteTopic, ipc.ToolRequestDescribeTopic, ipc.ToolRequestCancelTopic},
	Subscribe: []string{ipc.ToolExecuteResultTopic, "tool.v1.response.describe.*"},
}

// NewCallID returns a random call id of 128 bits.
func NewCallID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "call_" + hex.EncodeToString(b[:])
}

// ErrNoRouter is returned when no capsule intercepts tool.v1.request.execute.
var ErrNoRouter = errors.New("no capsule routes tool calls (tool.v1.request.execute has no interceptor)")

// CallTool publishes a tool call as an orchestrator would, with a fresh
// call id, and waits for its consolidated result on tool.v1.execute.result.
func (k *Kernel) CallTool(ctx context.Context, principal, name string, args json.RawMessage, timeout time.Duration) (ipc.ToolCallResult, error) {
	return k.CallToolWithID(ctx, principal, NewCallID(), name, args, timeout)
}

// CallToolWithID is CallTool with a caller-chosen call id. On timeout or
// cancellation of ctx it publishes tool.v1.request.cancel for the id.
func (k *Kernel) CallToolWithID(ctx context.Context, principal, callID, name string, args json.RawMessage, timeout time.Duration) (ipc.ToolCallResult, error) {
	c, err := k.NewToolClient(principal)
	if err != nil {
		return ipc.ToolCallResult{}, err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := c.Call(ctx, callID, name, args)
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return res, fmt.Errorf("tool %s: no result within %s (call %s cancelled)", name, timeout, callID)
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
// docs/RATIONALE.md.
type ToolClient struct {
	k      *Kernel
	caller dispatch.Caller // with runner, for the request
	runner *dispatch.Runner
	sub    *bus.Route
}

// NewToolClient subscribes for principal's tool results. Close it when done.
func (k *Kernel) NewToolClient(principal string) (*ToolClient, error) {
	if len(k.Dispatcher.Interceptors(ipc.ToolRequestExecuteTopic)) == 0 {
		return nil, ErrNoRouter
	}
	caller := dispatch.Caller{Capsule: ClientID, Principal: principal}
	sub, err := k.Dispatcher.Subscribe(caller, ipc.ToolExecuteResultTopic, true)
	if err != nil {
		return nil, err
	}
	runner := k.Dispatcher.NewRunner()
	caller.Runner = runner
	return &ToolClient{k: k, caller: caller, runner: runner, sub: sub}, nil
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
		return ipc.ToolCallResult{}, fmt.Errorf("tool arguments are not valid JSON: %s", args)
	}
	req, err := ipc.ToolExecuteRequest{CallID: callID, ToolName: name, Arguments: args}.MarshalJSON()
	if err != nil {
		return ipc.ToolCallResult{}, err
	}
	c.runner.Open()
	_, err = c.k.Dispatcher.Publish(c.caller, ipc.ToolRequestExecuteTopic, req)
	if err != nil {
		c.runner.Close()
		return ipc.ToolCallResult{}, err
	}
	// The handlers run here may outlast ctx; then the cancel goes out from
	// a timer, as it would from the wait below, and the call's own cancel
	// key ends the handler.
	stop := context.AfterFunc(ctx, func() { c.k.cancelCall(c.plainCaller(), callID) })
	c.runner.Run()
	c.runner.Close()
	if !stop() {
		// Interrupted while the handlers ran here; whatever they
		// answered, the caller asked to stop waiting.
		return ipc.ToolCallResult{}, ctx.Err()
	}
	for {
		d, err := c.sub.Recv(ctx)
		if err != nil {
			if ctx.Err() != nil {
				c.k.cancelCall(c.plainCaller(), callID)
				return ipc.ToolCallResult{}, ctx.Err()
			}
			return ipc.ToolCallResult{}, fmt.Errorf("tool %s: %w", name, err)
		}
		var res ipc.ToolExecuteResult
		// The hand-written decoder directly: the bus validated the JSON.
		if res.UnmarshalJSON(ipc.GuestBytes(d.Envelope.Payload)) != nil || res.CallID != callID {
			continue
		}
		if res.Result.CallID == "" {
			res.Result.CallID = callID
		}
		return res.Result, nil
	}
}

// plainCaller is the client's identity without its Runner, for publishes
// made off the client's goroutine or after the call.
func (c *ToolClient) plainCaller() dispatch.Caller {
	return dispatch.Caller{Capsule: c.caller.Capsule, Principal: c.caller.Principal}
}

func (k *Kernel) cancelCall(caller dispatch.Caller, callID string) {
	// A cancel stops work: the CPU budget never refuses it.
	caller.Continues = true
	p, err := ipc.EncodePayload(ipc.ToolCancelRequest{CallIDs: []string{callID}})
	if err == nil {
		_, err = k.Dispatcher.Publish(caller, ipc.ToolRequestCancelTopic, p)
	}
	if err != nil {
		k.log.Warn("cancel not published", "call_id", callID, "err", err)
	}
}

// ToolInfo is one tool as the describe protocol reports it.
type ToolInfo struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
	Mutable     bool            `json:"mutable"`
	Capsule     string          `json:"capsule"`
}

// ListTools runs the describe protocol: it asks every capsule that
// intercepts tool.v1.request.describe and finishes as soon as each has
// answered, or when window passes. Missing answers are reported by id.
func (k *Kernel) ListTools(ctx context.Context, principal string, window time.Duration) ([]ToolInfo, []string, error) {
	caller := dispatch.Caller{Capsule: ClientID, Principal: principal}
	sub, err := k.Dispatcher.Subscribe(caller, "tool.v1.response.describe.*", true)
	if err != nil {
		return nil, nil, err
	}
	defer sub.Close()
	waiting := map[string]bool{}
	for _, id := range k.Dispatcher.Interceptors(ipc.ToolRequestDescribeTopic) {
		waiting[id] = true
	}
	if _, err := k.Dispatcher.Publish(caller, ipc.ToolRequestDescribeTopic, json.RawMessage("{}")); err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, window)
	defer cancel()
	var tools []ToolInfo
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
			k.log.Warn("malformed describe answer", "capsule", src, "err", err)
			continue
		}
		for _, t := range resp.Tools {
			tools = append(tools, ToolInfo{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema, Mutable: t.Mutable, Capsule: src})
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

// clientTarget is the CLI's dispatch target: the client binds no
// interceptors, so it is never invoked; if it were, it would be skipped.
type clientTarget struct{}

func (clientTarget) Intercept(context.Context, dispatch.Invocation) (dispatch.Verdict, error) {
	return dispatch.Verdict{}, dispatch.ErrNotSupported
}
