package kernel

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/capsules/fs"
	"github.com/astrid-go/astrid/capsules/promptbuilder"
	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/manifest"
	"github.com/astrid-go/astrid/sdk"
)

// pbHook is a native before_build hook answering r, with or without
// allow_prompt_injection.
func pbHook(id string, grant bool, r promptbuilder.HookResponse) Builtin {
	toml := fmt.Sprintf("[package]\nname = %q\nversion = \"0.1.0\"\n\n[capabilities]\nallow_prompt_injection = %v\n\n"+
		"[subscribe]\n\"prompt_builder.v1.hook.before_build\" = { wit = \"opaque\", handler = \"before_build\" }\n\n"+
		"[publish]\n\"prompt_builder.v1.hook_response.*\" = \"opaque\"\n", id, grant)
	return Builtin{Manifest: []byte(toml), New: func() *sdk.Capsule {
		c := sdk.New("a test hook")
		c.Handle(promptbuilder.BeforeBuildTopic, "before_build", func(call *sdk.Call) error {
			var req promptbuilder.HookRequest
			if err := call.Decode(&req); err != nil {
				return err
			}
			return call.PublishJSON(req.ResponseTopic, r)
		})
		c.Publishes("prompt_builder.v1.hook_response.*")
		return c
	}}
}

// The prompt builder built to wasm assembles as it does natively
// (capsules/promptbuilder's tests): the describe fan-out, AGENTS.md read
// through the host, hooks gated by the holds_grant import, error answers.
func TestPromptBuilderWasm(t *testing.T) {
	const client = "test-prompt-client"
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "AGENTS.md"), []byte("PROJECT RULES"), 0o600); err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	k, err := Boot(context.Background(), Options{
		Home: t.TempDir(), Workspace: ws, Config: config.Default(), Logger: logger,
		Builtins: []Builtin{{Manifest: fs.Manifest, New: fs.New},
			pbHook("hook-trusted", true, promptbuilder.HookResponse{AppendSystemContext: "TRUSTED", PrependContext: "ctx-trusted"}),
			pbHook("hook-plain", false, promptbuilder.HookResponse{SystemPrompt: "EVIL", PrependContext: "ctx-plain"})},
		Frontends: append(testFrontends(), dispatch.CapsuleACL{ID: client,
			Publish: []string{promptbuilder.AssembleTopic}, Subscribe: []string{"prompt_builder.v1.response.*"}}),
	})
	if err != nil {
		t.Fatal(err)
	}
	loadAsWasm(t, k, newWasmRuntime(t, k), "../../capsules/promptbuilder", promptbuilder.Manifest)
	m, _ := manifest.Parse(promptbuilder.Manifest, "Capsule.toml", "")
	if c, ok := k.Registry.Get(m.ID()); !ok || len(c.Engines()) != 1 || c.Engines()[0] != "wasm" {
		t.Fatalf("%s is not loaded through the wasm engine (%v)", m.ID(), ok)
	}
	caller := dispatch.Caller{Capsule: client, Principal: ipc.DefaultPrincipal}
	sub, err := k.Dispatcher.Subscribe(caller, promptbuilder.ResponseTopic, true)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	ask := func(req map[string]any) (r struct {
		promptbuilder.Response
		Error string `json:"error"`
	}) {
		t.Helper()
		b, _ := json.Marshal(req)
		if _, err := k.Dispatcher.Publish(caller, promptbuilder.AssembleTopic, b); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		d, err := sub.Recv(ctx)
		if err != nil {
			t.Fatalf("no answer: %v", err)
		}
		if err := json.Unmarshal(ipc.GuestBytes(d.Envelope.Payload), &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	for _, id := range []string{"r1", "r2"} { // the second from the cache
		r := ask(map[string]any{"request_id": id, "messages": []ipc.Message{ipc.TextMessage(ipc.RoleUser, "hi")}})
		if r.Error != "" || r.RequestID != id {
			t.Fatalf("%s: %+v", id, r)
		}
		if !strings.HasPrefix(r.SystemPrompt, promptbuilder.DefaultSystemPrompt+"\n") || !strings.Contains(r.SystemPrompt, "PROJECT RULES") ||
			!strings.HasSuffix(r.SystemPrompt, "\nTRUSTED") || strings.Contains(r.SystemPrompt, "EVIL") {
			t.Fatalf("%s: system prompt %q", id, r.SystemPrompt)
		}
		if r.UserContextPrefix != "ctx-trusted\nctx-plain" && r.UserContextPrefix != "ctx-plain\nctx-trusted" {
			t.Fatalf("%s: user context prefix %q", id, r.UserContextPrefix)
		}
		var names []string
		for _, tl := range r.Tools {
			names = append(names, tl.Name)
		}
		if !strings.Contains(strings.Join(names, ","), "read_file") {
			t.Fatalf("%s: tools %v", id, names)
		}
	}
	if r := ask(map[string]any{"request_id": "bad.id", "session_id": "s1"}); r.Error == "" || r.RequestID != "bad.id" || r.SessionID != "s1" {
		t.Fatalf("bad request: %+v", r)
	}
}
