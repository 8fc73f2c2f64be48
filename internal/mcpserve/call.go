package mcpserve

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/astrid-go/astrid/internal/agentclient"
	"github.com/astrid-go/astrid/internal/request"
	"github.com/astrid-go/astrid/internal/toolclient"
	"github.com/astrid-go/astrid/ipc"
)

// forgetAfter is how long a finished call whose result no client came
// back for (after an input-required answer) is kept before it is dropped.
const forgetAfter = time.Minute

// call is one tool call on the bus, made on its own goroutine so that it
// can outlive the MCP request that started it: a client on protocol
// 2026-07-28 answers the call's questions in a retry of the request
// (multi round-trip), not while it waits.
type call struct {
	id      string // the request state a retry names it by
	session *mcp.ServerSession
	tool    string // the bus name
	cancel  context.CancelFunc
	// asks carries the call's questions (approvals, elicit questions) to
	// whichever request waits for it.
	asks chan *ask
	done chan struct{}
	res  ipc.ToolCallResult // set before done closes
	err  error

	mu   sync.Mutex
	open map[string]*ask // questions sent to the client, by input request id
	seq  int
}

// ask is one question of a call for the client.
type ask struct {
	id     string
	params *mcp.ElicitParams
	answer chan *mcp.ElicitResult // buffered: the answer, or nil for none
}

// start makes the call on its own goroutine, bounded by the server's call
// timeout.
func (s *Server) start(ss *mcp.ServerSession, tool string, args json.RawMessage) *call {
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.Timeout)
	c := &call{id: request.NewID("mcp_"), session: ss, tool: tool, cancel: cancel, asks: make(chan *ask), done: make(chan struct{}), open: map[string]*ask{}}
	s.mu.Lock()
	s.calls[c.id] = c
	s.mu.Unlock()
	go func() {
		defer cancel()
		c.res, c.err = s.run(ctx, c, args)
		close(c.done)
		time.AfterFunc(forgetAfter, func() { s.forget(c) })
	}()
	return c
}

func (s *Server) run(ctx context.Context, c *call, args json.RawMessage) (ipc.ToolCallResult, error) {
	tc, err := toolclient.New(s.opts.Kernel, s.opts.Principal)
	if err != nil {
		return ipc.ToolCallResult{}, err
	}
	defer tc.Close()
	tc.Approve = func(ctx context.Context, q ipc.ApprovalRequired) string { return s.approve(ctx, c, q) }
	tc.Elicit = func(ctx context.Context, q ipc.ElicitRequest) ipc.ElicitResponse { return s.elicit(ctx, c, q) }
	return tc.Call(ctx, toolclient.NewCallID(), c.tool, args)
}

func (s *Server) forget(c *call) {
	s.mu.Lock()
	delete(s.calls, c.id)
	s.mu.Unlock()
}

// wait waits, for one MCP request, until the call finishes, asks a
// question or the request is cancelled (notifications/cancelled, or the
// client went away): then the call is cancelled too.
func (s *Server) wait(ctx context.Context, c *call) (*mcp.CallToolResult, error) {
	for {
		select {
		case <-c.done:
			s.forget(c)
			return resultOf(c)
		case a := <-c.asks:
			if multiRoundTrip(c.session) {
				c.mu.Lock()
				c.open[a.id] = a
				c.mu.Unlock()
				return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{a.id: a.params}, RequestState: c.id}, nil
			}
			// An older client answers while the request waits.
			r, err := c.session.Elicit(ctx, a.params)
			if err != nil {
				s.log.Info("mcp serve: elicitation not answered", "tool", c.tool, "err", err)
				r = nil
			}
			a.answer <- r
		case <-ctx.Done():
			c.cancel()
			s.forget(c)
			return nil, ctx.Err()
		}
	}
}

// resume is the retry of a call that asked the client (multi
// round-trip): the answers go to the questions, and the wait goes on.
func (s *Server) resume(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	p := req.Params
	s.mu.Lock()
	c := s.calls[p.RequestState]
	s.mu.Unlock()
	if c == nil || c.session != req.Session {
		return nil, invalidParams("requestState names no call of this session waiting for an answer (it finished, or expired)")
	}
	c.mu.Lock()
	for id, r := range p.InputResponses {
		a := c.open[id]
		if a == nil {
			continue
		}
		delete(c.open, id)
		er, _ := r.(*mcp.ElicitResult)
		a.answer <- er
	}
	c.mu.Unlock()
	return s.wait(ctx, c)
}

// multiRoundTrip reports whether the client speaks protocol 2026-07-28 or
// later, where a server asks in its result rather than by a request of
// its own.
func multiRoundTrip(ss *mcp.ServerSession) bool {
	p := ss.InitializeParams()
	return p != nil && p.ProtocolVersion >= "2026-07-28"
}

// canElicit reports whether the client declared form elicitation.
func canElicit(ss *mcp.ServerSession) bool {
	p := ss.InitializeParams()
	if p == nil || p.Capabilities == nil || p.Capabilities.Elicitation == nil {
		return false
	}
	e := p.Capabilities.Elicitation
	return e.Form != nil || e.URL == nil
}

// ask puts a question to the client and waits for its answer; nil when
// the call ends first.
func (c *call) ask(ctx context.Context, kind string, params *mcp.ElicitParams) *mcp.ElicitResult {
	c.mu.Lock()
	c.seq++
	a := &ask{id: fmt.Sprintf("%s-%d", kind, c.seq), params: params, answer: make(chan *mcp.ElicitResult, 1)}
	c.mu.Unlock()
	select {
	case c.asks <- a:
	case <-ctx.Done():
		return nil
	}
	select {
	case r := <-a.answer:
		return r
	case <-ctx.Done():
		return nil
	}
}

// The answers the approval form offers.
const (
	answerYes    = "yes"
	answerNo     = "no"
	answerAlways = "always"
)

// approve answers an approval question about the call by asking the
// client; a client that cannot elicit is refused, as a headless CLI is.
func (s *Server) approve(ctx context.Context, c *call, q ipc.ApprovalRequired) string {
	what := q.Action
	if q.Resource != "" {
		what += " " + ipc.ApprovalText(q.Resource, 300)
	}
	if !canElicit(c.session) {
		s.log.Info("mcp serve: approval refused: the client cannot be asked (no elicitation)", "tool", c.tool, "action", q.Action)
		return ipc.DecisionDeny
	}
	choices := []string{answerYes, answerNo, answerAlways}
	if q.Unconfined {
		// Asked every time: no standing answer is offered.
		choices = []string{answerYes, answerNo}
	}
	msg := fmt.Sprintf("%s\n  %s\nAllow?", ipc.ApprovalText(q.Reason, 1024), what)
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"decision": map[string]any{
				"type": "string", "title": "Allow?", "enum": choices, "default": answerNo,
				"description": "yes: this once; no: deny; always: from now on, for this principal",
			},
		},
		"required": []string{"decision"},
	}
	r := c.ask(ctx, "approval", &mcp.ElicitParams{Mode: "form", Message: msg, RequestedSchema: schema})
	if r == nil || r.Action != "accept" {
		return ipc.DecisionDeny
	}
	switch d, _ := r.Content["decision"].(string); d {
	case answerYes:
		return ipc.DecisionApprove
	case answerAlways:
		if !q.Unconfined {
			return ipc.DecisionApproveAlways
		}
	}
	return ipc.DecisionDeny
}

// elicit answers a capsule's elicit question by asking the client for
// the value; a secret is never asked for this way (MCP forbids asking for
// sensitive values in a form), and a client that cannot elicit declines.
func (s *Server) elicit(ctx context.Context, c *call, q ipc.ElicitRequest) ipc.ElicitResponse {
	declined := ipc.ElicitResponse{RequestID: q.RequestID}
	f := q.Field
	if !canElicit(c.session) || f.FieldType.Kind == ipc.FieldSecret {
		s.log.Info("mcp serve: elicit question declined", "tool", c.tool, "capsule", q.CapsuleID, "secret", f.FieldType.Kind == ipc.FieldSecret)
		return declined
	}
	prop := map[string]any{"type": "string", "title": ipc.ApprovalText(f.Prompt, 300)}
	if f.Description != nil {
		prop["description"] = ipc.ApprovalText(*f.Description, 1024)
	}
	if f.Default != nil {
		prop["default"] = *f.Default
	}
	switch f.FieldType.Kind {
	case ipc.FieldEnum:
		prop["enum"] = f.FieldType.Options
	case ipc.FieldArray:
		prop["description"] = "comma-separated values"
	}
	msg := fmt.Sprintf("Capsule '%s' asks for %s", q.CapsuleID, ipc.ApprovalText(f.Key, 100))
	schema := map[string]any{"type": "object", "properties": map[string]any{"value": prop}, "required": []string{"value"}}
	r := c.ask(ctx, "elicit", &mcp.ElicitParams{Mode: "form", Message: msg, RequestedSchema: schema})
	if r == nil || r.Action != "accept" {
		return declined
	}
	v, _ := r.Content["value"].(string)
	resp, err := parseAnswer(q.RequestID, f, v)
	if err != nil {
		s.log.Info("mcp serve: elicit answer does not fit; declined", "capsule", q.CapsuleID, "err", err)
		return declined
	}
	return resp
}

// parseAnswer reads a value the client typed as a terminal frontend
// reads a person's line: a select's option, comma-separated values.
var parseAnswer = agentclient.ParseElicitAnswer
