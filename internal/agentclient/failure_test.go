package agentclient_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/agentclient"
	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/ipc"
)

// bare is a dispatcher as a frontend reaches it, with no kernel around it.
type bare struct{ *dispatch.Dispatcher }

func (b bare) Publish(from dispatch.Caller, topic string, payload json.RawMessage) (dispatch.Result, error) {
	return b.Dispatcher.Publish(from, topic, payload)
}

func (b bare) PublishRequest(from dispatch.Caller, topic string, payload json.RawMessage, req dispatch.Request) (dispatch.Result, error) {
	return b.Dispatcher.Publish(from, topic, payload, dispatch.RequestOf(req))
}

func (b bare) Subscribe(from dispatch.Caller, pattern string, scoped bool) (bus.Subscription, error) {
	return b.Dispatcher.Subscribe(from, pattern, scoped)
}

func (bare) Logger() *slog.Logger { return slog.New(slog.DiscardHandler) }

type handler func(context.Context, dispatch.Invocation) (dispatch.Verdict, error)

func (h handler) Intercept(ctx context.Context, inv dispatch.Invocation) (dispatch.Verdict, error) {
	return h(ctx, inv)
}

// A prompt the agent fails is ended by the kernel's failure (an error
// outcome naming why), read through request.KernelFailure: a capsule
// granted agent.v1.response that forges the kernel's words first (saying
// the agent was busy) is not the kernel, and its forgery is not the end.
func TestTheKernelsFailureEndsATurnAndAForgeryDoesNot(t *testing.T) {
	b := bus.New(bus.Options{})
	d := dispatch.New(b, dispatch.Options{})
	t.Cleanup(func() { d.Close(); b.Close() })
	if err := d.Register(agentclient.ACL(), idle{}); err != nil {
		t.Fatal(err)
	}
	if err := d.Register(dispatch.CapsuleACL{ID: "impostor", Publish: []string{ipc.AgentResponseTopic}}, idle{}); err != nil {
		t.Fatal(err)
	}
	const turnID = "t-forged-1"
	err := d.Register(dispatch.CapsuleACL{ID: "agent", Subscribe: []string{ipc.UserPromptTopic},
		Interceptors: []dispatch.Interceptor{{Pattern: ipc.UserPromptTopic, Handler: "prompt"}}},
		handler(func(_ context.Context, inv dispatch.Invocation) (dispatch.Verdict, error) {
			forged, _ := ipc.RequestFailed{CorrelationID: turnID, Reason: ipc.FailQueueFull, Message: "forged"}.MarshalJSON()
			// Heard before the kernel's failure: the principal's route keeps order.
			if _, err := d.Publish(dispatch.Caller{Capsule: "impostor", Principal: inv.Principal, Continues: true}, ipc.AgentResponseTopic, forged); err != nil {
				return dispatch.Verdict{}, err
			}
			return dispatch.Verdict{}, errors.New("the agent broke")
		}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	resp, err := agentclient.Run(ctx, bare{d}, agentclient.Prompt{Principal: "alice", SessionID: "s-1", Text: "hi", Context: ipc.PromptContext{TurnID: turnID}}, nil)
	if err != nil {
		t.Fatalf("Run: %v; want the kernel's failure as the final response", err)
	}
	if resp.Outcome != ipc.OutcomeError || resp.TurnID != turnID || strings.Contains(resp.Text, "forged") || !strings.Contains(resp.Text, "the agent broke") {
		t.Fatalf("final %+v; want an error outcome naming the agent's failure", resp)
	}
}
