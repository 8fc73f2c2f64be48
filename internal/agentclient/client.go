package agentclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/request"
	"github.com/astrid-go/astrid/ipc"
)

// ClientID is the identity a frontend runs agent turns under on the bus.
const ClientID = ipc.AgentClientID

// agentEvents is the pattern of every agent event a turn delivers
// (agent.v1.response, agent.v1.stream.delta, agent.v1.tool.*).
const agentEvents = "agent.v1.*"

// ACL is the agent frontend's identity, for kernel.Options.Frontends: it may
// send prompts, approval and elicit answers and an editor's buffers (an
// editor frontend, astrid acp: ipc.EditorBufferRequest), and hear the
// agent's events, the approval and elicit questions and the requests for
// those buffers; nothing else.
func ACL() dispatch.CapsuleACL {
	return dispatch.CapsuleACL{
		ID:        ClientID,
		Publish:   []string{ipc.UserPromptTopic, ipc.ApprovalResponseTopic("*"), ipc.ElicitResponseTopic("*"), ipc.EditorBufferReplyPattern},
		Subscribe: []string{agentEvents, ipc.ApprovalRequestTopic, ipc.ElicitRequestTopic, ipc.EditorBufferPattern},
	}
}

// Kernel is the kernel as a frontend reaches it: publish and subscribe
// under a frontend identity registered at boot (ACL), and "who intercepts
// topic T". The kernel's Frontend is one.
type Kernel interface {
	Publish(from dispatch.Caller, topic string, payload json.RawMessage) (dispatch.Result, error)
	// PublishRequest publishes a request (DESIGN §4b): the kernel answers
	// it on req.ReplyTo when the agent cannot.
	PublishRequest(from dispatch.Caller, topic string, payload json.RawMessage, req dispatch.Request) (dispatch.Result, error)
	Subscribe(from dispatch.Caller, pattern string, scoped bool) (bus.Subscription, error)
	Interceptors(topic string) []string
	Logger() *slog.Logger
}

// ErrNoAgent is returned when no capsule handles user.v1.prompt.
var ErrNoAgent = errors.New("no agent is loaded (nothing handles " + ipc.UserPromptTopic + ")")

// A MatchingSubscriber is a Kernel that can deliver a subscription's
// events only when their payload's top-level string members equal match
// (the daemon's socket: docs/uplink.md). A turn subscribes to the agent's
// events for its own turn id that way; it still checks every event itself.
type MatchingSubscriber interface {
	SubscribeMatching(from dispatch.Caller, pattern string, scoped bool, match map[string]string) (bus.Subscription, error)
}

// NewSessionID returns a fresh session id: "s-" and 32 hex digits (128
// random bits), within the session store's [A-Za-z0-9_-]{1,64}.
func NewSessionID() string { return request.NewID("s-") }

// promptTimeout bounds the kernel's wait for the agent's final answer: a
// turn may take long (tools, approvals), and ends on its own limits first.
const promptTimeout = 24 * time.Hour

// newTurnID returns a fresh turn id, "t-" and 32 hex digits.
func newTurnID() string { return request.NewID("t-") }

// Prompt is one turn to run.
type Prompt struct {
	// Principal the turn acts for; "" is ipc.DefaultPrincipal.
	Principal string
	// SessionID names the conversation ([A-Za-z0-9_-]{1,64}); a new one
	// comes from NewSessionID, an old one continues that conversation; ""
	// is ipc.DefaultSessionID, as on the wire.
	SessionID string
	Text      string
	// Images go to the model with Text (a model that takes images:
	// the frontend checks, the provider refuses otherwise).
	Images []ipc.PromptImage
	// Context may name the provider and model of this turn; its TurnID is
	// chosen by Start when empty, and its Action must be empty.
	Context ipc.PromptContext
}

// EventKind says which field of an Event is set.
type EventKind uint8

// The events of a turn, in the order a frontend meets them.
const (
	EventDelta        EventKind = iota + 1 // Delta: text as the model streams it
	EventToolStarted                       // ToolStarted: a tool call went out
	EventToolFinished                      // ToolFinished: its result came back
	EventApproval                          // Approval: a question to answer with Turn.Answer
	EventFinal                             // Final: the turn's end; nothing follows
	EventElicit                            // Elicit: a question to answer with Turn.AnswerElicit
	// EventReasoning: Delta is a piece of the model's reasoning, not of
	// the answer. Last in the list, so a frontend that switches on the
	// kinds it knows skips it.
	EventReasoning
	// EventCompacted: Compacted says the agent summarized the session's
	// older history before a model request (or tried to, and sent it
	// whole).
	EventCompacted
	// EventToolProgress: ToolProgress says how far one of this turn's
	// tool calls got (its provider's words, e.g. an MCP server's
	// notifications/progress).
	EventToolProgress
)

// Event is one event of a turn.
type Event struct {
	Kind         EventKind
	Delta        ipc.AgentStreamDelta
	ToolStarted  ipc.AgentToolStarted
	ToolFinished ipc.AgentToolFinished
	Approval     ipc.ApprovalRequired
	Final        ipc.AgentResponse
	Elicit       ipc.ElicitRequest
	Compacted    ipc.AgentCompacted
	ToolProgress ipc.AgentToolProgress
}

// CancelGrace is how long Run waits for the final response after it sent
// a cancel because its context ended.
const CancelGrace = 2 * time.Second

// maxHeldApprovals bounds the approval and elicit questions kept back until
// the tool call they hold up is announced (the two arrive on different
// routes).
const maxHeldApprovals = 64

// Turn is one running turn. Next is for one goroutine; Answer and Cancel
// may be called from any. Close it when done.
type Turn struct {
	k       Kernel
	caller  dispatch.Caller
	session string
	turnID  string

	routes []bus.Subscription
	in     chan bus.Delivery
	stop   context.CancelFunc
	wg     sync.WaitGroup
	closed sync.Once
	// lost is closed when a subscription ends under the turn (the daemon
	// went away, the kernel closed); lostErr says why. Without it Next
	// would wait for events that can no longer come.
	lost     chan struct{}
	lostErr  error
	lostOnce sync.Once

	// Read and written by Next's goroutine only.
	calls map[string]string  // call ids this turn announced: their tool names
	held  []Event            // questions for calls not announced yet
	ready []Event            // released questions, delivered next
	final *ipc.AgentResponse // set once the turn ended
}

// Start publishes p's prompt and returns the turn, whose events Next
// delivers. It fails at once, without waiting, when no agent is loaded or
// the prompt cannot be published (a prompt over the bus's message limit).
func Start(ctx context.Context, k Kernel, p Prompt) (*Turn, error) {
	if p.Principal == "" {
		p.Principal = ipc.DefaultPrincipal
	}
	if p.SessionID == "" {
		p.SessionID = ipc.DefaultSessionID
	}
	if p.Context.Action != "" && p.Context.Action != ipc.ActionCompact {
		return nil, fmt.Errorf("agentclient: a prompt's action must be empty or %q (got %q); use Turn.Cancel", ipc.ActionCompact, p.Context.Action)
	}
	if len(k.Interceptors(ipc.UserPromptTopic)) == 0 {
		return nil, ErrNoAgent
	}
	if p.Context.TurnID == "" {
		p.Context.TurnID = newTurnID()
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	t := &Turn{
		k: k, caller: dispatch.Caller{Capsule: ClientID, Principal: p.Principal},
		session: p.SessionID, turnID: p.Context.TurnID,
		in: make(chan bus.Delivery), calls: map[string]string{},
	}
	// Subscribed before the prompt goes out, so no event is missed.
	for _, pattern := range []string{agentEvents, ipc.ApprovalRequestTopic, ipc.ElicitRequestTopic} {
		var r bus.Subscription
		var err error
		if ms, ok := k.(MatchingSubscriber); ok && pattern == agentEvents {
			// Only this turn's events: with many clients of one
			// principal, each would otherwise receive every turn's.
			r, err = ms.SubscribeMatching(t.caller, pattern, true, map[string]string{"turn_id": t.turnID})
		} else {
			r, err = k.Subscribe(t.caller, pattern, true)
		}
		if err != nil {
			t.closeRoutes()
			return nil, fmt.Errorf("agentclient: subscribe %s: %w", pattern, err)
		}
		t.routes = append(t.routes, r)
	}
	if _, ok := k.(MatchingSubscriber); ok {
		// A tool's progress names no turn, so the route matching this
		// turn's id never carries it: it comes on a route of its own,
		// and accept keeps only this turn's calls'.
		r, err := k.Subscribe(t.caller, ipc.AgentToolProgressTopic, true)
		if err != nil {
			t.closeRoutes()
			return nil, fmt.Errorf("agentclient: subscribe %s: %w", ipc.AgentToolProgressTopic, err)
		}
		t.routes = append(t.routes, r)
	}
	payload, err := userInput(p.Text, p.SessionID, p.Images, p.Context)
	if err == nil {
		// A request correlated by the turn id: a prompt the agent never
		// takes (its queue is full, it is unloaded, it fails) is answered
		// at once by the kernel, and the turn ends with why.
		err = request.Send(k, t.caller, ipc.UserPromptTopic, payload, ipc.AgentResponseTopic, t.turnID, promptTimeout)
	}
	if err != nil {
		t.closeRoutes()
		if errors.Is(err, bus.ErrTooLarge) {
			return nil, fmt.Errorf("agentclient: the prompt (%d bytes) was not sent: a message on the bus holds at most 1 MiB: %w", len(payload), err)
		}
		return nil, fmt.Errorf("agentclient: the prompt was not sent: %w", err)
	}
	fwdCtx, stop := context.WithCancel(context.Background())
	t.stop = stop
	t.lost = make(chan struct{})
	for _, r := range t.routes {
		t.wg.Add(1)
		go t.forward(fwdCtx, r)
	}
	return t, nil
}

func userInput(text, session string, images []ipc.PromptImage, pc ipc.PromptContext) (json.RawMessage, error) {
	ctxJSON, err := json.Marshal(pc)
	if err != nil {
		return nil, err
	}
	return ipc.EncodePayload(ipc.UserInput{Text: text, SessionID: session, Context: ctxJSON, Images: images})
}

// forward hands r's deliveries to Next until ctx ends.
func (t *Turn) forward(ctx context.Context, r bus.Subscription) {
	defer t.wg.Done()
	for {
		d, err := r.Recv(ctx)
		if err != nil {
			if ctx.Err() == nil { // not our own Close
				t.lostOnce.Do(func() {
					t.lostErr = fmt.Errorf("agentclient: the turn's events stopped: %w", err)
					close(t.lost)
				})
			}
			return
		}
		select {
		case t.in <- d:
		case <-ctx.Done():
			return
		}
	}
}

// SessionID is the turn's session.
func (t *Turn) SessionID() string { return t.session }

// TurnID is the id the agent echoes on this turn's events.
func (t *Turn) TurnID() string { return t.turnID }

// Next returns the turn's next event, waiting until one comes or ctx ends
// (then ctx's error). After the EventFinal event it returns io.EOF.
func (t *Turn) Next(ctx context.Context) (Event, error) {
	for {
		if len(t.ready) > 0 {
			ev := t.ready[0]
			t.ready = t.ready[1:]
			return ev, nil
		}
		if t.final != nil {
			return Event{}, io.EOF
		}
		select {
		case <-ctx.Done():
			return Event{}, ctx.Err()
		case <-t.lost:
			select {
			case d := <-t.in: // what came before the end first
				if ev, ok := t.accept(d); ok {
					return ev, nil
				}
				continue
			default:
			}
			return Event{}, t.lostErr
		case d := <-t.in:
			if ev, ok := t.accept(d); ok {
				return ev, nil
			}
		}
	}
}

// accept turns a delivery into an event of this turn, or reports false for
// one that is not (another session or turn, or not from the agent).
func (t *Turn) accept(d bus.Delivery) (Event, bool) {
	e := d.Envelope
	body := ipc.GuestBytes(e.Payload)
	switch e.Topic {
	case ipc.ApprovalRequestTopic:
		return t.acceptApproval(e.SourceID, body)
	case ipc.ElicitRequestTopic:
		return t.acceptElicit(e.SourceID, body)
	case ipc.AgentToolProgressTopic:
		return t.acceptProgress(e.SourceID, body)
	}
	if e.SourceID == ipc.KernelSourceID && e.Topic == ipc.AgentResponseTopic {
		// The kernel's answer to the prompt, for an agent that did not
		// give one. Read here, not by request.Await: a turn is a stream
		// of events of which the answer is the last
		// (docs/rationale/kernel-bus.md).
		f, ok := request.KernelFailure(e)
		if !ok || f.CorrelationID != t.turnID {
			return Event{}, false
		}
		outcome, text := ipc.OutcomeError, "The agent did not answer: "+ipc.FailureText(f, "the prompt")+"."
		switch f.Reason {
		case ipc.FailQueueFull, ipc.FailNoResponders, ipc.FailUnloaded:
			outcome, text = ipc.OutcomeBusy, "The agent did not take this prompt: "+f.Message+". Nothing ran; try again later."
		}
		r := ipc.AgentResponse{Text: text, IsFinal: true, SessionID: t.session, Outcome: outcome, TurnID: t.turnID}
		t.final = &r
		t.held = nil
		return Event{Kind: EventFinal, Final: r}, true
	}
	if !slices.Contains(t.k.Interceptors(ipc.UserPromptTopic), e.SourceID) {
		return Event{}, false // only the agent speaks for a turn
	}
	switch e.Topic {
	case ipc.AgentResponseTopic:
		var r ipc.AgentResponse
		if r.UnmarshalJSON(body) != nil || !r.IsFinal || !t.ours(r.SessionID, r.TurnID) {
			return Event{}, false
		}
		t.final = &r
		t.held = nil
		return Event{Kind: EventFinal, Final: r}, true
	case ipc.AgentStreamDeltaTopic:
		var v ipc.AgentStreamDelta
		if json.Unmarshal(body, &v) != nil || !t.ours(v.SessionID, v.TurnID) {
			return Event{}, false
		}
		if v.Reasoning {
			return Event{Kind: EventReasoning, Delta: v}, true
		}
		return Event{Kind: EventDelta, Delta: v}, true
	case ipc.AgentToolStartedTopic:
		var v ipc.AgentToolStarted
		if json.Unmarshal(body, &v) != nil || !t.ours(v.SessionID, v.TurnID) {
			return Event{}, false
		}
		t.calls[v.CallID] = v.Name
		t.release(v.CallID)
		return Event{Kind: EventToolStarted, ToolStarted: v}, true
	case ipc.AgentToolFinishedTopic:
		var v ipc.AgentToolFinished
		if json.Unmarshal(body, &v) != nil || !t.ours(v.SessionID, v.TurnID) {
			return Event{}, false
		}
		return Event{Kind: EventToolFinished, ToolFinished: v}, true
	case ipc.AgentCompactedTopic:
		var v ipc.AgentCompacted
		if json.Unmarshal(body, &v) != nil || !t.ours(v.SessionID, v.TurnID) {
			return Event{}, false
		}
		return Event{Kind: EventCompacted, Compacted: v}, true
	}
	return Event{}, false
}

// acceptProgress delivers a tool's progress about one of this turn's calls
// (over a daemon it comes on its own route, so it may follow the call's
// result: a frontend that shows only running calls drops it then),
// from the capsule that provides the tool (it intercepts the tool's
// execute topic); progress carries no session or turn, so the call id and
// tool name are what tie it to this turn (docs/rationale/mcp.md).
func (t *Turn) acceptProgress(source string, body []byte) (Event, bool) {
	var v ipc.AgentToolProgress
	if json.Unmarshal(body, &v) != nil || v.CallID == "" {
		return Event{}, false
	}
	if name, ok := t.calls[v.CallID]; !ok || name != v.Name {
		return Event{}, false
	}
	topic := ipc.ToolExecuteTopic(v.Name)
	if ipc.ValidateTopic(topic) != nil || !slices.Contains(t.k.Interceptors(topic), source) {
		return Event{}, false
	}
	return Event{Kind: EventToolProgress, ToolProgress: v}, true
}

// ours reports whether an event of session and turn belongs to this turn.
func (t *Turn) ours(session, turnID string) bool {
	return session == t.session && turnID == t.turnID
}

// acceptApproval delivers a question about one of this turn's calls, keeps
// back one about a call not announced yet (its tool.started may still be
// on the other route), and delivers one naming no call (a tool asking
// about an action of its own) as it comes. Only the tool plumbing (the
// approval layer) or the kernel may ask.
func (t *Turn) acceptApproval(source string, body []byte) (Event, bool) {
	if source != ipc.KernelSourceID && !slices.Contains(t.k.Interceptors(ipc.ToolRequestExecuteTopic), source) {
		return Event{}, false
	}
	var q ipc.ApprovalRequired
	if json.Unmarshal(body, &q) != nil || q.RequestID == "" {
		return Event{}, false
	}
	return t.question(q.CallID, Event{Kind: EventApproval, Approval: q})
}

// acceptElicit is acceptApproval for an elicit question, which only the
// kernel asks (the host elicit call): one from a capsule granted the topic
// is a phishing attempt and is dropped.
func (t *Turn) acceptElicit(source string, body []byte) (Event, bool) {
	if source != ipc.KernelSourceID {
		return Event{}, false
	}
	var q ipc.ElicitRequest
	if json.Unmarshal(body, &q) != nil || q.RequestID == "" {
		return Event{}, false
	}
	return t.question(q.CallID, Event{Kind: EventElicit, Elicit: q})
}

// question delivers ev, a question about callID, now when the call is one
// of this turn's (or it names none), or keeps it back until the call is
// announced.
func (t *Turn) question(callID string, ev Event) (Event, bool) {
	if _, announced := t.calls[callID]; callID == "" || announced {
		return ev, true
	}
	if len(t.held) < maxHeldApprovals {
		t.held = append(t.held, ev)
	}
	return Event{}, false
}

// questionCall is the tool call a held question is about.
func questionCall(ev Event) string {
	if ev.Kind == EventElicit {
		return ev.Elicit.CallID
	}
	return ev.Approval.CallID
}

// release queues the held questions about callID for delivery.
func (t *Turn) release(callID string) {
	kept := t.held[:0]
	for _, ev := range t.held {
		if questionCall(ev) == callID {
			t.ready = append(t.ready, ev)
		} else {
			kept = append(kept, ev)
		}
	}
	t.held = kept
}

// Answer answers approval question requestID with decision (one of the
// ipc.Decision* constants) on astrid.v1.approval.response.<requestID>.
func (t *Turn) Answer(requestID, decision string) error {
	switch decision {
	case ipc.DecisionApprove, ipc.DecisionApproveSession, ipc.DecisionApproveAlways, ipc.DecisionDeny:
	default:
		return fmt.Errorf("agentclient: unknown approval decision %q", decision)
	}
	topic := ipc.ApprovalResponseTopic(requestID)
	if err := ipc.ValidateTopic(topic); err != nil || requestID == "" || strings.Contains(requestID, ".") {
		return fmt.Errorf("agentclient: approval request id %q cannot name a topic", requestID)
	}
	payload, err := ipc.EncodePayload(ipc.ApprovalResponse{RequestID: requestID, Decision: decision})
	if err != nil {
		return err
	}
	// Answering lets admitted work go on: the CPU budget never refuses it.
	caller := t.caller
	caller.Continues = true
	if _, err := t.k.Publish(caller, topic, payload); err != nil {
		return fmt.Errorf("agentclient: approval answer not sent: %w", err)
	}
	return nil
}

// AnswerElicit answers elicit question r.RequestID with r (neither value
// set: the person declined) on astrid.v1.elicit.response.<id>. The answer
// is checked against nothing here: the host checks it against its
// question; it is never logged, as it may be a secret.
func (t *Turn) AnswerElicit(r ipc.ElicitResponse) error {
	topic := ipc.ElicitResponseTopic(r.RequestID)
	if err := ipc.ValidateTopic(topic); err != nil || r.RequestID == "" || strings.Contains(r.RequestID, ".") {
		return fmt.Errorf("agentclient: elicit request id %q cannot name a topic", r.RequestID)
	}
	payload, err := ipc.EncodePayload(r)
	if err != nil {
		return err
	}
	caller := t.caller
	caller.Continues = true
	if _, err := t.k.Publish(caller, topic, payload); err != nil {
		return fmt.Errorf("agentclient: elicit answer not sent: %w", err)
	}
	return nil
}

// Cancel asks the agent to end the turn; its final response (outcome
// cancelled) then comes through Next.
func (t *Turn) Cancel() error {
	payload, err := userInput("", t.session, nil, ipc.PromptContext{Action: ipc.ActionCancelTurn, TurnID: t.turnID})
	if err != nil {
		return err
	}
	// A cancel stops work: the CPU budget never refuses it.
	caller := t.caller
	caller.Continues = true
	if _, err := t.k.Publish(caller, ipc.UserPromptTopic, payload); err != nil {
		return fmt.Errorf("agentclient: cancel not sent: %w", err)
	}
	return nil
}

// Close stops listening. It does not cancel the turn.
func (t *Turn) Close() {
	t.closed.Do(func() {
		if t.stop != nil {
			t.stop()
		}
		t.closeRoutes()
		t.wg.Wait()
	})
}

func (t *Turn) closeRoutes() {
	for _, r := range t.routes {
		r.Close()
	}
}

// Run runs one turn: it starts p, passes every event to on (when not nil)
// as it comes, the final one included, and returns the final response.
// on runs on Run's goroutine and may call t.Answer and t.Cancel. When ctx
// ends first, Run cancels the turn, waits up to CancelGrace for its final
// response, and returns that response (if it came) with ctx's error.
func Run(ctx context.Context, k Kernel, p Prompt, on func(t *Turn, ev Event)) (ipc.AgentResponse, error) {
	t, err := Start(ctx, k, p)
	if err != nil {
		return ipc.AgentResponse{}, err
	}
	defer t.Close()
	for {
		ev, err := t.Next(ctx)
		if err != nil {
			if ctx.Err() == nil {
				return ipc.AgentResponse{}, err
			}
			return t.cancelAndWait(ctx.Err(), on)
		}
		if on != nil {
			on(t, ev)
		}
		if ev.Kind == EventFinal {
			return ev.Final, nil
		}
	}
}

// cancelAndWait cancels the turn after its caller stopped waiting (cause)
// and waits briefly for the final response.
func (t *Turn) cancelAndWait(cause error, on func(*Turn, Event)) (ipc.AgentResponse, error) {
	if err := t.Cancel(); err != nil {
		t.k.Logger().Warn("turn not cancelled", "session", t.session, "err", err)
	}
	grace, done := context.WithTimeout(context.Background(), CancelGrace)
	defer done()
	for {
		ev, err := t.Next(grace)
		if err != nil {
			return ipc.AgentResponse{}, fmt.Errorf("agentclient: turn stopped (no final response within %s of the cancel): %w", CancelGrace, cause)
		}
		if on != nil {
			on(t, ev)
		}
		if ev.Kind == EventFinal {
			return ev.Final, fmt.Errorf("agentclient: turn cancelled: %w", cause)
		}
	}
}

// Value is the event's payload: the field its Kind names (for a frontend
// that prints every event as JSON).
func (ev Event) Value() any {
	switch ev.Kind {
	case EventDelta:
		return ev.Delta
	case EventToolStarted:
		return ev.ToolStarted
	case EventToolFinished:
		return ev.ToolFinished
	case EventApproval:
		return ev.Approval
	case EventFinal:
		return ev.Final
	case EventElicit:
		return ev.Elicit
	case EventReasoning:
		return ev.Delta
	case EventCompacted:
		return ev.Compacted
	case EventToolProgress:
		return ev.ToolProgress
	}
	return nil
}
