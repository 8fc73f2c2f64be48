package anthropic_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/capsules/fs"
	"github.com/astrid-go/astrid/capsules/promptbuilder"
	"github.com/astrid-go/astrid/capsules/react"
	"github.com/astrid-go/astrid/capsules/session"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk/sdktest"
)

// A whole turn through the real agent stack (react, the prompt builder,
// the session store, the router, the fs tools) with this provider against
// a local server: the model asks for two read_file calls at once, the
// tools run, and the server, seeing both results, answers. The second
// request the server received holds the system prompt, the model the
// prompt asked for, the calls as tool_use blocks and both results in ONE
// user message under the same ids.
func TestATurnThroughTheAgent(t *testing.T) {
	api := newFakeAPI(t, reply{body: fixture(t, "parallel_tools.sse"), chunk: 100}, reply{body: fixture(t, "text.sse")})
	k := sdktest.NewAgent(t, sdktest.AgentOptions{},
		sdktest.Capsule{Manifest: react.Manifest, New: react.New, Config: map[string]string{"provider": "anthropic"}},
		sdktest.Capsule{Manifest: promptbuilder.Manifest, New: promptbuilder.New},
		sdktest.Capsule{Manifest: session.Manifest, New: session.New},
		sdktest.Capsule{Manifest: fs.Manifest, New: fs.New},
		provider(api, nil),
	)
	for name, body := range map[string]string{"README.md": "# The project\n", "go.mod": "module example.com/x\n"} {
		if err := os.WriteFile(filepath.Join(k.Workspace, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	res := k.RunPrompt(ipc.DefaultPrincipal, "s1", "What do README.md and go.mod say?", ipc.PromptContext{Model: "claude-opus-5-5"})
	if res.Final.Outcome != ipc.OutcomeAnswer || res.Final.Text != "Hello!" {
		t.Fatalf("final %+v (events %+v)", res.Final, res.Events)
	}
	if len(res.Finished) != 2 || res.Finished[0].IsError || res.Finished[1].IsError {
		t.Fatalf("tool calls %+v", res.Finished)
	}
	reqs := api.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	for i, r := range reqs {
		if r.body["model"] != "claude-opus-5-5" {
			t.Errorf("request %d: model %v, want the prompt's", i, r.body["model"])
		}
		// The prompt builder's system prompt, as the top-level system.
		sys, _ := r.body["system"].([]any)
		if len(sys) != 1 || len(sys[0].(map[string]any)["text"].(string)) < 20 {
			t.Errorf("request %d: system %v", i, r.body["system"])
		}
		tools, _ := r.body["tools"].([]any)
		if !strings.Contains(string(r.raw), `"name":"read_file"`) || len(tools) == 0 {
			t.Errorf("request %d: tools %s", i, r.raw)
		}
	}
	msgs, _ := reqs[1].body["messages"].([]any)
	if len(msgs) != 3 {
		t.Fatalf("second request: %d messages, want user, assistant, user: %s", len(msgs), reqs[1].raw)
	}
	assistant := msgs[1].(map[string]any)
	results := msgs[2].(map[string]any)
	if assistant["role"] != "assistant" || results["role"] != "user" {
		t.Fatalf("roles: %s", reqs[1].raw)
	}
	var useIDs, resultIDs []string
	for _, b := range assistant["content"].([]any) {
		if blk := b.(map[string]any); blk["type"] == "tool_use" {
			useIDs = append(useIDs, blk["id"].(string))
		}
	}
	var contents []string
	for _, b := range results["content"].([]any) {
		blk := b.(map[string]any)
		if blk["type"] != "tool_result" {
			t.Fatalf("a %v block among the tool results: %s", blk["type"], reqs[1].raw)
		}
		resultIDs = append(resultIDs, blk["tool_use_id"].(string))
		if blk["is_error"] != false {
			t.Errorf("is_error %v", blk["is_error"])
		}
		for _, c := range blk["content"].([]any) {
			contents = append(contents, c.(map[string]any)["text"].(string))
		}
	}
	if len(useIDs) != 2 || strings.Join(useIDs, ",") != strings.Join(resultIDs, ",") || useIDs[0] == useIDs[1] {
		t.Fatalf("tool_use ids %q, tool_result ids %q", useIDs, resultIDs)
	}
	joined := strings.Join(contents, "\n")
	if !strings.Contains(joined, "# The project") || !strings.Contains(joined, "module example.com/x") {
		t.Errorf("tool results %q", joined)
	}
}
