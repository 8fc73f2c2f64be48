package host

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/manifest"
)

// invocations is a Target handing every call to a channel.
type invocations chan dispatch.Invocation

func (c invocations) Intercept(_ context.Context, inv dispatch.Invocation) (dispatch.Verdict, error) {
	c <- inv
	return dispatch.Verdict{}, nil
}

const followerCapsule = `
[package]
name = "follower"
version = "0.1.0"
[subscribe]
"llm.v1.stream.*" = { wit = "opaque", handler = "on_stream" }
`

// TestALostStreamEventIsNoticedOncePerRequest: a model stream's event
// dropped at the follower's queue is answered by a notice to the follower
// alone — an error event for the same request, from the kernel, at the
// handler that lost it — once per request.
func TestALostStreamEventIsNoticedOncePerRequest(t *testing.T) {
	f := newFixture(t)
	m, diags := manifest.Parse([]byte(followerCapsule), "Capsule.toml", "")
	if err := diags.Err(false); err != nil {
		t.Fatal(err)
	}
	got := make(invocations, 8)
	if err := f.deps.Dispatcher.Register(dispatch.CapsuleACL{ID: m.ID(), Subscribe: m.SubscribePatterns()}, got); err != nil {
		t.Fatal(err)
	}
	c, err := NewCapsule(f.deps, m, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	dropped := func(request string) dispatch.Dropped {
		payload, _ := ipc.LLMStreamEvent{RequestID: request, Event: ipc.StreamEvent{Kind: ipc.StreamTextDelta, Text: "x"}}.MarshalJSON()
		return dispatch.Dropped{Capsule: "follower", Pattern: "llm.v1.stream.*", Handler: "on_stream", Reason: "its queue is full",
			Envelope: &ipc.Envelope{Topic: "llm.v1.stream.local", Payload: payload, SourceID: "provider", Principal: "alice"}, Payload: payload}
	}
	if !c.AnswerDropped(dropped("r1")) {
		t.Fatal("the first lost event of r1 was not noticed")
	}
	if c.AnswerDropped(dropped("r1")) {
		t.Fatal("a second lost event of r1 was noticed again")
	}
	if !c.AnswerDropped(dropped("r2")) {
		t.Fatal("the first lost event of r2 was not noticed")
	}
	for _, want := range []string{"r1", "r2"} {
		select {
		case inv := <-got:
			var ev ipc.LLMStreamEvent
			if err := ev.UnmarshalJSON(ipc.GuestBytes(inv.Payload)); err != nil {
				t.Fatal(err)
			}
			if inv.Envelope.SourceID != ipc.KernelSourceID || inv.Handler != "on_stream" || inv.Principal != "alice" ||
				ev.RequestID != want || ev.Event.Kind != ipc.StreamError || !strings.Contains(ev.Event.Text, "its queue is full") {
				t.Fatalf("notice %+v: %+v", inv, ev)
			}
		case <-time.After(time.Minute):
			t.Fatalf("no notice for %s", want)
		}
	}
}
