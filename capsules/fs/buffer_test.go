package fs_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/astrid-go/astrid/capsules/approval"
	"github.com/astrid-go/astrid/capsules/fs"
	"github.com/astrid-go/astrid/capsules/promptbuilder"
	"github.com/astrid-go/astrid/capsules/react"
	"github.com/astrid-go/astrid/capsules/replay"
	"github.com/astrid-go/astrid/capsules/session"
	"github.com/astrid-go/astrid/internal/agentclient"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk/sdktest"
)

// editorStandIn answers session's buffer requests as astrid acp does for
// an editor (the editor's side of it is cmd/astrid's ACP tests): buffers
// by path; a write is saved with a marker. It records every request.
type editorStandIn struct {
	mu      sync.Mutex
	buffers map[string]string
	asked   []ipc.EditorBufferRequest
}

func (e *editorStandIn) serve(t *testing.T, k *sdktest.Kernel, session string) {
	t.Helper()
	caller := dispatch.Caller{Capsule: agentclient.ClientID, Principal: ipc.DefaultPrincipal}
	sub, err := k.Agent().Subscribe(caller, ipc.EditorBufferTopic(session), true)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); sub.Close(); <-done })
	go func() {
		defer close(done)
		for {
			d, err := sub.Recv(ctx)
			if err != nil {
				return
			}
			var q ipc.EditorBufferRequest
			if json.Unmarshal(ipc.GuestBytes(d.Envelope.Payload), &q) != nil {
				continue
			}
			e.mu.Lock()
			e.asked = append(e.asked, q)
			r := ipc.EditorBufferReply{RequestID: q.RequestID}
			switch q.Op {
			case ipc.EditorRead:
				r.Content = e.buffers[q.Path]
			case ipc.EditorWrite:
				e.buffers[q.Path] = q.Content
				if err := os.WriteFile(q.Path, []byte(q.Content+"(saved by the editor)"), 0o600); err != nil {
					r.Error = err.Error()
				}
			}
			e.mu.Unlock()
			payload, _ := json.Marshal(r)
			answer := caller
			answer.Continues = true
			if _, err := k.Agent().Publish(answer, ipc.EditorBufferReplyTopic(q.RequestID), payload); err != nil {
				t.Errorf("answer: %v", err)
			}
		}
	}()
}

func (e *editorStandIn) requests() []ipc.EditorBufferRequest {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]ipc.EditorBufferRequest(nil), e.asked...)
}

// scriptTurn is a replay turn: asked prompt, the model calls tool with
// args (call id id), then answers "done".
func scriptTurn(prompt, id, tool string, args any) string {
	raw, _ := json.Marshal(args)
	argsJSON, _ := json.Marshal(string(raw))
	return `{"match": {"tool_results": ["` + id + `"]}}
{"TextDelta": "done"}
"Done"
{"match": {"user": "` + prompt + `"}}
{"ToolCallStart": {"id": "` + id + `", "name": "` + tool + `"}}
{"ToolCallDelta": {"id": "` + id + `", "args_delta": ` + string(argsJSON) + `}}
{"ToolCallEnd": {"id": "` + id + `"}}
"Done"
`
}

// In an agent turn whose session's frontend offers the editor's buffers,
// read_file gets the buffer's text and write_file has the editor write,
// once the grants allowed the path (checked and named by the host, also
// through the wasm host); a session no frontend serves reads the disk at
// once; a path outside the grants is refused without a question.
func TestAgentTurnsUseTheirSessionsEditorBuffer(t *testing.T) {
	for _, engine := range []string{"native", "wasm"} {
		t.Run(engine, func(t *testing.T) {
			if engine == "wasm" && testing.Short() {
				t.Skip("builds a wasm module")
			}
			fsCapsule := sdktest.Capsule{Manifest: fs.Manifest, New: fs.New}
			if engine == "wasm" {
				fsCapsule = sdktest.WasmCapsule(t, ".", "astrid-capsule-fs", fs.Manifest)
			}
			k := sdktest.NewAgent(t, sdktest.AgentOptions{},
				sdktest.Capsule{Manifest: react.Manifest, New: react.New, Config: map[string]string{"provider": "replay"}},
				sdktest.Capsule{Manifest: promptbuilder.Manifest, New: promptbuilder.New},
				sdktest.Capsule{Manifest: session.Manifest, New: session.New},
				sdktest.Capsule{Manifest: replay.Manifest, New: replay.New, Config: map[string]string{"script": "script.jsonl"}},
				sdktest.Capsule{Manifest: approval.Manifest, New: approval.New},
				fsCapsule,
			)
			outside, _ := filepath.EvalSymlinks(t.TempDir())
			secret := filepath.Join(outside, "secret.txt")
			notes, draft := filepath.Join(k.Workspace, "notes.txt"), filepath.Join(k.Workspace, "draft.txt")
			for name, text := range map[string]string{notes: "on disk", draft: "old draft", secret: "secret"} {
				if err := os.WriteFile(name, []byte(text), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			script := scriptTurn("show", "c1", "read_file", map[string]string{"file_path": "notes.txt"}) +
				scriptTurn("write", "c2", "write_file", map[string]string{"file_path": "draft.txt", "content": "new draft"}) +
				scriptTurn("peek", "c3", "read_file", map[string]string{"file_path": secret})
			if err := os.WriteFile(filepath.Join(k.Workspace, "script.jsonl"), []byte(script), 0o600); err != nil {
				t.Fatal(err)
			}
			ed := &editorStandIn{buffers: map[string]string{notes: "unsaved"}}
			ed.serve(t, k, "s-editor")

			k.RunPrompt(ipc.DefaultPrincipal, "s-editor", "show", ipc.PromptContext{})
			if r := k.LastToolResult(ipc.DefaultPrincipal, "s-editor"); r.IsError || r.Content != "unsaved" {
				t.Fatalf("read_file with the buffer open: %+v", r)
			}
			// Another session has no editor: the disk, at once.
			k.RunPrompt(ipc.DefaultPrincipal, "s-plain", "show", ipc.PromptContext{})
			if r := k.LastToolResult(ipc.DefaultPrincipal, "s-plain"); r.IsError || r.Content != "on disk" {
				t.Fatalf("read_file without an editor: %+v", r)
			}
			k.RunPromptAnswering(ipc.DefaultPrincipal, "s-editor", "write", ipc.DecisionApprove)
			if data, _ := os.ReadFile(draft); string(data) != "new draft(saved by the editor)" {
				t.Fatalf("draft.txt after write_file through the editor: %q", data)
			}
			k.RunPrompt(ipc.DefaultPrincipal, "s-editor", "peek", ipc.PromptContext{})
			if r := k.LastToolResult(ipc.DefaultPrincipal, "s-editor"); !r.IsError || strings.Contains(r.Content, "secret\"") || r.Content == "secret" {
				t.Fatalf("read_file outside the grants: %+v", r)
			}
			var got []string
			for _, q := range ed.requests() {
				got = append(got, q.Op+" "+q.Path+" "+strconv.Quote(q.Content))
			}
			want := []string{"read " + notes + ` ""`, "write " + draft + ` "new draft"`}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("the editor was asked\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}
