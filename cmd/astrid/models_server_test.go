package main

import (
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/ipc"
)

// ollamaServer is an OpenAI-compatible server as Ollama is one: GET
// /v1/models answers list (Ollama's wire format), a chat completion
// streams "Hi." with the usage Ollama reports; it keeps the model each
// chat request asked for.
func ollamaServer(t *testing.T, list string) (*httptest.Server, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, list)
			return
		}
		var body struct{ Model string }
		_ = json.NewDecoder(r.Body).Decode(&body)
		mu.Lock()
		asked = append(asked, body.Model)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, openAIChunk(`{"role":"assistant","content":"Hi."}`, "null"))
		_, _ = io.WriteString(w, openAIChunk(`{}`, `"stop"`))
		_, _ = io.WriteString(w, `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1764590000,"model":"llama3.2","choices":[],"usage":{"prompt_tokens":1200,"completion_tokens":34,"total_tokens":1234,"prompt_tokens_details":{"cached_tokens":1024}}}`+"\n\n")
		_, _ = io.WriteString(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), asked...)
	}
}

// astrid models list asks an OpenAI-compatible server what it serves and
// lists it; astrid models set chooses one of those; with no model named,
// a server serving exactly one gets requests for it. A server whose list
// cannot be read leaves the configured model listed, and the list says why.
func TestModelsListAsksTheServer(t *testing.T) {
	noProviderKeys(t)
	srv, asked := ollamaServer(t, `{"object":"list","data":[{"id":"llama3.2:latest","object":"model","created":1764590000,"owned_by":"library"}]}`)
	t.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")
	t.Setenv(config.HomeEnv, t.TempDir())
	ws := t.TempDir()

	out, errOut, code := runAstrid(t, "", "models", "list", "--workspace", ws)
	if code != 0 || !strings.Contains(out, "openai:llama3.2:latest") || strings.Contains(errOut, "note: openai") {
		t.Fatalf("models list: exit %d\n%s%s", code, out, errOut)
	}
	if _, errOut, code = runAstrid(t, "", "models", "set", "openai:llama3.2:latest", "--workspace", ws); code != 0 {
		t.Fatalf("models set: exit %d\n%s", code, errOut)
	}
	out, errOut, code = runAstrid(t, "", "-p", "hello", "--provider", "openai", "--workspace", ws)
	if code != 0 || out != "Hi.\n" || !slices.Equal(asked(), []string{"llama3.2:latest"}) {
		t.Fatalf("-p without --model: exit %d, asked for %q\n%s%s", code, asked(), out, errOut)
	}

	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, "<html>It works!</html>")
	}))
	t.Cleanup(broken.Close)
	t.Setenv("OPENAI_BASE_URL", broken.URL+"/v1")
	t.Setenv(config.HomeEnv, t.TempDir())
	out, errOut, code = runAstrid(t, "", "models", "list", "--workspace", ws)
	if code != 0 || !strings.Contains(errOut, "note: openai: the model list of") || !strings.Contains(errOut, "was not read") {
		t.Fatalf("models list of a server that answers HTML: exit %d\n%s%s", code, out, errOut)
	}
}

// A turn reports the tokens its provider counted (Ollama's usage chunk
// here, cached input included) and, with a price for the model in the
// agent's [env] prices, their cost: in the final --json event, and on
// stderr after the answer. A model without a price gets tokens only.
func TestPromptReportsUsageAndCost(t *testing.T) {
	noProviderKeys(t)
	srv, _ := ollamaServer(t, `{"object":"list","data":[{"id":"llama3.2","object":"model"}]}`)
	t.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")
	t.Setenv(config.HomeEnv, t.TempDir())
	ws := t.TempDir()
	if _, errOut, code := runAstrid(t, "openai:llama3.2=1/10/0.1, anthropic:claude-opus-5-5=5/25", "capsule", "env", "set", "astrid-capsule-react", "prices"); code != 0 {
		t.Fatalf("capsule env set prices: exit %d\n%s", code, errOut)
	}

	out, errOut, code := runAstrid(t, "", "-p", "hello", "--provider", "openai", "--model", "llama3.2", "--json", "--workspace", ws)
	var final struct {
		Event string
		Data  ipc.AgentResponse
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || json.Unmarshal([]byte(lines[len(lines)-1]), &final) != nil || final.Event != "response" {
		t.Fatalf("-p --json: exit %d\n%s%s", code, out, errOut)
	}
	// 176 uncached input tokens at $1, 1024 cached at $0.10, 34 output at
	// $10 per million.
	const want = (176*1 + 1024*0.1 + 34*10) / 1e6
	if u := final.Data.Usage; u == nil || *u != (ipc.Usage{InputTokens: 1200, OutputTokens: 34, CachedTokens: 1024}) ||
		final.Data.CostUSD == nil || math.Abs(*final.Data.CostUSD-want) > 1e-12 || final.Data.Model != "llama3.2" {
		t.Fatalf("the final event's usage: %s", lines[len(lines)-1])
	}

	out, errOut, code = runAstrid(t, "", "-p", "hello", "--provider", "openai", "--model", "llama3.2", "--workspace", ws)
	if code != 0 || out != "Hi.\n" || !strings.Contains(errOut, "tokens: 1200 in (1024 cached), 34 out, cost $0.0006\n") {
		t.Fatalf("-p: exit %d\n%s%s", code, out, errOut)
	}
	session := regexp.MustCompile(`session (s-[0-9a-f]+)`).FindStringSubmatch(errOut)
	if session == nil {
		t.Fatalf("no session id in:\n%s", errOut)
	}
	// The session keeps the totals of its turns: astrid session show.
	if out, errOut, code = runAstrid(t, "", "session", "show", session[1], "--workspace", ws); code != 0 || !strings.Contains(errOut, "tokens: 1200 in (1024 cached), 34 out, cost $0.0006\n") {
		t.Fatalf("session show: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = runAstrid(t, "", "-p", "hello", "--provider", "openai", "--model", "qwen3", "--session", session[1], "--workspace", ws)
	if code != 0 || !strings.Contains(errOut, "tokens: 1200 in (1024 cached), 34 out\n") {
		t.Fatalf("-p with a model without a price: exit %d\n%s%s", code, out, errOut)
	}
	if out, errOut, code = runAstrid(t, "", "session", "show", session[1], "--workspace", ws); code != 0 ||
		!strings.Contains(errOut, "tokens: 2400 in (2048 cached), 68 out, cost $0.0006 (at least: some requests had no price)\n") {
		t.Fatalf("session show after an unpriced turn: exit %d\n%s%s", code, out, errOut)
	}
}

// astrid models list shows the models Anthropic's API lists (its wire
// format, GET /v1/models), so astrid models set can choose one no release
// knew of.
func TestModelsListAsksAnthropic(t *testing.T) {
	noProviderKeys(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/models" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"data":[{"type":"model","id":"claude-opus-9-9","display_name":"Claude Opus 9.9","created_at":"2027-01-01T00:00:00Z"}],"has_more":false,"first_id":"claude-opus-9-9","last_id":"claude-opus-9-9"}`)
	}))
	t.Cleanup(srv.Close)
	t.Setenv("ANTHROPIC_BASE_URL", srv.URL)
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-test")
	t.Setenv(config.HomeEnv, t.TempDir())
	ws := t.TempDir()
	out, errOut, code := runAstrid(t, "", "models", "list", "--workspace", ws)
	if code != 0 || !strings.Contains(out, "anthropic:claude-opus-9-9") || strings.Contains(errOut, "note: anthropic") {
		t.Fatalf("models list: exit %d\n%s%s", code, out, errOut)
	}
	if _, errOut, code = runAstrid(t, "", "models", "set", "anthropic:claude-opus-9-9", "--workspace", ws); code != 0 {
		t.Fatalf("models set: exit %d\n%s", code, errOut)
	}
}
