package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/astrid-go/astrid/internal/agentclient"
	"github.com/astrid-go/astrid/internal/sessionclient"
	"github.com/astrid-go/astrid/internal/toolclient"
	"github.com/astrid-go/astrid/ipc"
)

// maxPromptBytes is the largest prompt: the bus's largest message, less
// room for the envelope around the text (as astrid -p).
const maxPromptBytes = 1<<20 - 4<<10

// maxPromptImages is the most images one prompt takes (as the agent).
const maxPromptImages = 16

// prompt is what a session/prompt asks: its text and its images.
type prompt struct {
	text   string
	images []ipc.PromptImage
}

// promptContent is the prompt's blocks as the text of one prompt and its
// images: text as it is, a resource link as a line naming it, an embedded
// text resource fenced under its URI, an image (png, jpeg, gif, webp, by
// data) as an image of the prompt. Audio and binary resources are
// refused; so is a prompt over what the bus carries in one message.
func promptContent(blocks []acpsdk.ContentBlock) (prompt, error) {
	var b strings.Builder
	var images []ipc.PromptImage
	size := 0
	for i, c := range blocks {
		if c.Image != nil {
			img, err := imageOf(i, c.Image)
			if err != nil {
				return prompt{}, err
			}
			images = append(images, img)
			size += len(img.Data) + len(img.MediaType)
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		switch {
		case c.Text != nil:
			b.WriteString(c.Text.Text)
		case c.ResourceLink != nil:
			fmt.Fprintf(&b, "[%s](%s)", c.ResourceLink.Name, c.ResourceLink.Uri)
		case c.Resource != nil && c.Resource.Resource.TextResourceContents != nil:
			r := c.Resource.Resource.TextResourceContents
			fmt.Fprintf(&b, "%s:\n```\n%s\n```", r.Uri, r.Text)
		default:
			return prompt{}, invalidParams("prompt block %d: only text, images, resource links and embedded text resources are taken (promptCapabilities)", i)
		}
	}
	text := b.String()
	switch {
	case strings.TrimSpace(text) == "" && len(images) == 0:
		return prompt{}, invalidParams("the prompt is empty")
	case len(images) > maxPromptImages:
		return prompt{}, invalidParams("the prompt has %d images; at most %d are taken", len(images), maxPromptImages)
	case len(text)+size > maxPromptBytes:
		return prompt{}, invalidParams("the prompt is over %d KiB with its images, the largest the bus carries in one message", maxPromptBytes>>10)
	}
	return prompt{text: text, images: images}, nil
}

// acquire takes the session's turn slot, waiting for a running turn (the
// SDK cancelled it when this prompt came) to end.
func (a *agent) acquire(ctx context.Context, s *session) error {
	select {
	case s.turn <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Prompt runs one turn of the session and streams it to the editor.
func (a *agent) Prompt(ctx context.Context, p acpsdk.PromptRequest) (acpsdk.PromptResponse, error) {
	if !a.enter() {
		return acpsdk.PromptResponse{}, internal("%v", errShuttingDown)
	}
	defer a.leave()
	s, err := a.session(p.SessionId)
	if err != nil {
		return acpsdk.PromptResponse{}, err
	}
	in, err := promptContent(p.Prompt)
	if err != nil {
		return acpsdk.PromptResponse{}, err
	}
	text, action, err := s.expandCommand(in.text)
	if err != nil {
		return acpsdk.PromptResponse{}, invalidParams("%v", err)
	}
	if err := a.acquire(ctx, s); err != nil {
		return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonCancelled}, nil
	}
	defer func() { <-s.turn }()
	ws, err := a.current(ctx, s)
	if err != nil {
		if ctx.Err() != nil {
			return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonCancelled}, nil
		}
		return acpsdk.PromptResponse{}, err
	}
	if len(in.images) > 0 {
		if err := a.takesImages(ctx, s); err != nil {
			return acpsdk.PromptResponse{}, err
		}
	}
	turnCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.mu.Lock()
	s.cancel = cancel
	provider, model := s.provider, s.model
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.cancel = nil
		s.mu.Unlock()
	}()
	r := &run{a: a, s: s, ws: ws, asks: map[string]context.CancelFunc{}}
	resp, err := r.turn(turnCtx, agentclient.Prompt{
		Principal: a.opts.Principal, SessionID: s.id, Text: text, Images: in.images,
		Context: ipc.PromptContext{Provider: provider, Model: model, Action: action},
	})
	a.record(s)
	return resp, err
}

// record writes the session's workspace to the store once it holds the
// session, so astrid -p --continue and --session find it there.
func (a *agent) record(s *session) {
	s.mu.Lock()
	done := s.recorded
	s.recorded = true
	s.mu.Unlock()
	if done {
		return
	}
	ctx, cancel := context.WithTimeout(a.hard, askTimeout)
	defer cancel()
	ws := s.workspace()
	if err := sessionclient.SetWorkspace(ctx, ws.Kernel, a.opts.Principal, s.id, ws.Dir); err != nil {
		a.log.Info("acp: the session's workspace was not recorded", "session", s.id, "err", err)
	}
}

// run is one turn in flight.
type run struct {
	a  *agent
	s  *session
	ws Workspace // the session's, for the whole turn
	t  *agentclient.Turn

	// streamed is the text sent since the last tool call: what of the
	// final answer the editor has already shown.
	streamed strings.Builder
	// sentAny: some agent text was sent in this turn.
	sentAny bool

	mu    sync.Mutex
	asks  map[string]context.CancelFunc // permission requests pending, by call (or request) id
	calls map[string]json.RawMessage    // arguments of the turn's tool calls, by call id
	names map[string]string
	olds  map[string]*string // a write_file's old text, read when it was asked about
	wg    sync.WaitGroup
}

// send sends one update; it outlives the prompt's context (a cancelled
// turn still reports how it ended) but not the connection.
func (r *run) send(u acpsdk.SessionUpdate) {
	if err := r.a.conn.SessionUpdate(r.a.hard, acpsdk.SessionNotification{SessionId: acpsdk.SessionId(r.s.id), Update: u}); err != nil {
		r.a.log.Debug("acp: update not sent", "session", r.s.id, "err", err)
	}
}

// turn runs p and returns how it ended.
func (r *run) turn(ctx context.Context, p agentclient.Prompt) (acpsdk.PromptResponse, error) {
	stopBuffers, err := r.serveBuffers()
	if err != nil {
		// The turn goes on: its file tools use the disk.
		r.a.log.Warn("acp: the editor's buffers are not used in this turn", "session", r.s.id, "err", err)
		stopBuffers = func() {}
	}
	defer stopBuffers()
	t, err := agentclient.Start(ctx, r.ws.Kernel, p)
	if err != nil {
		if ctx.Err() != nil {
			return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonCancelled}, nil
		}
		return acpsdk.PromptResponse{}, internal("%v", err)
	}
	r.t = t
	r.calls, r.names, r.olds = map[string]json.RawMessage{}, map[string]string{}, map[string]*string{}
	defer func() {
		r.endAsks()
		r.wg.Wait()
		t.Close()
	}()
	for {
		ev, err := t.Next(ctx)
		if err != nil {
			if ctx.Err() == nil {
				if r.daemonGone() {
					return acpsdk.PromptResponse{}, internal("the daemon went away during the turn (stopped or restarted): what the turn did so far is in the session (session/load shows it); the next prompt connects again")
				}
				return acpsdk.PromptResponse{}, internal("%v", err)
			}
			return r.cancelled()
		}
		if ev.Kind == agentclient.EventFinal {
			if ev.Final.Outcome == ipc.OutcomeCancelled && ctx.Err() == nil {
				return r.cancelledByAstrid(ev.Final)
			}
			return r.final(ev.Final)
		}
		r.event(ev)
	}
}

// cancelledByAstrid answers a turn cancelled while its prompt still
// stood: not the editor's cancel (that is a stop reason) but the daemon
// stopping (astrid stop cancels the running turns first) or another
// client's prompt taking the session over, which the editor must see as
// an error, not as its own cancel.
func (r *run) cancelledByAstrid(f ipc.AgentResponse) (acpsdk.PromptResponse, error) {
	if r.stoppedDaemon() {
		return acpsdk.PromptResponse{}, internal("the daemon stopped during the turn (astrid stop or restart) and cancelled it: what the turn did so far is in the session (session/load shows it); the next prompt connects again")
	}
	return acpsdk.PromptResponse{}, internal("the turn was cancelled by astrid, not by the editor: %s", f.Text)
}

// cancelled cancels the turn after its prompt's context ended (session/cancel,
// a newer prompt, the editor gone) and forwards what comes until the
// final response, within agentclient.CancelGrace.
func (r *run) cancelled() (acpsdk.PromptResponse, error) {
	r.endAsks()
	if err := r.t.Cancel(); err != nil {
		r.a.log.Warn("acp: turn not cancelled", "session", r.s.id, "err", err)
	}
	grace, done := context.WithTimeout(r.a.hard, agentclient.CancelGrace)
	defer done()
	for {
		ev, err := r.t.Next(grace)
		if err != nil {
			r.a.log.Warn("acp: no final response after the cancel", "session", r.s.id, "err", err)
			return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonCancelled}, nil
		}
		if ev.Kind == agentclient.EventFinal {
			return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonCancelled}, nil
		}
		if ev.Kind == agentclient.EventApproval {
			// Nobody will be asked any more: the turn is ending.
			_ = r.t.Answer(ev.Approval.RequestID, ipc.DecisionDeny)
			continue
		}
		r.event(ev)
	}
}

// final maps the turn's end to a stop reason; an ending that is a failure
// (error, timeout, busy) is the prompt's JSON-RPC error, with the agent's
// text as its message.
func (r *run) final(f ipc.AgentResponse) (acpsdk.PromptResponse, error) {
	switch f.Outcome {
	case ipc.OutcomeAnswer, "":
		rest := f.Text
		if shown := r.streamed.String(); strings.HasPrefix(rest, shown) {
			rest = rest[len(shown):]
		} else if shown != "" {
			rest = "" // the streamed text differs: keep what was shown
		}
		if rest != "" {
			r.send(acpsdk.UpdateAgentMessageText(rest))
		}
		if note := agentclient.StandIn(f); note != "" {
			r.send(acpsdk.UpdateAgentMessageText("\n\n_" + note + "_"))
		}
		return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonEndTurn}, nil
	case ipc.OutcomeEmpty:
		r.send(acpsdk.UpdateAgentMessageText(f.Text))
		return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonEndTurn}, nil
	case ipc.OutcomeIterationCap:
		return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonMaxTurnRequests}, nil
	case ipc.OutcomeCancelled:
		return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonCancelled}, nil
	case ipc.OutcomeCompacted:
		r.send(acpsdk.UpdateAgentMessageText("_" + f.Text + "_"))
		return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonEndTurn}, nil
	}
	return acpsdk.PromptResponse{}, &acpsdk.RequestError{Code: -32603, Message: f.Text, Data: map[string]any{"outcome": f.Outcome}}
}

// event forwards one event of the turn.
func (r *run) event(ev agentclient.Event) {
	switch ev.Kind {
	case agentclient.EventDelta:
		if ev.Delta.Delta == "" {
			return
		}
		r.streamed.WriteString(ev.Delta.Delta)
		r.sentAny = true
		r.send(acpsdk.UpdateAgentMessageText(ev.Delta.Delta))
	case agentclient.EventReasoning:
		if ev.Delta.Delta != "" {
			r.send(acpsdk.UpdateAgentThoughtText(ev.Delta.Delta))
		}
	case agentclient.EventToolStarted:
		r.streamed.Reset()
		r.started(ev.ToolStarted)
	case agentclient.EventToolFinished:
		r.finished(ev.ToolFinished)
	case agentclient.EventCompacted:
		// Said as the agent's thought: the editor shows it apart from
		// the answer.
		r.send(acpsdk.UpdateAgentThoughtText(ev.Compacted.Text() + "\n"))
	case agentclient.EventApproval:
		r.ask(ev.Approval)
	case agentclient.EventElicit:
		// ACP has no stable way to ask for a value yet: declined, so
		// the tool that asked goes on without it.
		r.a.log.Warn("acp: a tool asked for a value, which the editor cannot be asked yet: declined", "session", r.s.id, "call", ev.Elicit.CallID)
		if err := r.t.AnswerElicit(ipc.ElicitResponse{RequestID: ev.Elicit.RequestID}); err != nil {
			r.a.log.Warn("acp: elicit answer not sent", "err", err)
		}
	}
}

func (r *run) started(e ipc.AgentToolStarted) {
	r.mu.Lock()
	r.calls[e.CallID], r.names[e.CallID] = e.Arguments, e.Name
	r.mu.Unlock()
	title, kind, locs := describeCall(r.ws.Dir, e.Name, e.Arguments)
	_, input := parseArgs(e.Arguments)
	opts := []acpsdk.ToolCallStartOpt{acpsdk.WithStartKind(kind), acpsdk.WithStartStatus(acpsdk.ToolCallStatusInProgress), acpsdk.WithStartRawInput(input)}
	if len(locs) > 0 {
		opts = append(opts, acpsdk.WithStartLocations(locs))
	}
	if d, ok := diffOf(r.ws.Dir, e.Name, e.Arguments, nil); ok {
		opts = append(opts, acpsdk.WithStartContent([]acpsdk.ToolCallContent{d}))
	}
	r.send(acpsdk.StartToolCall(acpsdk.ToolCallId(e.CallID), title, opts...))
}

func (r *run) finished(e ipc.AgentToolFinished) {
	r.mu.Lock()
	if cancel := r.asks[e.CallID]; cancel != nil {
		cancel() // settled without the editor (the approval timed out, the call was cancelled)
		delete(r.asks, e.CallID)
	}
	args, old := r.calls[e.CallID], r.olds[e.CallID]
	r.mu.Unlock()
	status := acpsdk.ToolCallStatusCompleted
	if e.IsError {
		status = acpsdk.ToolCallStatusFailed
	}
	var content []acpsdk.ToolCallContent
	if d, ok := diffOf(r.ws.Dir, e.Name, args, old); ok && !e.IsError {
		content = append(content, d)
	}
	if e.Summary != "" {
		content = append(content, acpsdk.ToolContent(acpsdk.TextBlock(e.Summary)))
	}
	r.send(acpsdk.UpdateToolCall(acpsdk.ToolCallId(e.CallID), acpsdk.WithUpdateStatus(status),
		acpsdk.WithUpdateContent(content), acpsdk.WithUpdateRawOutput(map[string]any{"summary": e.Summary, "is_error": e.IsError, "duration_ms": e.DurationMS})))
}

// Permission options, and the approval decision each stands for.
const (
	optOnce    = "allow_once"
	optSession = "allow_session"
	optAlways  = "allow_always"
	optReject  = "reject"
)

func decisionOf(option string) string {
	switch option {
	case optOnce:
		return ipc.DecisionApprove
	case optSession:
		return ipc.DecisionApproveSession
	case optAlways:
		return ipc.DecisionApproveAlways
	}
	return ipc.DecisionDeny
}

// permissionOptions are the answers offered: once, while astrid runs,
// always, reject; a question about running a process outside the sandbox
// is only ever allowed once (DESIGN §11).
func permissionOptions(q ipc.ApprovalRequired) []acpsdk.PermissionOption {
	opts := []acpsdk.PermissionOption{{Kind: acpsdk.PermissionOptionKindAllowOnce, Name: "Allow once", OptionId: optOnce}}
	if !q.Unconfined {
		opts = append(opts,
			acpsdk.PermissionOption{Kind: acpsdk.PermissionOptionKindAllowAlways, Name: "Allow " + q.Action + " until astrid restarts", OptionId: optSession},
			acpsdk.PermissionOption{Kind: acpsdk.PermissionOptionKindAllowAlways, Name: "Always allow " + q.Action, OptionId: optAlways})
	}
	return append(opts, acpsdk.PermissionOption{Kind: acpsdk.PermissionOptionKindRejectOnce, Name: "Reject", OptionId: optReject})
}

// ask puts an approval question to the editor as session/request_permission,
// on its own goroutine (the turn's other events go on), and answers it with
// the option chosen. A question settled otherwise (the approval layer's
// timeout, the turn's cancel) withdraws the request.
func (r *run) ask(q ipc.ApprovalRequired) {
	key := q.CallID
	if key == "" {
		key = q.RequestID
	}
	ctx, cancel := context.WithCancel(r.a.hard)
	r.mu.Lock()
	if prev := r.asks[key]; prev != nil {
		prev()
	}
	r.asks[key] = cancel
	name, args := r.names[q.CallID], r.calls[q.CallID]
	r.mu.Unlock()
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer cancel()
		tc := acpsdk.ToolCallUpdate{ToolCallId: acpsdk.ToolCallId(key), Status: acpsdk.Ptr(acpsdk.ToolCallStatusPending)}
		if name != "" {
			title, kind, locs := describeCall(r.ws.Dir, name, args)
			tc.Title, tc.Kind, tc.Locations = acpsdk.Ptr(title), acpsdk.Ptr(kind), locs
			var old *string
			if name == "write_file" {
				old = r.oldText(ctx, q.CallID, args)
			}
			if d, ok := diffOf(r.ws.Dir, name, args, old); ok {
				tc.Content = []acpsdk.ToolCallContent{d}
			}
		} else {
			tc.Title = acpsdk.Ptr(fmt.Sprintf("%s %s", q.Action, oneLine(q.Resource, 200)))
		}
		resp, err := r.a.conn.RequestPermission(ctx, acpsdk.RequestPermissionRequest{
			SessionId: acpsdk.SessionId(r.s.id), ToolCall: tc, Options: permissionOptions(q),
		})
		if ctx.Err() != nil {
			return // settled without the editor: nothing to answer
		}
		decision := ipc.DecisionDeny
		switch {
		case err != nil:
			r.a.log.Warn("acp: the permission request failed; the call is denied", "session", r.s.id, "tool", q.Action, "err", err)
		case resp.Outcome.Selected != nil:
			decision = decisionOf(string(resp.Outcome.Selected.OptionId))
		}
		if q.Unconfined && decision != ipc.DecisionDeny {
			decision = ipc.DecisionApprove
		}
		if err := r.t.Answer(q.RequestID, decision); err != nil {
			r.a.log.Warn("acp: the approval answer was not delivered", "session", r.s.id, "err", err)
		}
		r.mu.Lock()
		delete(r.asks, key)
		r.mu.Unlock()
	}()
}

// oldText is a file's text before a write_file call that is held for
// approval (so the file is still as it was), read with the session's own
// read_file tool: checked against the grants like any call. nil when it
// cannot be read (a new file).
func (r *run) oldText(ctx context.Context, callID string, args json.RawMessage) *string {
	a, _ := parseArgs(args)
	body, err := json.Marshal(map[string]string{"file_path": a.FilePath})
	if err != nil || a.FilePath == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	res, err := toolclient.CallTool(ctx, r.ws.Kernel, r.a.opts.Principal, "read_file", body, 10*time.Second)
	if err != nil || res.IsError {
		return nil
	}
	old := res.Content
	r.mu.Lock()
	r.olds[callID] = &old
	r.mu.Unlock()
	return &old
}

// endAsks withdraws every pending permission request.
func (r *run) endAsks() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, cancel := range r.asks {
		cancel()
		delete(r.asks, k)
	}
}
