package react_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/capsules/registry"
	"github.com/astrid-go/astrid/internal/registryclient"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
	"github.com/astrid-go/astrid/sdk/sdktest"
)

// fixtureProviderManifest is a test-only provider, alpha, that describes
// two models and answers a request with the model it was asked for, so a
// test can tell it was the one asked, and with what.
var fixtureProviderManifest = []byte(`
[package]
name = "test-fixture-alpha"
version = "0.1.0"

[subscribe]
"llm.v1.request.describe" = { wit = "opaque", handler = "describe" }
"llm.v1.request.generate.alpha" = { wit = "opaque", handler = "generate" }

[publish]
"llm.v1.response.describe" = "opaque"
"llm.v1.stream.alpha" = "opaque"
`)

func newFixtureProvider() *sdk.Capsule {
	c := sdk.New("test fixture: provider alpha")
	c.Handle(ipc.LLMRequestDescribeTopic, "describe", func(call *sdk.Call) error {
		var list []map[string]any
		for _, id := range []string{"a1", "a2"} {
			list = append(list, map[string]any{"id": id, "request_topic": ipc.LLMGenerateTopic("alpha"), "stream_topic": ipc.LLMStreamTopic("alpha"), "ready": true})
		}
		return call.PublishJSON(ipc.LLMResponseDescribeTopic, map[string]any{"providers": list})
	})
	c.Handle(ipc.LLMGenerateTopic("alpha"), "generate", func(call *sdk.Call) error {
		var req ipc.LLMRequest
		if err := req.UnmarshalJSON(call.Payload()); err != nil {
			return err
		}
		for _, ev := range []ipc.StreamEvent{{Kind: ipc.StreamTextDelta, Text: "alpha answered with model " + req.Model}, {Kind: ipc.StreamDone}} {
			b, err := ipc.LLMStreamEvent{RequestID: req.RequestID, Event: ev}.MarshalJSON()
			if err != nil {
				return err
			}
			if err := call.Publish(ipc.LLMStreamTopic("alpha"), b); err != nil {
				return err
			}
		}
		return nil
	})
	c.Publishes(ipc.LLMResponseDescribeTopic)
	c.Publishes(ipc.LLMStreamTopic("alpha"))
	return c
}

// fakeRegistryManifest is a test-only registry that misbehaves as its
// [env] mode says: silent never answers, error answers an error, invalid
// names a provider that cannot be one.
var fakeRegistryManifest = []byte(`
[package]
name = "test-fake-registry"
version = "0.1.0"

[subscribe]
"registry.v1.get_active_model" = { wit = "opaque", handler = "get" }

[publish]
"registry.v1.response.*" = "opaque"
`)

func newFakeRegistry() *sdk.Capsule {
	c := sdk.New("test fixture: a registry that misbehaves")
	c.Handle(ipc.RegistryGetActiveModelTopic, "get", func(call *sdk.Call) error {
		var req ipc.RegistryRequest
		if err := call.Decode(&req); err != nil {
			return err
		}
		topic := ipc.RegistryResponseTopic(ipc.RegistryOpGetActiveModel, req.CorrelationID)
		switch mode, _ := call.Config("mode"); mode {
		case "error":
			return call.PublishJSON(topic, ipc.RegistryReply{CorrelationID: req.CorrelationID, Error: "registry: broken on purpose"})
		case "invalid":
			return call.PublishJSON(topic, ipc.RegistryReply{CorrelationID: req.CorrelationID, Chosen: true,
				ActiveModel: &ipc.ModelEntry{ID: "al.pha:a1", Provider: "al.pha", Model: "a1"}})
		}
		return nil
	})
	c.Publishes(ipc.RegistryResponsePattern)
	return c
}

func registryCapsules() []sdktest.Capsule {
	return []sdktest.Capsule{
		{Manifest: registry.Manifest, New: registry.New},
		{Manifest: fixtureProviderManifest, New: newFixtureProvider},
	}
}

func setModel(t *testing.T, k *sdktest.Kernel, principal, id string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), k.Timeout)
	defer cancel()
	if r, err := registryclient.Set(ctx, k.Agent(), principal, id); err != nil || r.Status != "ok" {
		t.Fatalf("set %s for %s: %+v (%v)", id, principal, r, err)
	}
}

// A turn whose prompt names no provider uses its principal's active model
// from the registry (provider and model); another principal's choice is
// not its own; a model in the context goes to the active provider; a
// provider in the context wins over the registry.
func TestTurnUsesTheActiveModel(t *testing.T) {
	k := boot(t, setup{script: helloScript, extra: registryCapsules()})
	// No choice, no hosted provider: the registry's default is replay.
	if r := k.RunPrompt("alice", "s1", "hello", ipc.PromptContext{}); r.Final.Text != "Hi there" {
		t.Fatalf("default turn answered %q, want replay's", r.Final.Text)
	}
	setModel(t, k, "alice", "alpha:a2")
	r := k.RunPrompt("alice", "s2", "hello", ipc.PromptContext{})
	wantFinal(t, r, ipc.OutcomeAnswer, "alpha answered with model a2")
	if r := k.RunPrompt("bob", "s1", "hello", ipc.PromptContext{}); r.Final.Text != "Hi there" {
		t.Fatalf("bob's turn answered %q: alice's choice leaked", r.Final.Text)
	}
	r = k.RunPrompt("alice", "s3", "hello", ipc.PromptContext{Model: "a-custom"})
	wantFinal(t, r, ipc.OutcomeAnswer, "alpha answered with model a-custom")
	if r := k.RunPrompt("alice", "s4", "hello", ipc.PromptContext{Provider: "replay"}); r.Final.Text != "Hi there" {
		t.Fatalf("--provider replay answered %q", r.Final.Text)
	}
	r = k.RunPrompt("alice", "s5", "hello", ipc.PromptContext{Provider: "echo"})
	var e echoed
	if err := json.Unmarshal([]byte(r.Final.Text), &e); err != nil || e.Model != "" {
		t.Fatalf("--provider echo without --model: %q (%v); the active model of another provider must not be sent", r.Final.Text, err)
	}
}

// The operator's [env] provider beats the registry's default but not a
// principal's own choice.
func TestOperatorProviderBeatsTheDefault(t *testing.T) {
	k := boot(t, setup{script: helloScript, react: map[string]string{"provider": "echo", "model": "m-env"}, extra: registryCapsules()})
	r := k.RunPrompt("bob", "s1", "hello", ipc.PromptContext{})
	var e echoed
	if err := json.Unmarshal([]byte(r.Final.Text), &e); err != nil || e.Model != "m-env" {
		t.Fatalf("bob's turn: %q (%v); want the [env] provider echo with model m-env", r.Final.Text, err)
	}
	setModel(t, k, "alice", "alpha:a1")
	wantFinal(t, k.RunPrompt("alice", "s1", "hello", ipc.PromptContext{}), ipc.OutcomeAnswer, "alpha answered with model a1")
}

// A registry that fails, names an impossible provider, or does not answer
// leaves the turn to the [env] provider, with a warning.
func TestRegistryFailureFallsBackToEnv(t *testing.T) {
	for _, mode := range []string{"error", "invalid", "silent"} {
		t.Run(mode, func(t *testing.T) {
			k := boot(t, setup{script: helloScript, react: map[string]string{"provider": "echo"},
				extra: []sdktest.Capsule{{Manifest: fakeRegistryManifest, New: newFakeRegistry, Config: map[string]string{"mode": mode}}}})
			r := k.RunPrompt(ipc.DefaultPrincipal, "s1", "hello", ipc.PromptContext{})
			var e echoed
			if err := json.Unmarshal([]byte(r.Final.Text), &e); err != nil || e.LastUser != "hello" {
				t.Fatalf("turn: %+v (%v); want the [env] provider echo", r.Final, err)
			}
			if logs := k.Logs(); !strings.Contains(logs, "the provider registry did not say which model to use") {
				t.Fatalf("no warning logged:\n%s", logs)
			}
		})
	}
}

// What asking the registry adds to a turn: a one-delta replayed turn
// without a registry loaded (the round trip is skipped) and with one
// (answered from its cache). go test -run xxx -bench TurnModelChoice ./capsules/react
func BenchmarkTurnModelChoice(b *testing.B) {
	for _, bc := range []struct {
		name  string
		extra []sdktest.Capsule
	}{{"env", nil}, {"registry", registryCapsules()}} {
		b.Run(bc.name, func(b *testing.B) {
			k := boot(b, setup{script: helloScript, extra: bc.extra})
			i := 0
			for b.Loop() {
				if r := k.RunPrompt(ipc.DefaultPrincipal, "bench"+strconv.Itoa(i), "hello", ipc.PromptContext{}); r.Final.Text != "Hi there" {
					b.Fatalf("turn %+v", r.Final)
				}
				i++
			}
		})
	}
}
