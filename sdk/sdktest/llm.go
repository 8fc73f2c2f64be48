package sdktest

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/ipc"
)

// llmClientID is the frontend identity Generate publishes and listens
// under, as an orchestrator would.
const llmClientID = "sdktest-llm-client"

// llmClientACL lets the test frontend ask providers for generations and
// descriptions and hear their streams and answers, and nothing else.
func llmClientACL() dispatch.CapsuleACL {
	return dispatch.CapsuleACL{
		ID:        llmClientID,
		Publish:   []string{"llm.v1.request.*"},
		Subscribe: []string{"llm.v1.stream.*", "llm.v1.response.*"},
	}
}

// DescribeLLM publishes {} on llm.v1.request.describe as a model registry
// does and returns the first answer on llm.v1.response.describe (its JSON,
// {"providers": [...]}), failing the test if none comes within k.Timeout.
func (k *Kernel) DescribeLLM() json.RawMessage {
	k.t.Helper()
	return k.DescribeLLMWith([]byte(`{}`))
}

// DescribeLLMWith is DescribeLLM with payload as the request (the
// registry's {"refresh":true} when a person asked for the list).
func (k *Kernel) DescribeLLMWith(payload []byte) json.RawMessage {
	k.t.Helper()
	sub, err := k.llmAsk(ipc.LLMResponseDescribeTopic, ipc.LLMRequestDescribeTopic, payload)
	if err != nil {
		k.t.Fatalf("sdktest: describe providers: %v", err)
	}
	defer sub.Close()
	ctx, cancel := context.WithTimeout(context.Background(), k.Timeout)
	defer cancel()
	d, err := sub.Recv(ctx)
	if err != nil {
		k.t.Fatalf("sdktest: describe providers: no answer: %v", err)
	}
	return ipc.GuestBytes(d.Envelope.Payload)
}

// llmAsk subscribes to listen (before publishing, so no answer is missed)
// and publishes payload on topic as the test frontend, which some capsule
// must intercept. The caller closes the route.
func (k *Kernel) llmAsk(listen, topic string, payload []byte) (*bus.Route, error) {
	f := k.k.Frontend()
	caller := dispatch.Caller{Capsule: llmClientID, Principal: ipc.DefaultPrincipal}
	sub, err := f.Dispatcher.Subscribe(caller, listen, true)
	if err != nil {
		return nil, err
	}
	res, err := f.Publish(caller, topic, payload)
	if err == nil && res.Interceptors == 0 {
		err = fmt.Errorf("no capsule handles %s", topic)
	}
	if err != nil {
		sub.Close()
		return nil, err
	}
	return sub, nil
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
	payload, err := req.MarshalJSON()
	if err != nil {
		return nil, err
	}
	sub, err := k.llmAsk(ipc.LLMStreamTopic(provider), ipc.LLMGenerateTopic(provider), payload)
	if err != nil {
		return nil, err
	}
	defer sub.Close()
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
