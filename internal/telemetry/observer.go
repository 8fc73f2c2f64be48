package telemetry

import (
	"context"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/ipc"
)

var _ dispatch.Observer = (*Tracer)(nil)

// The topic prefixes of the provider and approval pairs (ipc's
// LLMGenerateTopic, LLMStreamTopic and ApprovalResponseTopic without their
// last segment).
var (
	llmGeneratePrefix      = ipc.LLMGenerateTopic("")
	llmStreamPrefix        = ipc.LLMStreamTopic("")
	approvalResponsePrefix = ipc.ApprovalResponseTopic("")
)

// Publishing opens a span for a request that starts one (giving the
// request's envelope the new span's context, so that what handles it nests
// under it) and ends the span an answer closes.
func (t *Tracer) Publishing(e *ipc.Envelope) {
	switch topic := e.Topic; {
	case topic == ipc.UserPromptTopic:
		t.startTurn(e)
	case topic == ipc.AgentResponseTopic:
		t.endTurn(e)
	case topic == ipc.ToolRequestExecuteTopic:
		t.startTool(e)
	case topic == ipc.ToolExecuteResultTopic:
		t.endTool(e)
	case strings.HasPrefix(topic, llmGeneratePrefix):
		t.startProvider(e, topic[len(llmGeneratePrefix):])
	case strings.HasPrefix(topic, llmStreamPrefix):
		t.endProvider(e)
	case topic == ipc.ApprovalRequestTopic:
		t.startApproval(e)
	case strings.HasPrefix(topic, approvalResponsePrefix):
		t.endApproval(e, topic[len(approvalResponsePrefix):])
	}
}

// start opens span name as a child of the envelope's trace context (a new
// trace when it has none) and makes the envelope carry the new span's.
func (t *Tracer) start(e *ipc.Envelope, name string, attrs ...attribute.KeyValue) trace.Span {
	ctx := context.Background()
	if parent := e.Trace(); parent.Valid() {
		ctx = trace.ContextWithSpanContext(ctx, spanContext(parent))
	}
	_, s := t.tracer.Start(ctx, name, trace.WithAttributes(attrs...))
	e.SetTrace(traceContext(s.SpanContext()))
	return s
}

func (t *Tracer) startTurn(e *ipc.Envelope) {
	f := scan(e.Payload, wantSession|wantContext)
	if f.cancel || f.sessionID == "" {
		return // a cancel request starts no turn
	}
	s := t.start(e, SpanTurn,
		attribute.String(AttrPrincipal, e.Principal), attribute.String(AttrSession, f.sessionID), attribute.String(AttrTurn, f.turnID))
	t.pairs.put(pairKey{kindTurn, e.Principal, f.sessionID + "\x00" + f.turnID}, s)
}

func (t *Tracer) endTurn(e *ipc.Envelope) {
	if !t.pairs.pending(kindTurn) {
		return
	}
	f := scan(e.Payload, wantSession|wantTurnID|wantIsFinal|wantOutcome)
	if !f.isFinal {
		return
	}
	s, ok := t.pairs.take(pairKey{kindTurn, e.Principal, f.sessionID + "\x00" + f.turnID})
	if !ok {
		return
	}
	s.SetAttributes(attribute.String(AttrOutcome, f.outcome))
	switch f.outcome {
	case ipc.OutcomeError, ipc.OutcomeTimeout, ipc.OutcomeIterationCap:
		s.SetStatus(codes.Error, f.outcome)
	}
	s.End()
}

func (t *Tracer) startTool(e *ipc.Envelope) {
	if !e.Trace().Valid() {
		return // only a turn's tool calls are traced
	}
	f := scan(e.Payload, wantCallID|wantToolName)
	if f.callID == "" {
		return
	}
	key := pairKey{kindTool, e.Principal, f.callID}
	if open, ok := t.pairs.peek(key); ok {
		// The same call published again (the approval layer releasing
		// a call the person approved): it goes on under its span.
		e.SetTrace(traceContext(open.SpanContext()))
		return
	}
	s := t.start(e, SpanToolCall, attribute.String(AttrTool, f.toolName), attribute.String(AttrCallID, f.callID))
	t.pairs.put(key, s)
}

func (t *Tracer) endTool(e *ipc.Envelope) {
	if !t.pairs.pending(kindTool) {
		return
	}
	f := scan(e.Payload, wantCallID|wantResult)
	s, ok := t.pairs.take(pairKey{kindTool, e.Principal, f.callID})
	if !ok {
		return
	}
	adopt(e, s)
	if f.isError {
		s.SetStatus(codes.Error, "the tool answered an error")
	}
	s.End()
}

func (t *Tracer) startProvider(e *ipc.Envelope, provider string) {
	if !e.Trace().Valid() {
		return
	}
	f := scan(e.Payload, wantRequestID)
	if f.requestID == "" {
		return
	}
	s := t.start(e, SpanProviderRequest, attribute.String(AttrProvider, provider), attribute.String(AttrRequestID, f.requestID))
	t.pairs.put(pairKey{kindProvider, e.Principal, f.requestID}, s)
}

func (t *Tracer) endProvider(e *ipc.Envelope) {
	if !t.pairs.pending(kindProvider) {
		return
	}
	f := scan(e.Payload, wantRequestID|wantEvent)
	done := string(f.event) == `"Done"`
	failed := strings.HasPrefix(string(f.event), `{"Error"`)
	if !done && !failed {
		return // a delta: the request goes on
	}
	s, ok := t.pairs.take(pairKey{kindProvider, e.Principal, f.requestID})
	if !ok {
		return
	}
	adopt(e, s)
	if failed {
		s.SetStatus(codes.Error, "the provider answered an error")
	}
	s.End()
}

func (t *Tracer) startApproval(e *ipc.Envelope) {
	if !e.Trace().Valid() {
		return
	}
	f := scan(e.Payload, wantRequestID|wantCallID)
	if f.requestID == "" {
		return
	}
	s := t.start(e, SpanApprovalWait, attribute.String(AttrRequestID, f.requestID), attribute.String(AttrCallID, f.callID))
	t.pairs.put(pairKey{kindApproval, e.Principal, f.requestID}, s)
}

func (t *Tracer) endApproval(e *ipc.Envelope, id string) {
	if !t.pairs.pending(kindApproval) {
		return
	}
	s, ok := t.pairs.take(pairKey{kindApproval, e.Principal, id})
	if !ok {
		return
	}
	adopt(e, s)
	s.SetAttributes(attribute.String(AttrDecision, scan(e.Payload, wantDecision).decision))
	s.End()
}

// adopt gives an answer that carries no trace context (a frontend's
// approval, a provider streaming from its own goroutine) the context of the
// span it closes, so that what its receivers do next stays in the turn's
// trace: the approval capsule's release of the held call, the agent's next
// request.
func adopt(e *ipc.Envelope, s trace.Span) {
	if !e.Trace().Valid() {
		e.SetTrace(traceContext(s.SpanContext()))
	}
}

type invocationKey struct{}

// Invoking records a capsule invocation span for a call whose event carries
// a trace context, and gives the call that span's context (its publishes
// carry it). The span is made later (invocation.go).
func (t *Tracer) Invoking(ctx context.Context, inv dispatch.Invocation) context.Context {
	parent := inv.Envelope.Trace()
	if !parent.Valid() {
		return ctx
	}
	c := &invocation{
		parent: spanContext(parent), id: newSpanID(), start: time.Now(),
		capsule: inv.Capsule, handler: inv.Handler, topic: inv.Envelope.Topic,
	}
	ctx = context.WithValue(ctx, invocationKey{}, c)
	return dispatch.WithTrace(ctx, ipc.TraceContext{TraceID: parent.TraceID, SpanID: c.id, Flags: parent.Flags})
}

// Invoked completes the call's span with its end and verdict (recorded when
// not the common continue), and queues it to be made.
func (t *Tracer) Invoked(ctx context.Context, inv dispatch.Invocation, took time.Duration, v dispatch.Verdict, err error) {
	c, ok := ctx.Value(invocationKey{}).(*invocation)
	if !ok {
		return
	}
	c.end = c.start.Add(took)
	switch {
	case err != nil:
		c.verdict, c.status, c.desc = "error", codes.Error, err.Error()
	case v.Action == dispatch.Deny:
		c.verdict, c.status, c.desc = "deny", codes.Error, "denied: "+v.Reason
	case v.Action == dispatch.Final:
		c.verdict = "final"
	}
	if !t.defer_ {
		t.makeInvocationSpan(c)
		return
	}
	t.deferred.add(c)
}

// spanContext and traceContext convert between the envelope's plain trace
// context and OpenTelemetry's.
func spanContext(t ipc.TraceContext) trace.SpanContext {
	return trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID(t.TraceID), SpanID: trace.SpanID(t.SpanID), TraceFlags: trace.TraceFlags(t.Flags),
	})
}

func traceContext(sc trace.SpanContext) ipc.TraceContext {
	return ipc.TraceContext{TraceID: sc.TraceID(), SpanID: sc.SpanID(), Flags: byte(sc.TraceFlags())}
}
