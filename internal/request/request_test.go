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
