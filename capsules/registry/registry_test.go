package registry_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/astrid-go/astrid/capsules/registry"
	"github.com/astrid-go/astrid/capsules/replay"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/registryclient"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
	"github.com/astrid-go/astrid/sdk/sdktest"
)

func TestRegistrationsMatchManifest(t *testing.T) {
	sdktest.CheckRegistrations(t, registry.Manifest, registry.New())
}

// fixture is a test-only provider capsule named id serving provider: it
// answers describe with answer (nothing when answer is empty: a silent
// provider) and a generate request with one text delta naming itself and
// the model asked for. describes counts its describe answers.
type fixture struct {
	id, provider, answer string
	describes            *atomic.Int64
}

func (f fixture) capsule() sdktest.Capsule {
	manifest := fmt.Sprintf(`
[package]
name = %q
version = "0.1.0"

[subscribe]
"llm.v1.request.describe" = { wit = "opaque", handler = "describe" }
%q = { wit = "opaque", handler = "generate" }

[publish]
"llm.v1.response.describe" = "opaque"
%q = "opaque"
`, f.id, ipc.LLMGenerateTopic(f.provider), ipc.LLMStreamTopic(f.provider))
	return sdktest.Capsule{Manifest: []byte(manifest), New: func() *sdk.Capsule {
		c := sdk.New("test fixture: a provider")
		c.Handle(ipc.LLMRequestDescribeTopic, "describe", func(call *sdk.Call) error {
			if f.answer == "" {
				return nil
			}
			if f.describes != nil {
				f.describes.Add(1)
			}
			return call.Publish(ipc.LLMResponseDescribeTopic, []byte(f.answer))
		})
		c.Handle(ipc.LLMGenerateTopic(f.provider), "generate", func(call *sdk.Call) error {
			var req ipc.LLMRequest
			if err := req.UnmarshalJSON(call.Payload()); err != nil {
				return err
			}
			for _, ev := range []ipc.StreamEvent{{Kind: ipc.StreamTextDelta, Text: f.id + " answered with model " + req.Model}, {Kind: ipc.StreamDone}} {
				b, err := ipc.LLMStreamEvent{RequestID: req.RequestID, Event: ev}.MarshalJSON()
				if err != nil {
					return err
				}
				if err := call.Publish(ipc.LLMStreamTopic(f.provider), b); err != nil {
					return err
				}
			}
			return nil
		})
		c.Publishes(ipc.LLMResponseDescribeTopic)
		c.Publishes(ipc.LLMStreamTopic(f.provider))
		return c
	}}
}

// entries is a describe answer: each entry is id, provider and whether it
// is ready (with a why when not).
func entries(provider string, ready bool, ids ...string) string {
	var list []map[string]any
	for _, id := range ids {
		e := map[string]any{"id": id, "description": "model " + id, "capabilities": []string{"text", "tools"},
			"request_topic": ipc.LLMGenerateTopic(provider), "stream_topic": ipc.LLMStreamTopic(provider),
			"context_window": 1000, "max_output_tokens": 100, "ready": ready}
		if !ready {
			e["why"] = "no api key: astrid capsule env set test-" + provider + " api_key"
		}
		list = append(list, e)
	}
	b, _ := json.Marshal(map[string]any{"providers": list})
	return string(b)
}

func regCapsule() sdktest.Capsule {
	return sdktest.Capsule{Manifest: registry.Manifest, New: registry.New}
}

func ask(t *testing.T, k *sdktest.Kernel, principal string, f func(context.Context, registryclient.Kernel, string) (ipc.RegistryReply, error)) ipc.RegistryReply {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), k.Timeout)
	defer cancel()
	r, err := f(ctx, k.Agent(), principal)
	if err != nil {
		t.Fatalf("registry: %v", err)
	}
	return r
}

func set(t *testing.T, k *sdktest.Kernel, principal, id string) (ipc.RegistryReply, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), k.Timeout)
	defer cancel()
	return registryclient.Set(ctx, k.Agent(), principal, id)
}

func ids(es []ipc.ModelEntry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.ID
	}
	return out
}

func activeID(r ipc.RegistryReply) string {
	if r.ActiveModel == nil {
		return "<none>"
	}
	return r.ActiveModel.ID
}

// Discovery with one ready provider, one not ready, one that claims
// another's topic and sends malformed entries, and one that never answers:
// the list holds only what each answering capsule really serves, named
// <provider>:<model>, and names the silent one.
func TestDiscovery(t *testing.T) {
	shadow := `{"providers": [
		{"id": "stolen", "request_topic": "llm.v1.request.generate.alpha", "stream_topic": "llm.v1.stream.alpha"},
		{"id": "own", "request_topic": "llm.v1.request.generate.shadow", "context_window": 5},
		{"id": "deep", "request_topic": "llm.v1.request.generate.shadow.x"},
		{"id": "nowhere", "request_topic": "tool.v1.execute.read_file"},
		{"id": "wrongstream", "request_topic": "llm.v1.request.generate.shadow", "stream_topic": "llm.v1.stream.alpha"},
		{"id": "", "request_topic": "llm.v1.request.generate.shadow"},
		{"id": "two words", "request_topic": "llm.v1.request.generate.shadow"},
		{"id": "ctl\u0007", "request_topic": "llm.v1.request.generate.shadow"},
		{"id": "own\u202egpj", "request_topic": "llm.v1.request.generate.shadow"},
		{"id": "own\u200b", "request_topic": "llm.v1.request.generate.shadow"},
		"not an object"
	]}`
	var alphaDescribes atomic.Int64
	k := sdktest.New(t, regCapsule(),
		fixture{id: "test-alpha", provider: "alpha", answer: entries("alpha", true, "a-large", "alpha:a-small"), describes: &alphaDescribes}.capsule(),
		fixture{id: "test-beta", provider: "beta", answer: entries("beta", false, "b1")}.capsule(),
		fixture{id: "test-shadow", provider: "shadow", answer: shadow}.capsule(),
		fixture{id: "test-silent", provider: "silent"}.capsule(),
	)
	r := ask(t, k, ipc.DefaultPrincipal, registryclient.List)
	if got, want := ids(r.Providers), []string{"alpha:a-large", "alpha:a-small", "beta:b1", "shadow:own"}; !slices.Equal(got, want) {
		t.Fatalf("models %v, want %v", got, want)
	}
	if !slices.Equal(r.Missing, []string{"test-silent"}) {
		t.Fatalf("missing %v, want the silent provider", r.Missing)
	}
	a, b, s := r.Providers[0], r.Providers[2], r.Providers[3]
	if a.Provider != "alpha" || a.Model != "a-large" || a.Capsule != "test-alpha" || !a.Ready || a.Why != "" || a.ContextWindow != 1000 ||
		a.RequestTopic != "llm.v1.request.generate.alpha" || a.StreamTopic != "llm.v1.stream.alpha" {
		t.Fatalf("alpha entry %+v", a)
	}
	if r.Providers[1].Model != "a-small" {
		t.Fatalf("an already canonical id is kept once: %+v", r.Providers[1])
	}
	if b.Ready || !strings.Contains(b.Why, "astrid capsule env set test-beta api_key") {
		t.Fatalf("beta entry %+v: want not ready, with the fix", b)
	}
	if s.Capsule != "test-shadow" || s.StreamTopic != "llm.v1.stream.shadow" || !s.Ready {
		t.Fatalf("shadow's own entry %+v (no ready field counts as ready)", s)
	}
	// A list missing a silent provider is served from the cache for a
	// while, so a provider that never answers does not cost every turn
	// the describe window.
	before := alphaDescribes.Load()
	for range 3 {
		if r := ask(t, k, "alice", registryclient.Current); activeID(r) != "alpha:a-large" {
			t.Fatalf("alice's current %s", activeID(r))
		}
	}
	if got := alphaDescribes.Load() - before; got != 1 {
		t.Fatalf("%d discoveries for three get_active_model with a silent provider, want 1", got)
	}
	if logs := k.Logs(); !strings.Contains(logs, "test-shadow does not intercept llm.v1.request.generate.alpha") ||
		!strings.Contains(logs, "test-silent did not describe") {
		t.Fatalf("the refused entry and the silent capsule are not logged:\n%s", logs)
	}
	// No preferred provider is loaded: the first ready model answers.
	if activeID(r) != "alpha:a-large" || r.Chosen {
		t.Fatalf("active %s chosen %v, want the default alpha:a-large", activeID(r), r.Chosen)
	}
}

// The default without a choice: anthropic's first ready model, else
// openai's, else replay's, else any ready one; a provider that is not
// ready is passed over.
func TestDefaultOrder(t *testing.T) {
	replayCap := sdktest.Capsule{Manifest: replay.Manifest, New: replay.New}
	cases := []struct {
		name     string
		capsules []sdktest.Capsule
		want     string
	}{
		{"anthropic first", []sdktest.Capsule{
			fixture{id: "test-openai", provider: "openai", answer: entries("openai", true, "gpt-x")}.capsule(),
			fixture{id: "test-anthropic", provider: "anthropic", answer: entries("anthropic", true, "claude-x", "claude-y")}.capsule(), replayCap,
		}, "anthropic:claude-x"},
		{"anthropic not ready", []sdktest.Capsule{
			fixture{id: "test-openai", provider: "openai", answer: entries("openai", true, "gpt-x")}.capsule(),
			fixture{id: "test-anthropic", provider: "anthropic", answer: entries("anthropic", false, "claude-x")}.capsule(), replayCap,
		}, "openai:gpt-x"},
		{"neither ready", []sdktest.Capsule{
			fixture{id: "test-openai", provider: "openai", answer: entries("openai", false, "gpt-x")}.capsule(),
			fixture{id: "test-anthropic", provider: "anthropic", answer: entries("anthropic", false, "claude-x")}.capsule(),
			fixture{id: "test-other", provider: "other", answer: entries("other", true, "o1")}.capsule(), replayCap,
		}, "replay:replay"},
		{"no replay", []sdktest.Capsule{
			fixture{id: "test-openai", provider: "openai", answer: entries("openai", false, "gpt-x")}.capsule(),
			fixture{id: "test-other", provider: "other", answer: entries("other", true, "o1")}.capsule(),
		}, "other:o1"},
		{"nothing ready", []sdktest.Capsule{
			fixture{id: "test-openai", provider: "openai", answer: entries("openai", false, "gpt-x")}.capsule(),
		}, "<none>"},
		{"no provider", nil, "<none>"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			k := sdktest.New(t, append([]sdktest.Capsule{regCapsule()}, tc.capsules...)...)
			r := ask(t, k, ipc.DefaultPrincipal, registryclient.Current)
			if activeID(r) != tc.want || r.Chosen {
				t.Fatalf("default %s (chosen %v), want %s", activeID(r), r.Chosen, tc.want)
			}
		})
	}
}

// set, current and unset per principal: one principal's choice is not
// another's; an unknown id is refused naming the known ones; a model that
// is not ready may be chosen (its provider then says what is missing);
// each change is announced to that principal.
func TestActiveModelPerPrincipal(t *testing.T) {
	k := sdktest.New(t, regCapsule(),
		fixture{id: "test-alpha", provider: "alpha", answer: entries("alpha", true, "a-large", "a-small")}.capsule(),
		fixture{id: "test-beta", provider: "beta", answer: entries("beta", false, "b1")}.capsule(),
	)
	changes, err := k.Agent().Subscribe(dispatch.Caller{Capsule: registryclient.ClientID, Principal: "alice"}, ipc.RegistryActiveModelChangedTopic, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(changes.Close)
	nextChange := func() string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), k.Timeout)
		defer cancel()
		d, err := changes.Recv(ctx)
		if err != nil {
			t.Fatalf("no active_model_changed: %v", err)
		}
		if d.Envelope.SourceID != "astrid-capsule-registry" {
			t.Fatalf("announced by %q", d.Envelope.SourceID)
		}
		return string(ipc.GuestBytes(d.Envelope.Payload))
	}

	r, err := set(t, k, "alice", "alpha:a-small")
	if err != nil || r.Status != "ok" || activeID(r) != "alpha:a-small" || !r.Chosen {
		t.Fatalf("set: %+v, %v", r, err)
	}
	if got := nextChange(); !strings.Contains(got, `"id":"alpha:a-small"`) {
		t.Fatalf("announced %s", got)
	}
	if r := ask(t, k, "alice", registryclient.Current); activeID(r) != "alpha:a-small" || !r.Chosen {
		t.Fatalf("alice's current %s chosen %v", activeID(r), r.Chosen)
	}
	if r := ask(t, k, "bob", registryclient.Current); activeID(r) != "alpha:a-large" || r.Chosen {
		t.Fatalf("bob's current %s chosen %v: alice's choice leaked", activeID(r), r.Chosen)
	}
	for _, bad := range []string{"alpha:nope", "nope", "", "gamma:a-large", "alpha:a-small ", "a-small"} {
		// A known provider's own models, else every known one; and the
		// command that lists them.
		named := "known: alpha:a-large, alpha:a-small, beta:b1"
		if strings.HasPrefix(bad, "alpha:") {
			named = "alpha offers alpha:a-large, alpha:a-small;"
		}
		r, err := set(t, k, "alice", bad)
		if !errors.Is(err, registryclient.ErrRejected) || !strings.Contains(err.Error(), "unknown model") ||
			!strings.Contains(err.Error(), named) || !strings.Contains(err.Error(), "astrid models list") {
			t.Fatalf("set %q: %+v, %v; want an error naming the known models", bad, r, err)
		}
	}
	if r := ask(t, k, "alice", registryclient.Current); activeID(r) != "alpha:a-small" {
		t.Fatalf("a refused set changed the choice to %s", activeID(r))
	}
	if r, err := set(t, k, "alice", "beta:b1"); err != nil || r.ActiveModel == nil || r.ActiveModel.Ready || r.ActiveModel.Why == "" {
		t.Fatalf("set beta:b1: %+v, %v; want it chosen, not ready, with why", r, err)
	}
	_ = nextChange()
	r = ask(t, k, "alice", registryclient.Unset)
	if r.Status != "ok" || activeID(r) != "alpha:a-large" || r.Chosen {
		t.Fatalf("unset: %+v", r)
	}
	if got := nextChange(); got != "null" {
		t.Fatalf("unset announced %s, want null", got)
	}
	if r := ask(t, k, "alice", registryclient.Current); activeID(r) != "alpha:a-large" || r.Chosen {
		t.Fatalf("after unset %s chosen %v", activeID(r), r.Chosen)
	}
}

// A choice survives a restart of the kernel on the same home; a choice
// whose provider is no longer loaded gives way to the default, with a
// note, without being forgotten.
func TestChoicePersistsAcrossRestart(t *testing.T) {
	alpha := fixture{id: "test-alpha", provider: "alpha", answer: entries("alpha", true, "a-large", "a-small")}.capsule()
	beta := fixture{id: "test-beta", provider: "beta", answer: entries("beta", true, "b1")}.capsule()
	k := sdktest.New(t, regCapsule(), alpha, beta)
	if _, err := set(t, k, "alice", "beta:b1"); err != nil {
		t.Fatal(err)
	}
	k = k.Restart(regCapsule(), alpha, beta)
	if r := ask(t, k, "alice", registryclient.Current); activeID(r) != "beta:b1" || !r.Chosen {
		t.Fatalf("after restart %s chosen %v", activeID(r), r.Chosen)
	}
	k = k.Restart(regCapsule(), alpha)
	r := ask(t, k, "alice", registryclient.Current)
	if activeID(r) != "alpha:a-large" || r.Chosen || !strings.Contains(r.Note, "beta:b1 is not offered") {
		t.Fatalf("with beta gone: %+v", r)
	}
	k = k.Restart(regCapsule(), alpha, beta)
	if r := ask(t, k, "alice", registryclient.Current); activeID(r) != "beta:b1" || !r.Chosen {
		t.Fatalf("with beta back %s chosen %v: the choice was forgotten", activeID(r), r.Chosen)
	}
}

// get_active_model is served from the cache while the same capsules
// describe; get_providers and set rediscover; a newly loaded provider is
// seen at once (the responder set changed). (Alice's cache, not the
// default principal's, which the kernel's capsules_loaded at boot may drop
// at any moment.)
func TestCache(t *testing.T) {
	var n atomic.Int64
	k := sdktest.New(t, regCapsule(), fixture{id: "test-alpha", provider: "alpha", answer: entries("alpha", true, "a1"), describes: &n}.capsule())
	for range 3 {
		if r := ask(t, k, "alice", registryclient.Current); activeID(r) != "alpha:a1" {
			t.Fatalf("current %s", activeID(r))
		}
	}
	if got := n.Load(); got != 1 {
		t.Fatalf("%d discoveries for three get_active_model, want 1 (cached)", got)
	}
	ask(t, k, "alice", registryclient.List)
	if got := n.Load(); got != 2 {
		t.Fatalf("get_providers did not rediscover (%d)", got)
	}
	if err := k.Load(fixture{id: "test-beta", provider: "beta", answer: entries("beta", true, "b1")}.capsule()); err != nil {
		t.Fatal(err)
	}
	if _, err := set(t, k, "alice", "beta:b1"); err != nil {
		t.Fatalf("a provider loaded after the cache was filled cannot be chosen: %v", err)
	}
	if r := ask(t, k, "alice", registryclient.Current); activeID(r) != "beta:b1" {
		t.Fatalf("current %s", activeID(r))
	}
}

// A request that does not decode is answered with an error when it has a
// correlation id.
func TestMalformedRequest(t *testing.T) {
	k := sdktest.New(t, regCapsule())
	caller := dispatch.Caller{Capsule: registryclient.ClientID, Principal: ipc.DefaultPrincipal}
	sub, err := k.Agent().Subscribe(caller, ipc.RegistryResponseTopic(ipc.RegistryOpSetActiveModel, "c1"), true)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if _, err := k.Agent().Publish(caller, ipc.RegistrySetActiveModelTopic, json.RawMessage(`{"correlation_id": "c1", "model_id": 7}`)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), k.Timeout)
	defer cancel()
	d, err := sub.Recv(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var r ipc.RegistryReply
	if err := json.Unmarshal(ipc.GuestBytes(d.Envelope.Payload), &r); err != nil || !strings.Contains(r.Error, "does not decode") || r.CorrelationID != "c1" {
		t.Fatalf("reply %+v (%v)", r, err)
	}
}
