package request

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/ipc"
)

// kernel is a dispatcher as a frontend reaches it.
type kernel struct{ *dispatch.Dispatcher }

func (k kernel) PublishRequest(from dispatch.Caller, topic string, payload json.RawMessage, req dispatch.Request) (dispatch.Result, error) {
	return k.Dispatcher.Publish(from, topic, payload, dispatch.RequestOf(req))
}

func (k kernel) Subscribe(from dispatch.Caller, pattern string, scoped bool) (bus.Subscription, error) {
	r, err := k.Dispatcher.Subscribe(from, pattern, scoped)
	if err != nil {
		return nil, err
	}
	return r, nil
}

type answer func(d *dispatch.Dispatcher, inv dispatch.Invocation) (dispatch.Verdict, error)

func (a answer) Intercept(_ context.Context, inv dispatch.Invocation) (dispatch.Verdict, error) {
	return a(nil, inv)
}

// setup registers a client that may ask svc.v1.ask and hear svc.v1.answer,
// and a service answering with serve.
func setup(t *testing.T, serve func(d *dispatch.Dispatcher, inv dispatch.Invocation) (dispatch.Verdict, error)) (kernel, dispatch.Caller) {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	b := bus.New(bus.Options{Logger: log})
	d := dispatch.New(b, dispatch.Options{Logger: log})
	t.Cleanup(func() { d.Close(); b.Close() })
	if err := d.Register(dispatch.CapsuleACL{ID: "client", Publish: []string{"svc.v1.ask"}, Subscribe: []string{"svc.v1.answer"}}, answer(func(*dispatch.Dispatcher, dispatch.Invocation) (dispatch.Verdict, error) {
		return dispatch.Verdict{}, nil
	})); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"svc", "impostor"} {
		id := id
		err := d.Register(dispatch.CapsuleACL{ID: id, Publish: []string{"svc.v1.answer"}, Subscribe: []string{"svc.v1.ask"},
			Interceptors: []dispatch.Interceptor{{Pattern: "svc.v1.ask", Handler: "h"}}},
			answer(func(_ *dispatch.Dispatcher, inv dispatch.Invocation) (dispatch.Verdict, error) {
				if id == "impostor" {
					_, err := d.Publish(dispatch.Caller{Capsule: id, Principal: inv.Principal, Continues: true}, "svc.v1.answer", json.RawMessage(`{"from":"impostor"}`), dispatch.ReplyOf(inv.Envelope.CorrelationID()))
					return dispatch.Verdict{}, err
				}
				return serve(d, inv)
			}))
		if err != nil {
			t.Fatal(err)
		}
	}
	return kernel{d}, dispatch.Caller{Capsule: "client", Principal: "alice"}
}

func TestAskTakesTheHandlersAnswerOnly(t *testing.T) {
	k, caller := setup(t, func(d *dispatch.Dispatcher, inv dispatch.Invocation) (dispatch.Verdict, error) {
		_, err := d.Publish(dispatch.Caller{Capsule: "svc", Principal: inv.Principal, Continues: true}, "svc.v1.answer", json.RawMessage(`{"from":"svc"}`), dispatch.ReplyOf(inv.Envelope.CorrelationID()))
		return dispatch.Verdict{}, err
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got, err := Ask(ctx, k, caller, "svc.v1.ask", json.RawMessage(`{}`), "svc.v1.answer", NewID("c-"), func(source string) bool { return source == "svc" })
	if err != nil || string(got) != `{"from":"svc"}` {
		t.Fatalf("Ask = %s, %v; want svc's answer", got, err)
	}
}

func TestAskReadsTheKernelsFailure(t *testing.T) {
	k, caller := setup(t, func(*dispatch.Dispatcher, dispatch.Invocation) (dispatch.Verdict, error) {
		return dispatch.Verdict{}, errors.New("the service broke")
	})
	k.Unregister("impostor") // svc alone: its failure leaves the request unanswered
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := Ask(ctx, k, caller, "svc.v1.ask", json.RawMessage(`{}`), "svc.v1.answer", "c-1", func(source string) bool { return source == "svc" })
	f, ok := AsFailed(err)
	if !ok {
		t.Fatalf("err = %v, want the kernel's failure", err)
	}
	if f.CorrelationID != "c-1" || f.Reason != ipc.FailHandler || !strings.Contains(f.Message, "the service broke") {
		t.Fatalf("failure %+v", f.RequestFailed)
	}
}

func TestAskWithNobodyToAnswer(t *testing.T) {
	k, caller := setup(t, nil)
	k.Unregister("svc")
	k.Unregister("impostor")
	_, err := Ask(context.Background(), k, caller, "svc.v1.ask", json.RawMessage(`{}`), "svc.v1.answer", "c-2", nil)
	if f, ok := AsFailed(err); !ok || f.Reason != ipc.FailNoResponders || !strings.Contains(err.Error(), "svc.v1.ask") {
		t.Fatalf("err = %v, want no_responders naming the topic", err)
	}
}

func TestNewID(t *testing.T) {
	a, b := NewID("t-"), NewID("t-")
	if a == b || !strings.HasPrefix(a, "t-") || len(a) != 2+32 || ipc.ValidateCorrelationID(a) != nil {
		t.Fatalf("NewID: %q, %q", a, b)
	}
}

// One subscription carries the answers of requests made one after another
// (as toolclient's does): Await for the second skips the kernel's failure
// of the first, already queued on it, and takes the second's answer.
func TestAwaitSkipsAnotherRequestsFailure(t *testing.T) {
	k, caller := setup(t, func(d *dispatch.Dispatcher, inv dispatch.Invocation) (dispatch.Verdict, error) {
		if strings.Contains(string(inv.Envelope.Payload), "fail") {
			return dispatch.Verdict{}, errors.New("asked to fail")
		}
		_, err := d.Publish(dispatch.Caller{Capsule: "svc", Principal: inv.Principal, Continues: true}, "svc.v1.answer", json.RawMessage(`{"from":"svc"}`), dispatch.ReplyOf(inv.Envelope.CorrelationID()))
		return dispatch.Verdict{}, err
	})
	k.Unregister("impostor")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	long, err := k.Subscribe(caller, "svc.v1.answer", true)
	if err != nil {
		t.Fatal(err)
	}
	defer long.Close()
	probe, err := k.Subscribe(caller, "svc.v1.answer", true)
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close()
	fromSvc := func(d bus.Delivery) (string, bool) {
		return string(ipc.GuestBytes(d.Envelope.Payload)), d.Envelope.SourceID == "svc"
	}
	if err := Send(k, caller, "svc.v1.ask", json.RawMessage(`{"fail":true}`), "svc.v1.answer", "first", 0); err != nil {
		t.Fatal(err)
	}
	// Once probe has the first request's failure, long has it too.
	if _, err := Await(ctx, probe, "first", fromSvc); err == nil {
		t.Fatal("the first request was answered; want the kernel's failure")
	} else if f, ok := AsFailed(err); !ok || f.CorrelationID != "first" {
		t.Fatalf("first: err = %v, want its failure", err)
	}
	if err := Send(k, caller, "svc.v1.ask", json.RawMessage(`{}`), "svc.v1.answer", "second", 0); err != nil {
		t.Fatal(err)
	}
	got, err := Await(ctx, long, "second", fromSvc)
	if err != nil || got != `{"from":"svc"}` {
		t.Fatalf("second: Await = %q, %v; want svc's answer past the first's failure", got, err)
	}
}

// Await returns the subscription's error when ctx ends, so a caller can
// tell its own give-up (ctx.Err) from the kernel's failure.
func TestAwaitEndsWithItsContext(t *testing.T) {
	k, caller := setup(t, nil)
	sub, err := k.Subscribe(caller, "svc.v1.answer", true)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = Await(ctx, sub, "c", func(bus.Delivery) (int, bool) { return 1, true })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if _, ok := AsFailed(err); ok {
		t.Fatal("a caller's give-up read as the kernel's failure")
	}
}

// Only the kernel's own envelope is its failure: a capsule repeating a
// failure's words (to end a request it does not serve, or with a reason of
// its choosing) is not the kernel.
func TestKernelFailureTrustsOnlyTheKernel(t *testing.T) {
	failure, err := ipc.RequestFailed{CorrelationID: "c-1", Reason: ipc.FailRefused, Message: "no"}.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		source  string
		payload string
		want    bool
	}{
		{"the kernel's failure", ipc.KernelSourceID, string(failure), true},
		{"a capsule forging it", "impostor", string(failure), false},
		{"a capsule named like the kernel's tag", "request_failed", string(failure), false},
		{"the empty source", "", string(failure), false},
		{"the kernel, not a failure", ipc.KernelSourceID, `{"type":"custom","data":{"correlation_id":"c-1"}}`, false},
		{"the kernel, a failure's fields untagged", ipc.KernelSourceID, `{"correlation_id":"c-1","reason":"refused","message":"no"}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, ok := KernelFailure(&ipc.Envelope{Topic: "svc.v1.answer", SourceID: tc.source, Payload: json.RawMessage(tc.payload)})
			if ok != tc.want {
				t.Fatalf("KernelFailure = %+v, %v; want %v", f, ok, tc.want)
			}
			if ok && (f.CorrelationID != "c-1" || f.Reason != ipc.FailRefused) {
				t.Fatalf("failure %+v", f)
			}
		})
	}
}
