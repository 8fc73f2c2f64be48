package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// anthropicServer answers /v1/messages with the recorded text stream and
// keeps each request's headers and body.
func anthropicServer(t *testing.T) (*httptest.Server, func() []*http.Request, func() []map[string]any) {
	t.Helper()
	stream, err := os.ReadFile(filepath.Join("..", "..", "capsules", "anthropic", "testdata", "text.sse"))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var reqs []*http.Request
	var bodies []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		mu.Lock()
		reqs, bodies = append(reqs, r.Clone(r.Context())), append(bodies, body)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		_, _ = w.Write(stream)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []*http.Request {
			mu.Lock()
			defer mu.Unlock()
			return append([]*http.Request(nil), reqs...)
		}, func() []map[string]any {
			mu.Lock()
			defer mu.Unlock()
			return append([]map[string]any(nil), bodies...)
		}
}

// `astrid -p --provider anthropic` talks to the server ANTHROPIC_BASE_URL
// names, with ANTHROPIC_API_KEY, and prints the streamed answer; --model
// reaches the request.
func TestPromptWithAnthropicAtALocalServer(t *testing.T) {
	ws := promptHome(t, "")
	srv, reqs, bodies := anthropicServer(t)
	t.Setenv("ANTHROPIC_BASE_URL", srv.URL)
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-from-env")
	out, errOut, code := runAstrid(t, "", "-p", "Say hello", "--provider", "anthropic", "--model", "claude-haiku-5-5", "--workspace", ws)
	if code != 0 || out != "Hello!\n" {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s", code, out, errOut)
	}
	if rs := reqs(); len(rs) != 1 || rs[0].Header.Get("Authorization") != "Bearer sk-ant-from-env" || rs[0].URL.Path != "/v1/messages" {
		t.Fatalf("requests: %d, %+v", len(rs), rs)
	}
	if b := bodies()[0]; b["model"] != "claude-haiku-5-5" || b["stream"] != true {
		t.Fatalf("body %v", b)
	}
}

// Without a key (and no base URL) the turn fails at once with the command
// that sets one.
func TestPromptWithAnthropicWithoutAKey(t *testing.T) {
	ws := promptHome(t, "")
	t.Setenv("ANTHROPIC_BASE_URL", "")
	t.Setenv("ANTHROPIC_API_KEY", "")
	_, errOut, code := runAstrid(t, "", "-p", "Say hello", "--provider", "anthropic", "--workspace", ws)
	if code != 1 || !strings.Contains(errOut, "astrid capsule env set astrid-capsule-anthropic api_key") || !strings.Contains(errOut, "ANTHROPIC_API_KEY") {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
}
