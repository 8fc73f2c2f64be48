package metrics

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/kernel"
	"github.com/astrid-go/astrid/ipc"
)

// A provider's Usage events are counted per provider and kind, and the
// cost of final responses per provider; deltas, malformed and hostile
// events count nothing and break nothing.
func TestProviderTokens(t *testing.T) {
	const provider = "fake"
	k, err := kernel.Boot(context.Background(), kernel.Options{
		Home: t.TempDir(), Workspace: t.TempDir(), Config: config.Default(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Frontends: []dispatch.CapsuleACL{{ID: "fake-provider", Publish: []string{ipc.LLMStreamTopic(provider), ipc.AgentResponseTopic}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	srv := httptest.NewServer(New(k))
	defer srv.Close()
	from := dispatch.Caller{Capsule: "fake-provider", Principal: ipc.DefaultPrincipal}
	for _, payload := range []string{
		`{"type":"llm_stream_event","request_id":"r1","event":{"Usage":{"input_tokens":120,"output_tokens":30,"cached_tokens":100}}}`,
		`{"type":"llm_stream_event","request_id":"r2","event":{"Usage":{"input_tokens":5,"output_tokens":2}}}`,
		`{"type":"llm_stream_event","request_id":"r1","event":{"TextDelta":"\"Usage\" is a word"}}`,
		`{"type":"llm_stream_event","request_id":"r1","event":{"Usage":{"input_tokens":-1,"output_tokens":"many"}}}`,
		`{"type":"llm_stream_event","request_id":"r1","event":{"Usage":null}}`,
		`{"type":"llm_stream_event","request_id":"r1","event":"Done"}`,
	} {
		if _, err := k.Frontend().Publish(from, ipc.LLMStreamTopic(provider), json.RawMessage(payload)); err != nil {
			t.Fatal(err)
		}
	}
	for _, payload := range []string{
		`{"type":"agent_response","text":"a","is_final":true,"session_id":"s","outcome":"answer","provider":"fake","usage":{"input_tokens":1,"output_tokens":1},"cost_usd":0.25}`,
		`{"type":"agent_response","text":"b","is_final":true,"session_id":"s","outcome":"answer","provider":"fake","cost_usd":0.5}`,
		`{"type":"agent_response","text":"c","is_final":true,"session_id":"s","outcome":"answer","provider":"fake","cost_usd":-3}`,
		`{"type":"agent_response","text":"d","is_final":true,"session_id":"s","outcome":"answer","provider":"fake","cost_usd":"lots"}`,
	} {
		if _, err := k.Frontend().Publish(from, ipc.AgentResponseTopic, json.RawMessage(payload)); err != nil {
			t.Fatal(err)
		}
	}
	fams := scrape(t, srv.URL+"/metrics")
	if cost := value(fams, "astrid_turn_cost_usd_total", "provider", provider); cost != 0.75 {
		t.Errorf("cost %v, want 0.75", cost)
	}
	if in := value(fams, "astrid_provider_tokens_total", "provider", provider, "kind", "input"); in != 125 {
		t.Errorf("input tokens %v, want 125", in)
	}
	if out := value(fams, "astrid_provider_tokens_total", "provider", provider, "kind", "output"); out != 32 {
		t.Errorf("output tokens %v, want 32", out)
	}
	if cached := value(fams, "astrid_provider_tokens_total", "provider", provider, "kind", "cached"); cached != 100 {
		t.Errorf("cached tokens %v, want 100", cached)
	}
}
