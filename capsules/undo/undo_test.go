package undo_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/astrid-go/astrid/capsules/approval"
	"github.com/astrid-go/astrid/capsules/fs"
	"github.com/astrid-go/astrid/capsules/promptbuilder"
	"github.com/astrid-go/astrid/capsules/react"
	"github.com/astrid-go/astrid/capsules/replay"
	"github.com/astrid-go/astrid/capsules/session"
	"github.com/astrid-go/astrid/capsules/shell"
	"github.com/astrid-go/astrid/capsules/undo"
	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk/sdktest"
)

func TestRegistrationsMatchManifest(t *testing.T) {
	sdktest.CheckRegistrations(t, undo.Manifest, undo.New())
}

// bootAgent runs the agent stack with the undo capsule, the replay
// provider playing script.
func bootAgent(t *testing.T, script string) *sdktest.Kernel {
	t.Helper()
	k := sdktest.NewAgent(t, sdktest.AgentOptions{},
		sdktest.Capsule{Manifest: react.Manifest, New: react.New, Config: map[string]string{"provider": "replay"}},
		sdktest.Capsule{Manifest: promptbuilder.Manifest, New: promptbuilder.New},
		sdktest.Capsule{Manifest: session.Manifest, New: session.New},
		sdktest.Capsule{Manifest: replay.Manifest, New: replay.New, Config: map[string]string{"script": "script.jsonl"}},
		sdktest.Capsule{Manifest: approval.Manifest, New: approval.New},
		sdktest.Capsule{Manifest: undo.Manifest, New: undo.New},
		sdktest.Capsule{Manifest: fs.Manifest, New: fs.New},
		sdktest.Capsule{Manifest: shell.Manifest, New: shell.New},
	)
	write(t, k, "script.jsonl", script)
	return k
}

func write(t *testing.T, k *sdktest.Kernel, name, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(k.Workspace, name), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, k *sdktest.Kernel, name string) (string, bool) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(k.Workspace, name))
	if os.IsNotExist(err) {
		return "", false
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b), true
}

// call is one scripted tool call.
type call struct {
	tool string
	args any
}

// toolTurn is a replay script turn: asked with prompt, the model makes
// calls (ids <prompt-tag>1, 2, … in one round), then answers "done".
func toolTurn(tag, prompt string, calls ...call) string {
	var ids []string
	out := ""
	for i, c := range calls {
		id := tag + strconv.Itoa(i+1)
		ids = append(ids, `"`+id+`"`)
		raw, _ := json.Marshal(c.args)
		argsJSON, _ := json.Marshal(string(raw))
		out += `{"ToolCallStart": {"id": "` + id + `", "name": "` + c.tool + `"}}
{"ToolCallDelta": {"id": "` + id + `", "args_delta": ` + string(argsJSON) + `}}
{"ToolCallEnd": {"id": "` + id + `"}}
`
	}
	return `{"match": {"tool_results": [` + strings.Join(ids, ", ") + `]}}
{"TextDelta": "done"}
"Done"
{"match": {"user": "` + prompt + `"}}
` + out + `"Done"
`
}

// approve is n approvals.
func approve(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = ipc.DecisionApprove
	}
	return out
}

var asks atomic.Int64

// undoTurn asks for session s1's turn n (0: the latest) to be undone.
func undoTurn(t *testing.T, k *sdktest.Kernel, n int) undo.Reply {
	t.Helper()
	corr := "u" + strconv.FormatInt(asks.Add(1), 10)
	body := k.SessionAsk(ipc.DefaultPrincipal, undo.RequestTopic, undo.Request{SessionID: "s1", Turn: n, CorrelationID: corr}, ipc.SessionResponseTopic("undo", corr))
	var r undo.Reply
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatalf("undo reply %s: %v", body, err)
	}
	return r
}

func whats(r undo.Reply) map[string]string {
	out := map[string]string{}
	for _, f := range r.Files {
		out[f.Path] = f.What
	}
	return out
}

// A turn's writes, edits, deletes and moves are undone, newest turn
// first; a turn is undone once; the reply says what happened to each.
func TestUndoRestoresATurnsFiles(t *testing.T) {
	script := toolTurn("a", "first edit",
		call{"write_file", map[string]string{"file_path": "notes.txt", "content": "v2"}},
		call{"write_file", map[string]string{"file_path": "new.txt", "content": "created"}},
		call{"delete_file", map[string]string{"file_path": "gone.txt"}},
		call{"move_file", map[string]string{"source_path": "from.txt", "destination_path": "to.txt"}},
	) + toolTurn("b", "second edit",
		call{"replace_in_file", map[string]string{"file_path": "notes.txt", "old_string": "v2", "new_string": "v3"}},
	)
	k := bootAgent(t, script)
	write(t, k, "notes.txt", "v1")
	write(t, k, "gone.txt", "keep me")
	write(t, k, "from.txt", "moving")

	k.RunPromptAnswering(ipc.DefaultPrincipal, "s1", "first edit", approve(4)...)
	k.RunPromptAnswering(ipc.DefaultPrincipal, "s1", "second edit", approve(1)...)
	if got, _ := read(t, k, "notes.txt"); got != "v3" {
		t.Fatalf("notes.txt = %q before undo", got)
	}

	corr := "list" + strconv.FormatInt(asks.Add(1), 10)
	var list undo.Reply
	if err := json.Unmarshal(k.SessionAsk(ipc.DefaultPrincipal, undo.RequestTopic, undo.Request{SessionID: "s1", List: true, CorrelationID: corr}, ipc.SessionResponseTopic("undo", corr)), &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Kept) != 2 || list.Kept[0].Turn != 1 || strings.Join(list.Kept[0].Files, " ") != "notes.txt new.txt gone.txt from.txt to.txt" || list.Kept[1].Undone {
		t.Fatalf("kept turns: %+v", list.Kept)
	}
	r := undoTurn(t, k, 0)
	if r.Error != "" || r.Turn != 2 || len(r.Files) != 1 || !r.Files[0].Restored {
		t.Fatalf("undo of the second turn: %+v", r)
	}
	if got, _ := read(t, k, "notes.txt"); got != "v2" {
		t.Fatalf("notes.txt = %q after undoing turn 2", got)
	}
	r = undoTurn(t, k, 0)
	if r.Error != "" || r.Turn != 1 || len(r.Files) != 5 {
		t.Fatalf("undo of the first turn: %+v", r)
	}
	for name, want := range map[string]string{"notes.txt": "v1", "gone.txt": "keep me", "from.txt": "moving"} {
		if got, ok := read(t, k, name); !ok || got != want {
			t.Errorf("%s = %q (exists %v), want %q", name, got, ok, want)
		}
	}
	for _, name := range []string{"new.txt", "to.txt"} {
		if _, ok := read(t, k, name); ok {
			t.Errorf("%s, which the turn created, is still there", name)
		}
	}
	if r := undoTurn(t, k, 0); !strings.Contains(r.Error, "no turn left to undo") {
		t.Fatalf("a third undo: %+v", r)
	}
	if r := undoTurn(t, k, 1); !strings.Contains(r.Error, "was undone already") {
		t.Fatalf("turn 1 again: %+v", r)
	}
	if r := undoTurn(t, k, 7); !strings.Contains(r.Error, "keeps no turn 7") {
		t.Fatalf("turn 7: %+v", r)
	}
}

// What happened to a file since its turn decides: changed since → refused,
// saying how; deleted since → put back; replaced by a directory → left
// alone; a turn that ran shell commands says their changes stay.
func TestUndoRefusesWhatChangedSince(t *testing.T) {
	script := toolTurn("a", "edit three",
		call{"write_file", map[string]string{"file_path": "edited.txt", "content": "by the turn"}},
		call{"write_file", map[string]string{"file_path": "deleted.txt", "content": "by the turn"}},
		call{"write_file", map[string]string{"file_path": "dir.txt", "content": "by the turn"}},
		call{"run_shell_command", map[string]string{"command": "echo shell > shell.txt"}},
	)
	k := bootAgent(t, script)
	for _, n := range []string{"edited.txt", "deleted.txt", "dir.txt"} {
		write(t, k, n, "original")
	}
	k.RunPromptAnswering(ipc.DefaultPrincipal, "s1", "edit three", approve(4)...)
	write(t, k, "edited.txt", "by the person afterwards")
	if err := os.Remove(filepath.Join(k.Workspace, "deleted.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(k.Workspace, "dir.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(k.Workspace, "dir.txt"), 0o700); err != nil {
		t.Fatal(err)
	}

	r := undoTurn(t, k, 0)
	w := whats(r)
	if r.Error != "" || !r.Shell {
		t.Fatalf("undo: %+v", r)
	}
	if !strings.Contains(w["edited.txt"], "not restored: it changed since the turn (now 24 bytes, the turn left other content)") {
		t.Errorf("edited.txt: %q", w["edited.txt"])
	}
	if !strings.Contains(w["deleted.txt"], "restored") || !strings.Contains(w["deleted.txt"], "deleted since the turn") {
		t.Errorf("deleted.txt: %q", w["deleted.txt"])
	}
	if !strings.Contains(w["dir.txt"], "it is a directory now") {
		t.Errorf("dir.txt: %q", w["dir.txt"])
	}
	if got, _ := read(t, k, "edited.txt"); got != "by the person afterwards" {
		t.Errorf("edited.txt = %q: the person's change was overwritten", got)
	}
	if got, _ := read(t, k, "deleted.txt"); got != "original" {
		t.Errorf("deleted.txt = %q", got)
	}
	if fi, err := os.Stat(filepath.Join(k.Workspace, "dir.txt")); err != nil || !fi.IsDir() {
		t.Errorf("dir.txt: %v, %v", fi, err)
	}
}

// What is kept is bounded: a file over MaxFileBytes is recorded but not
// kept (undo says so and leaves it), and a session keeps its last
// MaxTurns turns that changed files.
func TestUndoBounds(t *testing.T) {
	script := toolTurn("big", "write big", call{"write_file", map[string]string{"file_path": "big.txt", "content": "small now"}})
	for i := range undo.MaxTurns + 1 {
		n := strconv.Itoa(i)
		script += toolTurn("t"+n+"-", "write "+n+" ", call{"write_file", map[string]string{"file_path": "n.txt", "content": n}})
	}
	k := bootAgent(t, script)
	write(t, k, "big.txt", strings.Repeat("x", undo.MaxFileBytes+1))
	k.RunPromptAnswering(ipc.DefaultPrincipal, "s1", "write big", approve(1)...)
	r := undoTurn(t, k, 0)
	if w := whats(r)["big.txt"]; r.Error != "" || !strings.Contains(w, "its prior content (524289 bytes) was not kept (at most 512 KiB a file") {
		t.Fatalf("undo of a large file: %+v", r)
	}
	if got, _ := read(t, k, "big.txt"); got != "small now" {
		t.Fatalf("big.txt = %q", got)
	}

	for i := range undo.MaxTurns + 1 {
		k.RunPromptAnswering(ipc.DefaultPrincipal, "s1", "write "+strconv.Itoa(i)+" ", approve(1)...)
	}
	if r := undoTurn(t, k, 1); !strings.Contains(r.Error, "keeps no turn 1") || !strings.Contains(r.Error, "kept: 3 to 22") {
		t.Fatalf("the oldest turns are not dropped: %+v", r)
	}
}

// Deleting a session (astrid session delete, astrid gc) removes what was
// kept for it.
func TestADeletedSessionTakesItsSnapshotsAlong(t *testing.T) {
	k := bootAgent(t, toolTurn("a", "an edit", call{"write_file", map[string]string{"file_path": "notes.txt", "content": "v2"}}))
	write(t, k, "notes.txt", "v1")
	k.RunPromptAnswering(ipc.DefaultPrincipal, "s1", "an edit", approve(1)...)
	kept := func() int {
		corr := "list" + strconv.FormatInt(asks.Add(1), 10)
		var list undo.Reply
		if err := json.Unmarshal(k.SessionAsk(ipc.DefaultPrincipal, undo.RequestTopic, undo.Request{SessionID: "s1", List: true, CorrelationID: corr}, ipc.SessionResponseTopic("undo", corr)), &list); err != nil {
			t.Fatal(err)
		}
		return len(list.Kept)
	}
	if n := kept(); n != 1 {
		t.Fatalf("%d turns kept before the delete, want 1", n)
	}
	corr := "del" + strconv.FormatInt(asks.Add(1), 10)
	k.SessionAsk(ipc.DefaultPrincipal, session.DeleteTopic, map[string]string{"session_id": "s1", "correlation_id": corr}, session.ReplyTopic(session.OpDelete, corr))
	testutil.WaitFor(t, 30*time.Second, "the undo capsule to forget the deleted session", func() bool { return kept() == 0 })
}
