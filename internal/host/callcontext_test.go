package host

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/ipc"
)

// TestTheCallsContextCarriesWhyItEnded: engines and logs read why a call
// ended with context.Cause on the context Begin returns: a cancel key's
// cause, the capsule's (the parent's) cause, the deadline, or End.
func TestTheCallsContextCarriesWhyItEnded(t *testing.T) {
	f := newFixture(t)
	c := f.capsule(t, homeCapsule)
	stop := errors.New("user pressed stop")
	unloaded := errors.New("capsule unloaded")
	tests := []struct {
		name      string
		run       func(t *testing.T) (*Call, context.Context)
		wantErr   error
		wantCause error
		wantCode  hostapi.Code
	}{
		{"cancel key", func(t *testing.T) (*Call, context.Context) {
			call, ctx := c.Begin(context.Background(), "alice")
			if err := call.SetCancelKey("call_1"); err != nil {
				t.Fatal(err)
			}
			if n := f.deps.Cancels.Cancel(stop, "call_1"); n != 1 {
				t.Fatalf("cancelled %d calls, want 1", n)
			}
			return call, ctx
		}, context.Canceled, stop, hostapi.CodeCancelled},
		{"parent cancelled with a cause", func(t *testing.T) (*Call, context.Context) {
			parent, cancel := context.WithCancelCause(context.Background())
			call, ctx := c.Begin(parent, "alice")
			cancel(unloaded)
			return call, ctx
		}, context.Canceled, unloaded, hostapi.CodeCancelled},
		{"deadline", func(t *testing.T) (*Call, context.Context) {
			parent, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
			t.Cleanup(cancel)
			return c.Begin(parent, "alice")
		}, context.DeadlineExceeded, context.DeadlineExceeded, hostapi.CodeTimeout},
		{"end", func(t *testing.T) (*Call, context.Context) {
			call, ctx := c.Begin(context.Background(), "alice")
			call.End()
			return call, ctx
		}, context.Canceled, context.Canceled, hostapi.CodeCancelled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			call, ctx := tt.run(t)
			defer call.End()
			<-ctx.Done()
			if !errors.Is(ctx.Err(), tt.wantErr) || context.Cause(ctx) != tt.wantCause {
				t.Fatalf("err %v cause %v, want %v and %v", ctx.Err(), context.Cause(ctx), tt.wantErr, tt.wantCause)
			}
			if err := call.Publish("notes.v1.saved", []byte(`{}`)); hostapi.CodeOf(err) != tt.wantCode {
				t.Errorf("publish after the call ended: %v, want code %v", err, tt.wantCode)
			}
		})
	}
	// A cancel key names the call only while the call is open.
	call, ctx := c.Begin(context.Background(), "alice")
	if err := call.SetCancelKey("call_2"); err != nil {
		t.Fatal(err)
	}
	call.End()
	if n := f.deps.Cancels.Cancel(stop, "call_2"); n != 0 {
		t.Errorf("a cancel key outlived its call: %d cancelled", n)
	}
	if context.Cause(ctx) != context.Canceled {
		t.Errorf("cause %v after End, want context.Canceled", context.Cause(ctx))
	}
}

// TestRegistrationsAfterTheCallFailedOrEndedAreRefused: a failure reply or
// a cancel key registered when it can no longer work is an error the
// handler sees, not a silent no-op (nor a cancel key left in the registry
// for good).
func TestRegistrationsAfterTheCallFailedOrEndedAreRefused(t *testing.T) {
	f := newFixture(t)
	c := f.capsule(t, homeCapsule)
	tests := []struct {
		name                string
		end                 func(call *Call)
		failureReply, onKey hostapi.Code
	}{
		// Fail has run: a failure reply would never go out.
		{"after Fail", func(call *Call) { call.Fail(errors.New("trapped")) }, hostapi.CodeClosed, hostapi.CodeOK},
		{"after End", func(call *Call) { call.End() }, hostapi.CodeClosed, hostapi.CodeCancelled},
		// Cancelled: the engine will still call Fail, so a failure reply
		// may still be worded; a cancel key can no longer act.
		{"after a cancel", func(call *Call) {
			if err := call.SetCancelKey("k0"); err != nil {
				t.Fatal(err)
			}
			f.deps.Cancels.Cancel(errors.New("stop"), "k0")
		}, hostapi.CodeOK, hostapi.CodeCancelled},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			call, _ := c.Begin(context.Background(), "alice")
			defer call.End()
			tt.end(call)
			if err := call.SetFailureReply("notes.v1.saved", []byte(`{}`)); hostapi.CodeOf(err) != tt.failureReply {
				t.Errorf("SetFailureReply: %v, want code %v", err, tt.failureReply)
			}
			key := fmt.Sprintf("late_%d", i)
			err := call.SetCancelKey(key)
			if hostapi.CodeOf(err) != tt.onKey {
				t.Errorf("SetCancelKey: %v, want code %v", err, tt.onKey)
			}
			want := 0
			if tt.onKey == hostapi.CodeOK {
				want = 1
			}
			if n := f.deps.Cancels.Cancel(errors.New("stop"), key); n != want {
				t.Errorf("cancel key %s names %d calls, want %d", key, n, want)
			}
		})
	}
}

// A cancel request stops only the requester's own calls: a call id is not a
// secret, and bob naming alice's call must not stop it.
func TestCancelForStopsOnlyThePrincipalsOwnCalls(t *testing.T) {
	f := newFixture(t)
	c := f.capsule(t, homeCapsule)
	alice, actx := c.Begin(context.Background(), "alice")
	defer alice.End()
	if err := alice.SetCancelKey("call_shared"); err != nil {
		t.Fatal(err)
	}
	def, dctx := c.Begin(context.Background(), "")
	defer def.End()
	if err := def.SetCancelKey("call_shared"); err != nil {
		t.Fatal(err)
	}
	stop := errors.New("stop")
	if n := f.deps.Cancels.CancelFor("bob", stop, "call_shared"); n != 0 || actx.Err() != nil || dctx.Err() != nil {
		t.Fatalf("bob's cancel stopped %d calls (alice's: %v, default's: %v)", n, actx.Err(), dctx.Err())
	}
	if n := f.deps.Cancels.CancelFor("", stop, "call_shared"); n != 1 || dctx.Err() == nil || actx.Err() != nil {
		t.Fatalf("a default-principal cancel stopped %d calls (alice's: %v, default's: %v)", n, actx.Err(), dctx.Err())
	}
	if n := f.deps.Cancels.CancelFor("alice", stop, "call_shared"); n != 1 || context.Cause(actx) != stop {
		t.Fatalf("alice's cancel stopped %d calls, cause %v", n, context.Cause(actx))
	}
}

// A cancel that overtakes the call it names (the request still queued when
// the cancel arrives) stops the call as it registers its key; an old
// cancel, or another principal's, does not.
func TestACancelThatArrivesFirstStillStopsTheCall(t *testing.T) {
	f := newFixture(t)
	c := f.capsule(t, homeCapsule)
	now := time.Unix(1000, 0)
	f.deps.Cancels.now = func() time.Time { return now }
	stop := errors.New("stop")
	f.deps.Cancels.CancelFor("alice", stop, "call_early")

	bob, bctx := c.Begin(context.Background(), "bob")
	defer bob.End()
	if err := bob.SetCancelKey("call_early"); err != nil {
		t.Fatal(err)
	}
	if bctx.Err() != nil {
		t.Fatal("alice's cancel stopped bob's call of the same key")
	}
	alice, actx := c.Begin(context.Background(), "alice")
	defer alice.End()
	if err := alice.SetCancelKey("call_early"); err != nil {
		t.Fatal(err)
	}
	if context.Cause(actx) != stop {
		t.Fatalf("a call cancelled before it registered runs on (cause %v)", context.Cause(actx))
	}

	f.deps.Cancels.CancelFor("alice", stop, "call_old")
	now = now.Add(2 * earlyFor)
	late, lctx := c.Begin(context.Background(), "alice")
	defer late.End()
	if err := late.SetCancelKey("call_old"); err != nil {
		t.Fatal(err)
	}
	if lctx.Err() != nil {
		t.Fatal("a cancel older than earlyFor stopped a new call")
	}
}

// A tool call cancelled through its key answers the request it serves
// that it was cancelled (the kernel's failure, reason cancelled); one that
// ends otherwise (the call's end, as at an unload; its deadline) answers
// with its registered failure reply, in the capsule's own wording, as the
// request's reply.
func TestACancelledToolsFailureReplySaysCancelled(t *testing.T) {
	const toolCapsule = `
[package]
name = "tooly"
version = "0.1.0"
[subscribe]
"tool.v1.execute.x" = { wit = "opaque", handler = "tool_execute_x" }
[publish]
"tool.v1.execute.x.result" = "opaque"
`
	f := newFixture(t)
	c := f.capsule(t, toolCapsule)
	if err := f.deps.Dispatcher.Register(dispatch.CapsuleACL{ID: "watcher", Publish: []string{"tool.v1.execute.x"}, Subscribe: []string{"tool.v1.execute.x.result", "tool.v1.execute.x"}}, nopTarget{}); err != nil {
		t.Fatal(err)
	}
	watcher := dispatch.Caller{Capsule: "watcher", Principal: "default"}
	sub, err := f.deps.Dispatcher.Subscribe(watcher, "tool.v1.execute.x.result", false)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	// The request's route: something takes it, so it waits for an answer.
	asked, err := f.deps.Dispatcher.Subscribe(watcher, "tool.v1.execute.x", false)
	if err != nil {
		t.Fatal(err)
	}
	defer asked.Close()
	own := `{"call_id":"k","result":{"call_id":"k","content":"tool x failed: the capsule trapped","is_error":true}}`
	cases := []struct {
		name string
		end  func(call *Call, ctx context.Context)
		want string
	}{
		{"cancelled by its key", func(*Call, context.Context) {
			f.deps.Cancels.CancelFor("", errors.New("stop"), "k-cancelled by its key")
		}, "the tool call was cancelled before it answered (stop)"},
		{"ended as at an unload", func(call *Call, _ context.Context) { call.End() }, "tool x failed: the capsule trapped"},
		{"past its deadline", func(_ *Call, ctx context.Context) { <-ctx.Done() }, "tool x failed: the capsule trapped"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			parent, cancel := context.WithCancel(context.Background())
			defer cancel()
			if strings.HasPrefix(tc.name, "past") {
				parent, cancel = context.WithTimeout(parent, time.Millisecond)
				defer cancel()
			}
			// The call serves the watcher's request, as a dispatched call
			// would.
			req := dispatch.Request{ReplyTo: "tool.v1.execute.x.result", CorrelationID: "k"}
			if _, err := f.deps.Dispatcher.Publish(watcher, "tool.v1.execute.x", []byte(`{}`), dispatch.RequestOf(req)); err != nil {
				t.Fatal(err)
			}
			served := &ipc.Envelope{Principal: "default"}
			served.SetRequest(req.ReplyTo, req.CorrelationID, 0)
			call, ctx := c.Begin(dispatch.WithRequest(parent, served), "default")
			defer call.End()
			if err := call.SetFailureReply("tool.v1.execute.x.result", []byte(own)); err != nil {
				t.Fatal(err)
			}
			// A key of its own: a cancelled key is remembered, and would
			// stop the next case's call as it registers.
			if err := call.SetCancelKey("k-" + tc.name); err != nil {
				t.Fatal(err)
			}
			tc.end(call, ctx)
			<-ctx.Done()
			call.Fail(context.Cause(ctx))
			wait, done := context.WithTimeout(context.Background(), testWait)
			defer done()
			d, err := sub.Recv(wait)
			if err != nil {
				t.Fatal(err)
			}
			var res ipc.ToolExecuteResult
			if err := res.UnmarshalJSON(ipc.GuestBytes(d.Envelope.Payload)); err != nil {
				t.Fatal(err)
			}
			if !res.Result.IsError || !strings.HasPrefix(res.Result.Content, tc.want) || !d.Envelope.IsReply() || d.Envelope.CorrelationID() != "k" {
				t.Fatalf("failure reply %+v (reply %v), want it to begin %q", res.Result, d.Envelope.IsReply(), tc.want)
			}
			if f.deps.Dispatcher.Pending() != 0 {
				t.Fatal("the request still waits: it was not answered")
			}
		})
	}
}
