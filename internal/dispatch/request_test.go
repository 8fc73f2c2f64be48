package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/ipc"
)

// requester registers a capsule "asker" that may publish svc.v1.* and
// subscribe to svc.v1.answer, and opens its route on the reply address.
func requester(t *testing.T, d *Dispatcher) (Caller, *bus.Route) {
	t.Helper()
	register(t, d, CapsuleACL{ID: "asker", Publish: []string{"svc.v1.*"}, Subscribe: []string{"svc.v1.answer"}}, continueTarget)
	from := Caller{Capsule: "asker", Principal: "alice"}
	r, err := d.Subscribe(from, "svc.v1.answer", false)
	if err != nil {
		t.Fatal(err)
	}
	return from, r
}

// failureOn reads the next envelope of r and decodes it as the kernel's
// failure answer.
func failureOn(t *testing.T, r *bus.Route) (ipc.RequestFailed, *ipc.Envelope) {
	t.Helper()
	dl := recvOne(t, r)
	f, ok := ipc.AsRequestFailed(dl.Envelope.Payload)
	if !ok {
		t.Fatalf("got %s from %s, want a request_failed", dl.Envelope.Payload, dl.Envelope.SourceID)
	}
	if dl.Envelope.SourceID != ipc.KernelSourceID || !dl.Envelope.IsReply() || dl.Envelope.CorrelationID() != f.CorrelationID {
		t.Fatalf("failure envelope: source %s reply %v corr %q", dl.Envelope.SourceID, dl.Envelope.IsReply(), dl.Envelope.CorrelationID())
	}
	return f, dl.Envelope
}

func noMore(t *testing.T, d *Dispatcher, r *bus.Route) {
	t.Helper()
	settle(t, d)
	if dl, ok := r.TryRecv(); ok {
		t.Fatalf("a second answer came: %s", dl.Envelope.Payload)
	}
}

func req(corr string) Request {
	return Request{ReplyTo: "svc.v1.answer", CorrelationID: corr}
}

func TestARequestNobodyTakesIsAnsweredAtOnce(t *testing.T) {
	d, _ := newTestDispatcher(t, Options{})
	from, r := requester(t, d)
	if _, err := d.Publish(from, "svc.v1.ask", json.RawMessage(`{}`), RequestOf(req("c1"))); err != nil {
		t.Fatal(err)
	}
	f, e := failureOn(t, r)
	if f.Reason != ipc.FailNoResponders || f.CorrelationID != "c1" || e.Principal != "alice" {
		t.Fatalf("failure %+v for %s", f, e.Principal)
	}
	if d.Pending() != 0 || d.Stats().RequestsFailed != 1 {
		t.Fatalf("pending %d, stats %+v", d.Pending(), d.Stats())
	}
}

// TestARequestIsAnsweredOnceWhateverHappens is the table of ways a request
// ends: each gets exactly one answer, the handler's or the kernel's.
func TestARequestIsAnsweredOnceWhateverHappens(t *testing.T) {
	for _, tt := range []struct {
		name   string
		answer func(d *Dispatcher, inv Invocation) (Verdict, error)
		want   ipc.FailureReason // "" : the handler's own answer
	}{
		{"the handler replies", func(d *Dispatcher, inv Invocation) (Verdict, error) {
			_, err := d.Publish(Caller{Capsule: "svc", Principal: inv.Principal, Continues: true}, inv.Envelope.ReplyTo(), json.RawMessage(`{"ok":true}`), ReplyOf(inv.Envelope.CorrelationID()))
			return Verdict{Action: Final}, err
		}, ""},
		{"the handler replies then fails", func(d *Dispatcher, inv Invocation) (Verdict, error) {
			_, err := d.Publish(Caller{Capsule: "svc", Principal: inv.Principal, Continues: true}, inv.Envelope.ReplyTo(), json.RawMessage(`{"ok":true}`), ReplyOf(inv.Envelope.CorrelationID()))
			if err != nil {
				return Verdict{}, err
			}
			return Verdict{}, errors.New("trap after the answer")
		}, ""},
		{"the handler fails", func(*Dispatcher, Invocation) (Verdict, error) {
			return Verdict{}, errors.New("wasm trap: unreachable")
		}, ipc.FailHandler},
		{"the handler panics", func(*Dispatcher, Invocation) (Verdict, error) {
			panic("boom")
		}, ipc.FailHandler},
		{"the handler refuses", func(*Dispatcher, Invocation) (Verdict, error) {
			return Verdict{Action: Deny, Reason: "not today"}, nil
		}, ipc.FailRefused},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d, _ := newTestDispatcher(t, Options{})
			from, r := requester(t, d)
			register(t, d, CapsuleACL{ID: "svc", Publish: []string{"svc.v1.answer"}, Subscribe: []string{"svc.v1.ask"},
				Interceptors: []Interceptor{{Pattern: "svc.v1.ask", Handler: "h"}}},
				targetFunc(func(_ context.Context, inv Invocation) (Verdict, error) { return tt.answer(d, inv) }))
			if _, err := d.Publish(from, "svc.v1.ask", json.RawMessage(`{}`), RequestOf(req("c1"))); err != nil {
				t.Fatal(err)
			}
			dl := recvOne(t, r)
			f, failed := ipc.AsRequestFailed(dl.Envelope.Payload)
			switch {
			case tt.want == "" && failed:
				t.Fatalf("the kernel answered %+v, want the handler's answer", f)
			case tt.want != "" && (!failed || f.Reason != tt.want):
				t.Fatalf("got %s, want a %s failure", dl.Envelope.Payload, tt.want)
			}
			if dl.Envelope.CorrelationID() != "c1" {
				t.Fatalf("answer correlation %q", dl.Envelope.CorrelationID())
			}
			noMore(t, d, r)
			if d.Pending() != 0 {
				t.Fatalf("%d requests still pending", d.Pending())
			}
		})
	}
}

func TestARequestDroppedAtAFullQueueIsAnswered(t *testing.T) {
	d, _ := newTestDispatcher(t, Options{QueueDepth: 1})
	from, r := requester(t, d)
	g := newGate()
	register(t, d, CapsuleACL{ID: "svc", Subscribe: []string{"svc.v1.ask"}, Interceptors: []Interceptor{{Pattern: "svc.v1.ask", Handler: "h"}}}, g)
	for i := range 3 {
		if _, err := d.Publish(from, "svc.v1.ask", json.RawMessage(`{}`), RequestOf(req(fmt.Sprint("c", i)))); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			g.waitStarted(t) // c0 runs, c1 waits in the queue, c2 is dropped
		}
	}
	f, _ := failureOn(t, r)
	if f.Reason != ipc.FailQueueFull || f.CorrelationID != "c2" || !strings.Contains(f.Message, "queue is full") {
		t.Fatalf("failure %+v", f)
	}
	// Unloading the capsule discards c1 (queued) and cancels c0: c1 is
	// answered as unloaded; c0's handler returns the context's error.
	go d.Unregister("svc")
	got := map[string]ipc.FailureReason{}
	for range 2 {
		f, _ := failureOn(t, r)
		got[f.CorrelationID] = f.Reason
	}
	if got["c1"] != ipc.FailUnloaded || got["c0"] != ipc.FailHandler {
		t.Fatalf("answers after the unload: %v", got)
	}
}

func TestARequestNobodyAnswersTimesOut(t *testing.T) {
	d, _ := newTestDispatcher(t, Options{})
	from, r := requester(t, d)
	register(t, d, CapsuleACL{ID: "svc", Subscribe: []string{"svc.v1.ask"}, Interceptors: []Interceptor{{Pattern: "svc.v1.ask", Handler: "h"}}},
		targetFunc(func(context.Context, Invocation) (Verdict, error) { return Verdict{Action: Final}, nil })) // takes it, never answers
	rq := req("slow")
	rq.Timeout = 50 * time.Millisecond
	if _, err := d.Publish(from, "svc.v1.ask", json.RawMessage(`{}`), RequestOf(rq)); err != nil {
		t.Fatal(err)
	}
	if f, _ := failureOn(t, r); f.Reason != ipc.FailTimeout || !strings.Contains(f.Message, "50ms") {
		t.Fatalf("failure %+v", f)
	}
	noMore(t, d, r)
}

func TestARequestPastItsDeadlineIsNotInvoked(t *testing.T) {
	d, _ := newTestDispatcher(t, Options{})
	register(t, d, CapsuleACL{ID: "svc", Subscribe: []string{"svc.v1.ask"}, Interceptors: []Interceptor{{Pattern: "svc.v1.ask", Handler: "h"}}},
		targetFunc(func(context.Context, Invocation) (Verdict, error) {
			t.Error("a request past its deadline was invoked")
			return Verdict{}, nil
		}))
	e := &ipc.Envelope{Topic: "svc.v1.ask", Payload: json.RawMessage(`{}`), SourceID: "remote", Principal: "alice"}
	e.SetRequest("svc.v1.answer", "old", time.Now().Add(-time.Second).UnixNano())
	d.dispatch(e, d.interceptors.Load().match(e.Topic), nil, false)
	settle(t, d)
	if s := d.Stats(); s.Expired != 1 || s.Invocations != 1 {
		t.Fatalf("stats %+v", s)
	}
}

// TestARequestCannotAimTheKernelElsewhere: the kernel answers only where
// the requester may listen, and bad request fields are refused at publish.
func TestARequestCannotAimTheKernelElsewhere(t *testing.T) {
	d, _ := newTestDispatcher(t, Options{})
	from, _ := requester(t, d)
	for _, tt := range []struct {
		name string
		req  Request
		want error
	}{
		{"a reply address it may neither hear nor speak on", Request{ReplyTo: "tool.v1.execute.result", CorrelationID: "x"}, ErrDenied},
		{"a wildcard reply address", Request{ReplyTo: "svc.v1.*", CorrelationID: "x"}, ipc.ErrInvalidTopic},
		{"no reply address", Request{CorrelationID: "x"}, ipc.ErrInvalidTopic},
		{"an injected segment", Request{ReplyTo: "svc.v1.answer.>", CorrelationID: "x"}, ipc.ErrInvalidTopic},
		{"no correlation id", Request{ReplyTo: "svc.v1.answer"}, ipc.ErrInvalidCorrelationID},
		{"a control character", Request{ReplyTo: "svc.v1.answer", CorrelationID: "a\nb"}, ipc.ErrInvalidCorrelationID},
		{"an oversized id", Request{ReplyTo: "svc.v1.answer", CorrelationID: strings.Repeat("x", ipc.MaxCorrelationID+1)}, ipc.ErrInvalidCorrelationID},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := d.Publish(from, "svc.v1.ask", json.RawMessage(`{}`), RequestOf(tt.req)); !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
	if d.Pending() != 0 {
		t.Fatalf("%d refused requests left pending", d.Pending())
	}
	// The publish ACL still applies to the request's own topic.
	if _, err := d.Publish(from, "other.v1.ask", json.RawMessage(`{}`), RequestOf(req("y"))); !errors.Is(err, ErrDenied) || d.Pending() != 0 {
		t.Fatalf("err = %v, pending %d", err, d.Pending())
	}
}

func TestPendingRequestsAreBounded(t *testing.T) {
	d, _ := newTestDispatcher(t, Options{RateBurst: 1 << 30, RateBytesPerSec: 1 << 30})
	from, _ := requester(t, d)
	register(t, d, CapsuleACL{ID: "svc", Subscribe: []string{"svc.v1.ask"}}, continueTarget)
	if _, err := d.Subscribe(Caller{Capsule: "svc"}, "svc.v1.ask", false); err != nil {
		t.Fatal(err)
	}
	for i := range MaxPendingRequests {
		if _, err := d.Publish(from, "svc.v1.ask", json.RawMessage(`{}`), RequestOf(req(fmt.Sprint(i)))); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	if _, err := d.Publish(from, "svc.v1.ask", json.RawMessage(`{}`), RequestOf(req("one-too-many"))); !errors.Is(err, ErrTooManyRequests) {
		t.Fatalf("err = %v, want ErrTooManyRequests", err)
	}
	d.Close()
	if d.Pending() != 0 {
		t.Fatalf("Close left %d requests pending", d.Pending())
	}
}

// TestALostReplyIsToldOnce: an answer dropped at the requester's own full
// queue is replaced, for that capsule only and past its queue, by one
// failure per correlation id.
func TestALostReplyIsToldOnce(t *testing.T) {
	d, _ := newTestDispatcher(t, Options{QueueDepth: 1})
	g := newGate()
	register(t, d, CapsuleACL{ID: "asker", Publish: []string{"svc.v1.ask"}, Subscribe: []string{"svc.v1.answer"}, Interceptors: []Interceptor{{Pattern: "svc.v1.answer", Handler: "h"}}}, g)
	register(t, d, CapsuleACL{ID: "svc", Publish: []string{"svc.v1.answer"}, Subscribe: []string{"svc.v1.ask"}}, continueTarget)
	if _, err := d.Subscribe(Caller{Capsule: "svc"}, "svc.v1.ask", false); err != nil {
		t.Fatal(err)
	}
	// The stream answers asker's request: only its askers read replies.
	if _, err := d.Publish(Caller{Capsule: "asker", Principal: "alice"}, "svc.v1.ask", json.RawMessage(`{}`), RequestOf(req("stream-1"))); err != nil {
		t.Fatal(err)
	}
	svc := Caller{Capsule: "svc", Principal: "alice", Continues: true}
	reply := func(n int) {
		if _, err := d.Publish(svc, "svc.v1.answer", json.RawMessage(fmt.Sprint(n)), ReplyOf("stream-1")); err != nil {
			t.Fatal(err)
		}
	}
	reply(0)
	g.waitStarted(t)
	// The queue holds ReplyHeadroom times the depth of answers; the ones
	// past that are lost.
	for i := 1; i <= (ReplyHeadroom+1)*1+2; i++ {
		reply(i)
	}
	close(g.release)
	var failures int
	for {
		inv := g.waitStarted(t)
		if f, ok := ipc.AsRequestFailed(inv.Payload); ok {
			failures++
			if f.Reason != ipc.FailReplyLost || f.CorrelationID != "stream-1" || inv.Envelope.SourceID != ipc.KernelSourceID {
				t.Fatalf("notice %+v from %s", f, inv.Envelope.SourceID)
			}
			break
		}
	}
	settle(t, d)
	for len(g.started) > 0 {
		if _, ok := ipc.AsRequestFailed((<-g.started).Payload); ok {
			failures++
		}
	}
	if failures != 1 {
		t.Fatalf("%d lost-answer notices, want 1", failures)
	}
}
