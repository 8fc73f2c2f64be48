package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// openAIChunk is one Chat Completions chunk as OpenAI streams it, with
// delta as its choice's delta and finish as its finish_reason (JSON).
func openAIChunk(delta, finish string) string {
	return `data: {"id":"chatcmpl-Cli1","object":"chat.completion.chunk","created":1764590000,"model":"test-model","system_fingerprint":"fp_1","choices":[{"index":0,"delta":` +
		delta + `,"logprobs":null,"finish_reason":` + finish + `}],"usage":null}` + "\n\n"
}

// writeOpenAIAnswer streams a whole Chat Completions answer of text, as
// OpenAI's server does.
func writeOpenAIAnswer(w http.ResponseWriter, text string) {
	w.Header().Set("Content-Type", "text/event-stream")
	io.WriteString(w, openAIChunk(`{"role":"assistant","content":`+strconv.Quote(text)+`}`, "null"))
	io.WriteString(w, openAIChunk(`{}`, `"stop"`))
	io.WriteString(w, "data: [DONE]\n\n")
}

// writeOpenAIToolCall streams a whole answer that calls tool name with
// args (a JSON object) as call id.
func writeOpenAIToolCall(w http.ResponseWriter, id, name, args string) {
	w.Header().Set("Content-Type", "text/event-stream")
	io.WriteString(w, openAIChunk(`{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":`+strconv.Quote(id)+`,"type":"function","function":{"name":`+strconv.Quote(name)+`,"arguments":`+strconv.Quote(args)+`}}]}`, "null"))
	io.WriteString(w, openAIChunk(`{}`, `"tool_calls"`))
	io.WriteString(w, "data: [DONE]\n\n")
}

// `astrid -p --provider openai`, pointed at a local OpenAI-compatible
// server by OPENAI_BASE_URL alone: the model asks for read_file, the file
// is read, the answer is printed. Without the variable (and no key) the
// run fails with the command that sets the key.
func TestPromptWithTheOpenAIProvider(t *testing.T) {
	var mu sync.Mutex
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		n := len(bodies)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		if n == 1 {
			io.WriteString(w, openAIChunk(`{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_cli","type":"function","function":{"name":"read_file","arguments":""}}]}`, "null"))
			io.WriteString(w, openAIChunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"file_path\":"}}]}`, "null"))
			io.WriteString(w, openAIChunk(`{"tool_calls":[{"index":0,"function":{"arguments":"\"README.md\"}"}}]}`, "null"))
			io.WriteString(w, openAIChunk(`{}`, `"tool_calls"`))
		} else {
			io.WriteString(w, openAIChunk(`{"role":"assistant","content":"It holds "}`, "null"))
			io.WriteString(w, openAIChunk(`{"content":"a README."}`, "null"))
			io.WriteString(w, openAIChunk(`{}`, `"stop"`))
		}
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	defer srv.Close()

	home, ws := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "README.md"), []byte("# Demo workspace\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := astridProcess(home, "-p", "What is in README.md?", "--provider", "openai", "--model", "test-model", "--workspace", ws)
	cmd.Env = append(cmd.Env, "OPENAI_BASE_URL="+srv.URL+"/v1", "OPENAI_API_KEY=")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil || stdout.String() != "It holds a README.\n" {
		t.Fatalf("%v: stdout %q, stderr:\n%s", err, stdout.String(), stderr.String())
	}
	if !strings.Contains(stderr.String(), `→ read_file {"file_path":"README.md"}`) || !strings.Contains(stderr.String(), "# Demo workspace") {
		t.Fatalf("stderr lacks the tool call:\n%s", stderr.String())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) != 2 || !strings.Contains(bodies[0], `"model":"test-model"`) || !strings.Contains(bodies[1], `"role":"tool"`) {
		t.Fatalf("requests: %q", bodies)
	}

	cmd = astridProcess(t.TempDir(), "-p", "hello", "--provider", "openai", "--workspace", ws)
	cmd.Env = append(cmd.Env, "OPENAI_BASE_URL=", "OPENAI_API_KEY=")
	stdout.Reset()
	stderr.Reset()
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if code := exitStatus(t, err); code != 1 || !strings.Contains(stderr.String(), "astrid capsule env set astrid-capsule-openai api_key") {
		t.Fatalf("without a key: exit %d, stdout %q, stderr:\n%s", code, stdout.String(), stderr.String())
	}
}
