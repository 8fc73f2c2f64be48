package react_test

import (
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/astrid-go/astrid/capsules/openai"
	"github.com/astrid-go/astrid/capsules/promptbuilder"
	"github.com/astrid-go/astrid/capsules/react"
	"github.com/astrid-go/astrid/capsules/session"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk/sdktest"
)

// usageSSE is an OpenAI chat completion stream: a short answer, then the
// usage chunk (1000 input tokens of which 400 cached, 100 output).
const usageSSE = `data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":"Priced."},"finish_reason":null}],"usage":null}

data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}

data: {"id":"c1","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":1000,"completion_tokens":100,"total_tokens":1100,"prompt_tokens_details":{"cached_tokens":400}}}

data: [DONE]

`

// The cost of a turn on the OpenAI provider, through the real agent stack:
// a model of the built-in table is priced with no configuration, an
// [env] prices entry wins over the table, and a model in neither shows
// tokens only.
func TestTurnCostFromTheBuiltinTable(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, usageSSE)
	}))
	t.Cleanup(srv.Close)
	boot := func(prices string) *sdktest.Kernel {
		cfg := map[string]string{}
		if prices != "" {
			cfg["prices"] = prices
		}
		return sdktest.NewAgent(t, sdktest.AgentOptions{},
			sdktest.Capsule{Manifest: react.Manifest, New: react.New, Config: cfg},
			sdktest.Capsule{Manifest: promptbuilder.Manifest, New: promptbuilder.New},
			sdktest.Capsule{Manifest: session.Manifest, New: session.New},
			sdktest.Capsule{Manifest: openai.Manifest, New: openai.New, Config: map[string]string{"base_url": srv.URL + "/v1"}},
		)
	}
	wantUsage := ipc.Usage{InputTokens: 1000, OutputTokens: 100, CachedTokens: 400}
	turn := func(k *sdktest.Kernel, session, model string) ipc.AgentResponse {
		t.Helper()
		r := k.RunPrompt(ipc.DefaultPrincipal, session, "What does it cost?", ipc.PromptContext{Provider: openai.Provider, Model: model})
		if r.Final.Outcome != ipc.OutcomeAnswer || r.Final.Usage == nil || *r.Final.Usage != wantUsage {
			t.Fatalf("%s: final %+v, usage %+v", model, r.Final, r.Final.Usage)
		}
		return r.Final
	}

	k := boot("")
	// gpt-4o's list price: $2.50 input, $1.25 cached input, $10 output.
	if f := turn(k, "known", "gpt-4o"); f.CostUSD == nil || math.Abs(*f.CostUSD-(600*2.5+400*1.25+100*10)/1e6) > 1e-12 {
		t.Fatalf("a built-in model with no configuration: cost %v", f.CostUSD)
	}
	if f := turn(k, "unknown", "my-local-model"); f.CostUSD != nil {
		t.Fatalf("a model no table knows was priced at %v", *f.CostUSD)
	}

	k = boot("openai:gpt-4o=1/2, openai:my-local-model=0.5/1/0.25")
	if f := turn(k, "override", "gpt-4o"); f.CostUSD == nil || math.Abs(*f.CostUSD-(1000*1+100*2)/1e6) > 1e-12 {
		t.Fatalf("the operator's price did not win: cost %v", f.CostUSD)
	}
	if f := turn(k, "added", "my-local-model"); f.CostUSD == nil || math.Abs(*f.CostUSD-(600*0.5+400*0.25+100*1)/1e6) > 1e-12 {
		t.Fatalf("the operator's added model: cost %v", f.CostUSD)
	}
	if f := turn(k, "kept", "gpt-4o-mini"); f.CostUSD == nil || math.Abs(*f.CostUSD-(600*0.15+400*0.075+100*0.6)/1e6) > 1e-12 {
		t.Fatalf("a built-in price the operator did not name: cost %v", f.CostUSD)
	}
}
