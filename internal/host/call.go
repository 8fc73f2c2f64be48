package host

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/gate"
	"github.com/astrid-go/astrid/internal/store"
	"github.com/astrid-go/astrid/ipc"
)

// Call is the hostapi.Host of one handler call: bound to the capsule, the
// invoking principal and the call's context. It is used by the goroutine
// running the call, or, for a native service (sdk.Capsule.Serve), by the
// service's goroutines at once: its methods are safe for that. End
// releases what the call opened.
type Call struct {
	c         *Capsule
	principal string
	ctx       context.Context
	cancel    context.CancelCauseFunc // ends ctx: the call's cancel key, End
	caller    dispatch.Caller
	kv        *store.KV // opened on first use: most calls touch no KV

	mu      sync.Mutex
	subs    map[hostapi.SubscriptionID]*bus.Route // made on first Subscribe
	nextSub hostapi.SubscriptionID
	failure failureReply // topic empty: none registered
	failed  bool         // Fail has run: a failure reply registered now would never go out
	unbind  []cancelBinding
	ended   bool
	// cancelKey is the last key SetCancelKey bound (the tool call id a
	// tool's call serves), named in its approval questions.
	cancelKey string
	// scopedGate is the gate with the call's scope's workspace, made on
	// first use (scope.go).
	scopedGate *gate.Gate

	waited atomic.Int64 // nanoseconds spent in host methods that wait (methods.go)
	// replyTo and correlation are the request the call serves, if any
	// (dispatch.RequestFrom).
	replyTo, correlation string
	// keyCause is the cause a cancel request naming the call's key gave,
	// so that Fail can tell a cancel by key from an unload or a deadline.
	keyCause atomic.Pointer[error]
}

// cancelByKey ends the call for a cancel request naming its key (Cancels).
func (call *Call) cancelByKey(cause error) {
	if cause == nil {
		cause = ErrCancelled
	}
	call.keyCause.CompareAndSwap(nil, &cause)
	call.cancel(cause)
}

type failureReply struct {
	topic   string
	payload []byte
}

var _ hostapi.Host = (*Call)(nil)

// Begin opens a call for principal. The returned context is cancelled by the
// call's cancel key (context.Cause then names the key) or when End runs, and
// with ctx; engines run the handler under it.
func (c *Capsule) Begin(ctx context.Context, principal string) (*Call, context.Context) {
	cctx, cancel := context.WithCancelCause(ctx)
	call := &Call{
		c:         c,
		principal: principal,
		ctx:       cctx,
		cancel:    cancel,
		// A handler's publishes may be made next by the goroutine that
		// invoked it (dispatch.Runner); the call's waits hand them back.
		// Its publishes continue the work that invoked it: the CPU budget
		// refuses work when it starts, never an answer on its way.
		// Its publishes carry the trace context of the span that
		// invoked it (zero when tracing is off).
		// They stay in the request scope of the event that invoked it.
		caller: dispatch.Caller{Capsule: c.id, Principal: principal, Runner: dispatch.RunnerFrom(ctx), Continues: true, Trace: dispatch.TraceFrom(ctx), Scope: dispatch.ScopeFrom(ctx)},
	}
	call.replyTo, call.correlation = dispatch.RequestFrom(ctx)
	return call, cctx
}

// Fail publishes the call's registered failure reply, if any, on the
// capsule's behalf; engines call it when the handler trapped, timed out or
// was dropped. reason is logged. A call that serves a request and was
// cancelled by its key answers that request as cancelled (the registered
// reply, written before anyone knew, would say less); otherwise the
// dispatcher answers a request the failure leaves unanswered.
func (call *Call) Fail(reason error) {
	if cause := call.keyCause.Load(); cause != nil && context.Cause(call.ctx) == *cause {
		if call.failServed(ipc.FailCancelled, (*cause).Error()) {
			call.mu.Lock()
			call.dropFailureOn(call.replyTo)
			call.mu.Unlock()
		}
	}
	call.mu.Lock()
	f := call.failure
	call.failure, call.failed = failureReply{}, true
	call.mu.Unlock()
	// A call ended because its capsule is unloading (the kernel stopping,
	// a reload) is no failure of the capsule's: noted at debug level.
	level := slog.LevelWarn
	if errors.Is(reason, context.Canceled) && errors.Is(context.Cause(call.ctx), context.Canceled) {
		level = slog.LevelDebug
	}
	call.c.log.Log(context.Background(), level, "call failed", "principal", call.principal, "err", reason, "failure_reply", f.topic != "")
	if f.topic == "" {
		return
	}
	// Fail runs on a timer or after the handler; the reply must not wait for
	// the invoking goroutine, so it goes without the call's Runner.
	from := dispatch.Caller{Capsule: call.caller.Capsule, Principal: call.caller.Principal, Continues: true, Scope: call.caller.Scope}
	// A failure reply registered for the reply address of the request the
	// call serves is that request's answer: it ends the request's wait, so
	// the kernel does not answer it a second time.
	corr := ""
	if call.replyTo != "" && call.replyTo == f.topic {
		corr = call.correlation
	}
	if _, err := call.c.deps.Dispatcher.Publish(from, f.topic, f.payload, dispatch.FailureOf(corr)); err != nil {
		call.c.log.Error("failure reply not published", "topic", f.topic, "err", err)
	}
}

// failServed answers the request the call serves with a failure from the
// kernel, if the call serves one still waiting; it reports whether it did.
func (call *Call) failServed(reason ipc.FailureReason, msg string) bool {
	if call.correlation == "" {
		return false
	}
	e := &ipc.Envelope{Principal: call.caller.Principal, Scope: call.caller.Scope}
	e.SetRequest(call.replyTo, call.correlation, 0)
	return call.c.deps.Dispatcher.FailRequest(e, reason, msg)
}

// dropFailureOn forgets the registered failure reply if it goes to topic:
// the request it stood in for is answered. The caller holds call.mu.
func (call *Call) dropFailureOn(topic string) {
	if call.failure.topic == topic {
		call.failure = failureReply{}
	}
}

// End closes the call's subscriptions and cancel keys. It is idempotent.
func (call *Call) End() {
	call.mu.Lock()
	if call.ended {
		call.mu.Unlock()
		return
	}
	call.ended = true
	subs := call.subs
	call.subs = nil
	unbind := call.unbind
	call.unbind = nil
	call.mu.Unlock()
	for _, r := range subs {
		r.Close()
	}
	for _, b := range unbind {
		call.c.deps.Cancels.unbind(b)
	}
	call.cancel(context.Canceled)
}

// live returns an error once the call has ended or been cancelled.
func (call *Call) live(op string) error {
	if err := context.Cause(call.ctx); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return hostapi.Errorf(hostapi.CodeTimeout, op, "the call's deadline passed")
		}
		return hostapi.Errorf(hostapi.CodeCancelled, op, "the call was cancelled: %v", err)
	}
	return nil
}

// --- Sys ---

// CapsuleID implements hostapi.Sys.
func (call *Call) CapsuleID() string {
	defer call.leave(call.enter(opCapsuleID))
	return call.c.id
}

// Principal implements hostapi.Sys.
func (call *Call) Principal() string {
	defer call.leave(call.enter(opPrincipal))
	return call.principal
}

// Config implements hostapi.Sys.
func (call *Call) Config(key string) (string, bool) {
	defer call.leave(call.enter(opConfig))
	if key == hostapi.ConfinedShellKey {
		return call.c.deps.Sandbox.ConfinedShell(), true
	}
	if key == hostapi.RequestSettingsKey {
		return settingsFingerprint(call.scope()), true
	}
	if v, ok := call.principalValue(key); ok {
		return v, true
	}
	v, ok := call.c.config[key]
	if s := call.scope(); s != nil {
		v, ok = call.scopedConfig(s, key, v, ok)
	}
	if e, declared := call.c.env[key]; !ok && declared && e.Required() {
		return call.onboard(e)
	}
	return v, ok
}

// Log implements hostapi.Sys.
func (call *Call) Log(level hostapi.LogLevel, msg string) {
	defer call.leave(call.enter(opLog))
	call.c.log.Log(call.ctx, slog.Level(level), msg, "principal", call.principal, "source", "capsule")
}

// Now implements hostapi.Sys.
func (call *Call) Now() time.Time {
	defer call.leave(call.enter(opNow))
	return time.Now()
}

// --- Calls ---

// SetFailureReply implements hostapi.Calls. The topic is checked against the
// publish ACL now, so a failure reply can never publish where the capsule
// could not.
func (call *Call) SetFailureReply(topic string, payload []byte) error {
	defer call.leave(call.enter(opSetFailureReply))
	if err := call.c.deps.Dispatcher.CheckPublish(call.caller.Capsule, topic); err != nil {
		return hostapi.Errorf(hostapi.CodeDenied, "set_failure_reply", "%v", err)
	}
	call.mu.Lock()
	defer call.mu.Unlock()
	// Registered after the call failed or ended, it would never be
	// published: the handler must hear so, not believe its caller covered.
	// (A cancelled call may still register one: its engine then calls Fail,
	// and the MCP engine words its reply after the cancel.)
	if call.failed || call.ended {
		return hostapi.Errorf(hostapi.CodeClosed, "set_failure_reply", "the call has already failed or ended: a failure reply would never be sent")
	}
	call.failure = failureReply{topic: topic, payload: append([]byte(nil), payload...)}
	return nil
}

// SetCancelKey implements hostapi.Calls.
func (call *Call) SetCancelKey(key string) error {
	defer call.leave(call.enter(opSetCancelKey))
	if key == "" || len(key) > 256 {
		return hostapi.Errorf(hostapi.CodeInvalid, "set_cancel_key", "a cancel key is 1 to 256 bytes")
	}
	if err := call.live("set_cancel_key"); err != nil {
		return err
	}
	call.mu.Lock()
	defer call.mu.Unlock()
	// After End, nothing would unbind the key: it would stay in the
	// registry for good and name a call that no longer exists.
	if call.ended {
		return hostapi.Errorf(hostapi.CodeClosed, "set_cancel_key", "the call has ended")
	}
	call.unbind = append(call.unbind, call.c.deps.Cancels.register(call.principal, key, call.cancelByKey))
	call.cancelKey = key
	return nil
}

// Waited is the time the call has spent inside host methods that wait
// (methods.go).
func (call *Call) Waited() time.Duration { return time.Duration(call.waited.Load()) }
