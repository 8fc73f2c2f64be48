package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/astrid-go/astrid/internal/host"
	"github.com/astrid-go/astrid/ipc"
)

// A server's notifications/progress about a call in flight becomes an
// agent.v1.tool.progress event for the call's principal (DESIGN §12,
// docs/rationale/mcp.md): the result stays the call's one addressed reply,
// and progress is a separate event frontends show next to the call. Every
// call asks for progress with a token of the engine's own ("p" and a
// counter), never the caller's call id, and a notification counts only on
// the session the token was given to: a server cannot speak for another
// server's call, nor for a call it does not run.

// progressGap is the least time between two progress events of one call;
// a notification that comes sooner is dropped unless it says the call is
// done (progress reached total). A server cannot flood the bus with them.
const progressGap = 100 * time.Millisecond

// progressCalls are the calls in flight that asked for progress, by token.
type progressCalls struct {
	mu   sync.Mutex
	next uint64
	byID map[string]*progressCall
}

type progressCall struct {
	call    *host.Call
	session *mcp.ClientSession
	callID  string
	tool    string // the tool's bus name
	last    time.Time
	// read counts the notifications naming the token that a counting
	// connection read (stdio), handled those the handler took or
	// dropped; changed is closed and replaced at each handled one.
	read, handled int
	changed       chan struct{}
	// logs counts the log messages taken for the call (onlyCall):
	// logging.go bounds them by it.
	logs int
}

// track gives params a progress token of its own for the call of callID on
// session, and returns the function that forgets it (before the call ends),
// once the notifications read before the call's answer are handled
// (settle, until done ends).
func (p *progressCalls) track(params *mcp.CallToolParams, call *host.Call, session *mcp.ClientSession, callID, tool string, done <-chan struct{}) func() {
	p.mu.Lock()
	if p.byID == nil {
		p.byID = map[string]*progressCall{}
	}
	p.next++
	token := "p" + strconv.FormatUint(p.next, 10)
	p.byID[token] = &progressCall{call: call, session: session, callID: callID, tool: tool, changed: make(chan struct{})}
	p.mu.Unlock()
	params.SetProgressToken(token)
	return func() {
		p.settle(token, done)
		p.mu.Lock()
		delete(p.byID, token)
		p.mu.Unlock()
	}
}

// take returns the call a notification is about and whether it is due (not
// too soon after the call's last one).
func (p *progressCalls) take(req *mcp.ProgressNotificationClientRequest, now time.Time) (progressCall, bool) {
	token, ok := req.Params.ProgressToken.(string)
	if !ok {
		return progressCall{}, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	pc := p.byID[token]
	if pc == nil {
		return progressCall{}, false
	}
	if pc.session != req.Session {
		return progressCall{}, false
	}
	done := req.Params.Total > 0 && req.Params.Progress >= req.Params.Total
	if !done && !pc.last.IsZero() && now.Sub(pc.last) < progressGap {
		return progressCall{}, false
	}
	pc.last = now
	return *pc, true
}

// handledOne notes a notification naming token as handled: published or
// dropped. It is noted only after the publish, so that settle, and with
// it the call's end, waits for the event: counted when taken, a report
// could reach an ended call under load and be lost.
func (p *progressCalls) handledOne(token string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if pc := p.byID[token]; pc != nil {
		pc.handled++
		close(pc.changed)
		pc.changed = make(chan struct{})
	}
}

// onSession is the one call in flight on session: a server's request
// (sampling) names no call, and one made while several run could be any
// one's; asking the wrong person is worse than not asking.
func (p *progressCalls) onSession(session *mcp.ClientSession) (*host.Call, error) {
	pc, err := p.onlyCall(session, false)
	return pc.call, err
}

// onlyCall is onSession's call with its id and tool; log counts a log
// message for it.
func (p *progressCalls) onlyCall(session *mcp.ClientSession, log bool) (progressCall, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var found *progressCall
	n := 0
	for _, pc := range p.byID {
		if pc.session == session {
			found = pc
			n++
		}
	}
	switch n {
	case 1:
		if log {
			found.logs++
		}
		return *found, nil
	case 0:
		return progressCall{}, fmt.Errorf("no tool call is running on the server's session, and a server may ask only during one")
	default:
		return progressCall{}, fmt.Errorf("%d tool calls are running on the server's session, and the request does not say for which one", n)
	}
}

// read notes a progress notification naming token as read off a
// connection, before the session's handler (which runs apart from the
// reader) takes it.
func (p *progressCalls) read(token string) {
	p.mu.Lock()
	if pc := p.byID[token]; pc != nil {
		pc.read++
	}
	p.mu.Unlock()
}

// settle waits until the handler has taken every notification about token
// read so far, so that a stdio call's progress is published before its
// result; it gives up when done ends. A remote session's connection
// cannot be counted (the SDK keeps its state to itself), and there a
// report may still be handled after the result: the token is forgotten
// then, and the report dropped.
func (p *progressCalls) settle(token string, done <-chan struct{}) {
	for {
		p.mu.Lock()
		pc := p.byID[token]
		if pc == nil || pc.handled >= pc.read {
			p.mu.Unlock()
			return
		}
		ch := pc.changed
		p.mu.Unlock()
		select {
		case <-ch:
		case <-done:
			return
		}
	}
}

// countingTransport counts, on each connection it makes, the progress
// notifications read (progressCalls.read).
type countingTransport struct {
	mcp.Transport
	progress *progressCalls
}

func (t *countingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &countingConn{Connection: c, progress: t.progress}, nil
}

type countingConn struct {
	mcp.Connection
	progress *progressCalls
}

func (c *countingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if req, ok := msg.(*jsonrpc.Request); ok && err == nil && req.Method == "notifications/progress" && !req.IsCall() {
		var params struct {
			Token any `json:"progressToken"`
		}
		if json.Unmarshal(req.Params, &params) == nil {
			if token, ok := params.Token.(string); ok {
				c.progress.read(token)
			}
		}
	}
	return msg, err
}

// onProgress publishes a server's progress notification as the call's
// agent.v1.tool.progress event. One about no call of ours is dropped.
func (e *Engine) onProgress(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	if req == nil || req.Params == nil {
		return
	}
	if token, ok := req.Params.ProgressToken.(string); ok {
		defer e.progress.handledOne(token)
	}
	pc, ok := e.progress.take(req, time.Now())
	if !ok {
		e.log.Debug("mcp: progress notification dropped (no call of this session asked for it, or too soon after the last)")
		return
	}
	ev := ipc.AgentToolProgress{
		CallID: pc.callID, Name: pc.tool,
		Progress: req.Params.Progress, Total: req.Params.Total,
		Message: clipRunes(req.Params.Message, ipc.ToolSummaryRunes),
	}
	payload, err := json.Marshal(ev)
	if err == nil {
		err = pc.call.Publish(ipc.AgentToolProgressTopic, payload)
	}
	if err != nil {
		e.log.Warn("mcp: progress event not published", "tool", pc.tool, "call_id", pc.callID, "err", err)
	}
}

// clipRunes keeps the first n runes of s.
func clipRunes(s string, n int) string {
	i := 0
	for j := range s {
		if i == n {
			return s[:j] + "…"
		}
		i++
	}
	return s
}
