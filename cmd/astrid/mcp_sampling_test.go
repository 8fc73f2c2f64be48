package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// An MCP server's sampling request (issue 32.3): the model calls
// server-everything's trigger-sampling-request; the server asks Astrid's
// model. Refused while config.toml's [mcp] sampling does not name the
// capsule (the tool's result names the key); allowed, it is approved
// (--yes) and runs on the principal's active model (chosen with astrid
// models set: the fake OpenAI server), whose text
// the server puts in its result.
func TestPromptMCPSampling(t *testing.T) {
	if testing.Short() {
		t.Skip("runs an MCP server")
	}
	everything := mcpCapsule(t, "everything", "everything")
	grants := `
[subscribe]
"registry.v1.response.get_active_model.*" = { wit = "opaque" }
"llm.v1.stream.*" = { wit = "opaque" }

[publish]
"registry.v1.get_active_model" = "opaque"
"llm.v1.request.generate.*" = "opaque"
`
	f, err := os.OpenFile(filepath.Join(everything, "Capsule.toml"), os.O_APPEND|os.O_WRONLY, 0)
	if err == nil {
		_, err = f.WriteString(grants)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var results []string // the tool results the model was given
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		body := string(b)
		switch {
		case strings.Contains(body, "You are a helpful test server."):
			// The server's sampling request.
			writeOpenAIAnswer(w, "sampled pong")
		case strings.Contains(body, `"role":"tool"`):
			mu.Lock()
			results = append(results, body)
			mu.Unlock()
			writeOpenAIAnswer(w, "done")
		default:
			writeOpenAIToolCall(w, "call_s", "everything__trigger-sampling-request", `{"prompt":"ping","maxTokens":50}`)
		}
	}))
	defer model.Close()
	home, ws := t.TempDir(), t.TempDir()
	t.Setenv("OPENAI_BASE_URL", model.URL+"/v1")
	t.Setenv("OPENAI_API_KEY", "")
	if out, code := runProcess(t, home, "capsule", "install", everything, "--yes", "--accept-risk"); code != 0 {
		t.Fatalf("install: exit %d\n%s", code, out)
	}
	prompt := func() string {
		t.Helper()
		cmd := astridProcess(home, "-p", "sample", "--provider", "openai", "--model", "test-model", "--workspace", ws, "--yes", "--no-daemon")
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil || stdout.String() != "done\n" {
			t.Fatalf("-p: %v: stdout %q, stderr:\n%s", err, stdout.String(), stderr.String())
		}
		mu.Lock()
		defer mu.Unlock()
		if len(results) == 0 {
			t.Fatalf("the model was given no tool result; stderr:\n%s", stderr.String())
		}
		return results[len(results)-1] + "\nstderr:\n" + stderr.String()
	}
	if got := prompt(); !strings.Contains(got, `the operator has not allowed sampling for capsule everything (allow it in config.toml: [mcp] sampling = [\"everything\"])`) {
		t.Fatalf("by default the sampling request is not refused naming the key:\n%s", got)
	}
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte("[mcp]\nsampling = [\"everything\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The principal's active model answers a server's sampling, not the
	// run's --provider: choose the fake OpenAI server's.
	if out, code := runProcess(t, home, "models", "set", "openai:openai"); code != 0 {
		t.Fatalf("models set: exit %d\n%s", code, out)
	}
	got := prompt()
	if !strings.Contains(got, "sampled pong") || !strings.Contains(got, "approved (--yes): mcp_sampling MCP server everything of capsule everything asks the model for up to 50 tokens") {
		t.Fatalf("allowed and approved, the server did not get the model's text:\n%s", got)
	}
}
