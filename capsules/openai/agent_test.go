package openai_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/capsules/fs"
	"github.com/astrid-go/astrid/capsules/openai"
	"github.com/astrid-go/astrid/capsules/promptbuilder"
	"github.com/astrid-go/astrid/capsules/react"
	"github.com/astrid-go/astrid/capsules/session"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk/sdktest"
)

// The whole agent on this provider: the model (a local server replaying
// vLLM's wire) asks for read_file, the fs capsule reads the workspace's
// README, and the model, shown the result, answers. The second request
// the server gets carries the system prompt first, the call and its
// result under one id, and the model the prompt asked for.
func TestAgentReadsAFileThroughTheProvider(t *testing.T) {
	srv := newWireServer(t, reply{body: fixture(t, "vllm_tool.sse")}, reply{body: fixture(t, "openai_text.sse")})
	k := sdktest.NewAgent(t, sdktest.AgentOptions{},
		sdktest.Capsule{Manifest: react.Manifest, New: react.New},
		sdktest.Capsule{Manifest: promptbuilder.Manifest, New: promptbuilder.New},
		sdktest.Capsule{Manifest: session.Manifest, New: session.New},
		sdktest.Capsule{Manifest: fs.Manifest, New: fs.New},
		sdktest.Capsule{Manifest: openai.Manifest, New: openai.New, Config: map[string]string{"base_url": srv.URL + "/v1"}},
	)
	if err := os.WriteFile(filepath.Join(k.Workspace, "README.md"), []byte("# Demo\nThe secret word is tangerine.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	res := k.RunPrompt(ipc.DefaultPrincipal, "s1", "What does README.md say?", ipc.PromptContext{Provider: openai.Provider, Model: "Qwen/Qwen2.5-7B-Instruct"})
	if res.Final.Outcome != ipc.OutcomeAnswer || res.Final.Text != "The workspace holds a README." {
		t.Fatalf("final %+v", res.Final)
	}
	if len(res.Finished) != 1 || res.Finished[0].Name != "read_file" || res.Finished[0].IsError || !strings.Contains(res.Finished[0].Summary, "tangerine") {
		t.Fatalf("tool rounds %+v", res.Finished)
	}
	reqs := srv.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want the tool call's and the answer's", len(reqs))
	}
	var body struct {
		Model    string `json:"model"`
		Messages []struct {
			Role       string          `json:"role"`
			Content    json.RawMessage `json:"content"`
			ToolCallID string          `json:"tool_call_id"`
			ToolCalls  []struct {
				ID       string `json:"id"`
				Function struct{ Name, Arguments string }
			} `json:"tool_calls"`
		} `json:"messages"`
		Tools []struct {
			Function struct{ Name string } `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(reqs[1].body, &body); err != nil {
		t.Fatal(err)
	}
	if body.Model != "Qwen/Qwen2.5-7B-Instruct" {
		t.Fatalf("model %q, not the prompt's", body.Model)
	}
	m := body.Messages
	if len(m) != 4 || m[0].Role != "system" || len(m[0].Content) < 10 || m[1].Role != "user" || m[2].Role != "assistant" || m[3].Role != "tool" {
		t.Fatalf("messages: %s", reqs[1].body)
	}
	if len(m[2].ToolCalls) != 1 || m[2].ToolCalls[0].Function.Name != "read_file" || m[2].ToolCalls[0].ID == "" ||
		m[3].ToolCallID != m[2].ToolCalls[0].ID || !strings.Contains(string(m[3].Content), "tangerine") {
		t.Fatalf("the call and its result do not pair up: %s", reqs[1].body)
	}
	var args map[string]string
	if err := json.Unmarshal([]byte(m[2].ToolCalls[0].Function.Arguments), &args); err != nil || args["file_path"] != "README.md" {
		t.Fatalf("the call's arguments as the model sent them: %q", m[2].ToolCalls[0].Function.Arguments)
	}
	found := false
	for _, tool := range body.Tools {
		found = found || tool.Function.Name == "read_file"
	}
	if !found {
		t.Fatalf("read_file was not offered: %s", reqs[1].body)
	}
}
