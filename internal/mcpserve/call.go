package mcpserve

import (
	"cmp"
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
	// notes carry the tool's progress reports and log messages, in
	// order, to whichever request waits for the call (dropped when it is
	// full: they only inform).
	notes chan note
	done  chan struct{}
	res   ipc.ToolCallResult // set before done closes
	err   error

	mu   sync.Mutex
	open map[string]*ask // questions sent to the client, by input request id
	seq  int
}

// ask is one question of a call for the client: an elicitation, or a
// sampling request.
type ask struct {
	id     string
	params mcp.InputRequest // *mcp.ElicitParams or *mcp.CreateMessageParams
	answer chan any         // buffered: the client's result, or nil for none
}

// note is a progress report or a log message of a call.
type note struct {
	progress *ipc.AgentToolProgress
	log      *ipc.AgentToolLog
}

// start makes the call on its own goroutine, bounded by the server's call
// timeout.
func (s *Server) start(ss *mcp.ServerSession, tool string, args json.RawMessage) *call {
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.Timeout)
	c := &call{id: request.NewID("mcp_"), session: ss, tool: tool, cancel: cancel, asks: make(chan *ask), done: make(chan struct{}), open: map[string]*ask{},
		notes: make(chan note, notesBuffer)}
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
	tc.Progress = func(p ipc.AgentToolProgress) { c.note(note{progress: &p}) }
	tc.Log = func(l ipc.AgentToolLog) { c.note(note{log: &l}) }
	tc.Sample = func(ctx context.Context, capsule string, q ipc.AgentToolSample) ipc.AgentToolSampleReply {
		return s.sample(ctx, c, capsule, q)
	}
	return tc.Call(ctx, toolclient.NewCallID(), c.tool, args)
}

func (s *Server) forget(c *call) {
	s.mu.Lock()
	delete(s.calls, c.id)
	s.mu.Unlock()
}

// notesBuffer bounds the progress reports and log messages a call holds
// for its request.
const notesBuffer = 64

// note queues n for the request waiting for the call, or drops it.
func (c *call) note(n note) {
	select {
	case c.notes <- n:
	default:
	}
}

// wait waits, for one MCP request, until the call finishes, asks a
// question or the request is cancelled (notifications/cancelled, or the
// client went away): then the call is cancelled too. The tool's progress
// goes to the client as notifications/progress when the request asked for
// it (a progress token), its log messages as notifications/message at the
// level the client set (logging/setLevel; none before it sets one), every
// one before the result.
func (s *Server) wait(ctx context.Context, c *call, token any) (*mcp.CallToolResult, error) {
	notify := func(n note) {
		var err error
		switch {
		case n.progress != nil && token != nil:
			p := n.progress
			err = c.session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: p.Progress, Total: p.Total, Message: p.Message})
		case n.log != nil:
			l := n.log
			//lint:ignore SA1019 logging is deprecated (SEP-2577) but still works; docs/rationale/mcp.md says why a tool's log messages use it
			err = c.session.Log(ctx, &mcp.LoggingMessageParams{Level: mcp.LoggingLevel(ipc.ToolLogLevel(l.Level)), Logger: cmp.Or(l.Logger, MCPName(c.tool)), Data: l.Message})
		}
		if err != nil {
			s.log.Debug("mcp serve: notification not sent", "tool", c.tool, "err", err)
		}
	}
	for {
		select {
		case n := <-c.notes:
			notify(n)
		case <-c.done:
			for len(c.notes) > 0 {
				notify(<-c.notes)
			}
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
			a.answer <- s.askNow(ctx, c, a.params)
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
		a.answer <- r
	}
	c.mu.Unlock()
	return s.wait(ctx, c, p.GetProgressToken())
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

// askNow asks an older client (one that answers while the request
// waits) by a request of the server's own; nil when it does not answer.
func (s *Server) askNow(ctx context.Context, c *call, params mcp.InputRequest) any {
	var r any
	var err error
	switch p := params.(type) {
	case *mcp.ElicitParams:
		r, err = c.session.Elicit(ctx, p)
	//lint:ignore SA1019 sampling is deprecated (SEP-2577) but still works; docs/rationale/mcp.md says why a tool may ask it
	case *mcp.CreateMessageParams:
		//lint:ignore SA1019 sampling is deprecated (SEP-2577) but still works; docs/rationale/mcp.md says why a tool may ask it
		r, err = c.session.CreateMessage(ctx, p)
	}
	if err != nil {
		s.log.Info("mcp serve: the client did not answer", "tool", c.tool, "err", err)
		return nil
	}
	return r
}

// ask puts a question to the client and waits for its answer; nil when
// the call ends first.
func (c *call) ask(ctx context.Context, kind string, params mcp.InputRequest) any {
	c.mu.Lock()
	c.seq++
	a := &ask{id: fmt.Sprintf("%s-%d", kind, c.seq), params: params, answer: make(chan any, 1)}
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
	r, _ := c.ask(ctx, "approval", &mcp.ElicitParams{Mode: "form", Message: msg, RequestedSchema: schema}).(*mcp.ElicitResult)
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
	if q.Form != nil && canElicit(c.session) {
		return s.elicitForm(ctx, c, q)
	}
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
	r, _ := c.ask(ctx, "elicit", &mcp.ElicitParams{Mode: "form", Message: msg, RequestedSchema: schema}).(*mcp.ElicitResult)
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

// elicitForm asks the client a capsule's form question as one
// elicitation of the form's schema (checked by the host, SEP-1034
// defaults and SEP-1330 enums as the capsule wrote them); the client's
// content must fit it, or the question is declined.
func (s *Server) elicitForm(ctx context.Context, c *call, q ipc.ElicitRequest) ipc.ElicitResponse {
	declined := ipc.ElicitResponse{RequestID: q.RequestID}
	msg := fmt.Sprintf("Capsule '%s' asks: %s", q.CapsuleID, ipc.ApprovalText(q.Field.Prompt, 1024))
	r, _ := c.ask(ctx, "elicit", &mcp.ElicitParams{Mode: "form", Message: msg, RequestedSchema: q.Form.Schema}).(*mcp.ElicitResult)
	if r == nil || r.Action != "accept" {
		return declined
	}
	content, err := json.Marshal(r.Content)
	if err == nil && r.Content == nil {
		content = []byte("{}")
	}
	if err == nil {
		err = q.Form.Schema.CheckContent(content)
	}
	if err != nil {
		s.log.Info("mcp serve: form answer does not fit; declined", "capsule", q.CapsuleID, "err", err)
		return declined
	}
	return ipc.ElicitResponse{RequestID: q.RequestID, Content: content}
}
