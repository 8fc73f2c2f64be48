package kernel

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/capsules/fs"
	"github.com/astrid-go/astrid/capsules/react"
	"github.com/astrid-go/astrid/capsules/replay"
	"github.com/astrid-go/astrid/capsules/router"
	"github.com/astrid-go/astrid/capsules/session"
	"github.com/astrid-go/astrid/internal/agentclient"
	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/manifest"
	"github.com/astrid-go/astrid/sdk"
)

// passThroughAssemblerManifest is a test-only prompt builder: it answers
// prompt_builder.v1.assemble with the messages it was given and no tools.
var passThroughAssemblerManifest = []byte(`
[package]
name = "test-pass-through-assembler"
version = "0.1.0"

[subscribe]
"prompt_builder.v1.assemble" = { wit = "opaque", handler = "assemble" }

[publish]
"prompt_builder.v1.response.assemble" = "opaque"
`)

func newPassThroughAssembler() *sdk.Capsule {
	c := sdk.New("test fixture: passes the messages through")
	c.Handle(react.AssembleTopic, "assemble", func(call *sdk.Call) error {
		var req react.AssembleResponse
		if err := call.Decode(&req); err != nil {
			return err
		}
		return call.PublishJSON(react.AssembledTopic, react.AssembleResponse{RequestID: req.RequestID, SessionID: req.SessionID, Messages: req.Messages})
	})
	c.Publishes(react.AssembledTopic)
	return c
}

// The agent loop built to wasm runs the demo's turn (read_file through
// the router, then the answer) as it does natively (capsules/react's
// tests): deltas, the tool call started and finished, one final answer,
// and the history in the session store.
func TestReactWasm(t *testing.T) {
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "README.md"), []byte("# A project\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	k, err := Boot(context.Background(), Options{
		Home: t.TempDir(), Workspace: ws, Config: config.Default(), Logger: logger,
		Builtins: []Builtin{
			{Manifest: router.Manifest, New: router.New},
			{Manifest: fs.Manifest, New: fs.New},
			{Manifest: session.Manifest, New: session.New},
			{Manifest: replay.Manifest, New: replay.New},
			{Manifest: passThroughAssemblerManifest, New: newPassThroughAssembler},
		},
		Frontends: append(testFrontends(), agentclient.ACL(), dispatch.CapsuleACL{ID: "test-session-client",
			Publish: []string{session.GetMessagesTopic}, Subscribe: []string{"session.v1.response.*"}}),
	})
	if err != nil {
		t.Fatal(err)
	}
	loadAsWasm(t, k, newWasmRuntime(t, k), "../../capsules/react", react.Manifest)
	m, _ := manifest.Parse(react.Manifest, "Capsule.toml", "")
	if c, ok := k.Registry.Get(m.ID()); !ok || len(c.Engines()) != 1 || c.Engines()[0] != "wasm" {
		t.Fatalf("%s is not loaded through the wasm engine (%v)", m.ID(), ok)
	}

	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	var text strings.Builder
	var kinds []agentclient.EventKind
	final, err := agentclient.Run(ctx, k.Frontend(), agentclient.Prompt{SessionID: "w1", Text: "What is in this workspace?"}, func(_ *agentclient.Turn, ev agentclient.Event) {
		kinds = append(kinds, ev.Kind)
		switch ev.Kind {
		case agentclient.EventDelta:
			text.WriteString(ev.Delta.Delta)
		case agentclient.EventToolFinished:
			if ev.ToolFinished.Name != "read_file" || ev.ToolFinished.IsError || !strings.Contains(ev.ToolFinished.Summary, "# A project") {
				t.Errorf("tool finished %+v", ev.ToolFinished)
			}
		}
	})
	if err != nil || final.Outcome != ipc.OutcomeAnswer || !strings.HasPrefix(final.Text, "I read README.md.") {
		t.Fatalf("final %+v, %v", final, err)
	}
	if !strings.Contains(text.String(), "Let me read README.md first.") || !strings.Contains(text.String(), final.Text) {
		t.Fatalf("deltas %q", text.String())
	}
	if !containsInOrder(kinds, agentclient.EventToolStarted, agentclient.EventToolFinished, agentclient.EventFinal) {
		t.Fatalf("events %v", kinds)
	}

	caller := dispatch.Caller{Capsule: "test-session-client", Principal: ipc.DefaultPrincipal}
	sub, err := k.Dispatcher.Subscribe(caller, session.ReplyTopic(session.OpGetMessages, "c1"), true)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if _, err := k.Dispatcher.Publish(caller, session.GetMessagesTopic, []byte(`{"session_id":"w1","correlation_id":"c1"}`)); err != nil {
		t.Fatal(err)
	}
	d, err := sub.Recv(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var h session.MessagesReply
	if err := json.Unmarshal(ipc.GuestBytes(d.Envelope.Payload), &h); err != nil || len(h.Messages) != 4 ||
		h.Messages[1].Content.Kind != ipc.ContentToolCalls || h.Messages[2].Content.Kind != ipc.ContentToolResult {
		t.Fatalf("history %+v (%v)", h.Messages, err)
	}
}

func containsInOrder(kinds []agentclient.EventKind, want ...agentclient.EventKind) bool {
	for _, k := range kinds {
		if len(want) > 0 && k == want[0] {
			want = want[1:]
		}
	}
	return len(want) == 0
}
