package sdktest

import (
	"context"
	"fmt"

	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/ipc"
)

// llmClientID is the frontend identity Generate publishes and listens
// under, as an orchestrator would.
const llmClientID = "sdktest-llm-client"

// llmClientACL lets the test frontend ask any provider for a generation
// and hear any provider's stream, and nothing else.
func llmClientACL() dispatch.CapsuleACL {
	return dispatch.CapsuleACL{
		ID:        llmClientID,
		Publish:   []string{"llm.v1.request.generate.*"},
		Subscribe: []string{"llm.v1.stream.*"},
	}
}

// Generate asks provider for a generation as an orchestrator does
// (spec/capsules-cli.md §6.1): it publishes req on
// llm.v1.request.generate.<provider> as the default principal and returns
// the events of llm.v1.stream.<provider> that carry req's request_id, in
// order, up to and including the first Done or Error. It fails the test if
// the stream is not ended within k.Timeout or an event does not decode.
func (k *Kernel) Generate(provider string, req ipc.LLMRequest) []ipc.StreamEvent {
	k.t.Helper()
	events, err := k.generate(provider, req)
	if err != nil {
		k.t.Fatalf("sdktest: generate on %s: %v (events so far: %v)", provider, err, events)
	}
	return events
}

func (k *Kernel) generate(provider string, req ipc.LLMRequest) ([]ipc.StreamEvent, error) {
	f := k.k.Frontend()
	caller := dispatch.Caller{Capsule: llmClientID, Principal: ipc.DefaultPrincipal}
	sub, err := f.Subscribe(caller, ipc.LLMStreamTopic(provider), true)
	if err != nil {
		return nil, err
	}
	defer sub.Close()
	payload, err := req.MarshalJSON()
	if err != nil {
		return nil, err
	}
	res, err := f.Publish(caller, ipc.LLMGenerateTopic(provider), payload)
	if err != nil {
		return nil, err
	}
	if res.Interceptors == 0 {
		return nil, fmt.Errorf("no capsule handles %s", ipc.LLMGenerateTopic(provider))
	}
	ctx, cancel := context.WithTimeout(context.Background(), k.Timeout)
	defer cancel()
	var events []ipc.StreamEvent
	for {
		d, err := sub.Recv(ctx)
		if err != nil {
			return events, fmt.Errorf("stream not ended: %w", err)
		}
		var ev ipc.LLMStreamEvent
		if err := ev.UnmarshalJSON(ipc.GuestBytes(d.Envelope.Payload)); err != nil {
			return events, fmt.Errorf("a stream event that does not decode: %w", err)
		}
		if ev.RequestID != req.RequestID {
			continue
		}
		events = append(events, ev.Event)
		if ev.Event.Kind == ipc.StreamDone || ev.Event.Kind == ipc.StreamError {
			return events, nil
		}
	}
}
