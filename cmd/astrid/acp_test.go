package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/astrid-go/astrid/internal/testutil"
)

// acpFakeOpenAI is an OpenAI-compatible server that plays the model by the
// last user message of each request: "edit" reads notes.txt, replaces
// "old" with "new" and says so; "write" writes draft.txt; "show" reads
// notes.txt and says what it read; "peek <path>" reads path; "list" lists the
// workspace; "echo" calls the offered tool named "…__echo" (an MCP
// server's) or says none is offered; "think" reasons before it answers; a message with images
// says how many PNGs it saw; "recall" answers with the session's first
// user message; "slow" streams a word and then nothing until its request
// ends; anything else is answered "Hello there.".
type acpFakeOpenAI struct {
	srv *httptest.Server
	mu  sync.Mutex
	// slowEnded counts the "slow" requests whose client went away.
	slowEnded int
	stop      chan struct{}
}

func newACPFakeOpenAI(t *testing.T) *acpFakeOpenAI {
	f := &acpFakeOpenAI{stop: make(chan struct{})}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(func() { close(f.stop); f.srv.Close() })
	return f
}

func (f *acpFakeOpenAI) serve(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	body, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(body, &req)
	first, last, tools, toolOut := "", "", 0, ""
	for _, m := range req.Messages {
		switch m.Role {
		case "user":
			if first == "" {
				first = string(m.Content)
			}
			last, tools = string(m.Content), 0
		case "tool":
			tools++
			_ = json.Unmarshal(m.Content, &toolOut)
		}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	call := func(name, args string) {
		io.WriteString(w, openAIChunk(`{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_`+name+`","type":"function","function":{"name":"`+name+`","arguments":`+strconvQuote(args)+`}}]}`, "null"))
		io.WriteString(w, openAIChunk(`{}`, `"tool_calls"`))
		io.WriteString(w, "data: [DONE]\n\n")
	}
	text := func(s string) {
		io.WriteString(w, openAIChunk(`{"role":"assistant","content":`+strconvQuote(s)+`}`, "null"))
		io.WriteString(w, openAIChunk(`{}`, `"stop"`))
		io.WriteString(w, "data: [DONE]\n\n")
	}
	switch {
	case strings.Contains(last, "echo") && tools == 0:
		echo := ""
		for _, t := range req.Tools {
			if strings.HasSuffix(t.Function.Name, "__echo") {
				echo = t.Function.Name
			}
		}
		if echo == "" {
			text("No echo tool is offered.")
		} else {
			call(echo, `{"message":"ping from the editor's server"}`)
		}
	case strings.Contains(last, "echo"):
		text("Echoed.")
	case strings.Contains(last, "recall"):
		text("You first asked: " + first)
	case strings.Contains(last, `"image_url"`):
		text(fmt.Sprintf("I see %d image(s).", strings.Count(last, "data:image/png;base64,iVBORw0KGgo=")))
	case strings.Contains(last, "edit") && tools == 0:
		call("read_file", `{"file_path":"notes.txt"}`)
	case strings.Contains(last, "edit") && tools == 1:
		call("replace_in_file", `{"file_path":"notes.txt","old_string":"old","new_string":"new"}`)
	case strings.Contains(last, "edit"):
		text("Done editing.")
	case strings.Contains(last, "write") && tools == 0:
		call("write_file", `{"file_path":"draft.txt","content":"draft\n"}`)
	case strings.Contains(last, "write"):
		text("Wrote it, or not.")
	case strings.Contains(last, "show") && tools == 0:
		call("read_file", `{"file_path":"notes.txt"}`)
	case strings.Contains(last, "show"):
		text("The file says: " + toolOut)
	case strings.Contains(last, "peek") && tools == 0:
		var said string
		_ = json.Unmarshal([]byte(last), &said)
		call("read_file", `{"file_path":`+strconvQuote(strings.TrimSpace(strings.TrimPrefix(said, "peek")))+`}`)
	case strings.Contains(last, "peek"):
		text("Peeked: " + toolOut)
	case strings.Contains(last, "list") && tools == 0:
		call("list_directory", `{"dir_path":"."}`)
	case strings.Contains(last, "list"):
		text("Listed.")
	case strings.Contains(last, "think"):
		io.WriteString(w, openAIChunk(`{"role":"assistant","content":null,"reasoning_content":"Weighing the options."}`, "null"))
		text("Decided.")
	case strings.Contains(last, "slow"):
		io.WriteString(w, openAIChunk(`{"role":"assistant","content":"Thinking slowly"}`, "null"))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
			f.mu.Lock()
			f.slowEnded++
			f.mu.Unlock()
		case <-f.stop:
		}
	default:
		text("Hello there.")
	}
}

func (f *acpFakeOpenAI) ended() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.slowEnded
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// acpEditor is the editor's side of a connection to `astrid acp`: the
// acp-go-sdk client, keeping every update and answering permission
// requests with answer.
type acpEditor struct {
	t      *testing.T
	cmd    *exec.Cmd
	conn   *acpsdk.ClientSideConnection
	stdin  io.WriteCloser
	writer *lineWriter
	stderr *testutil.SyncBuffer
	// raw keeps every line the agent wrote.
	raw *testutil.SyncBuffer

	mu      sync.Mutex
	updates []acpsdk.SessionNotification
	asked   []acpsdk.RequestPermissionRequest
	answer  func(ctx context.Context, p acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error)
	// offersFS makes initialize declare fs.readTextFile and
	// fs.writeTextFile; buffers are the open buffers by absolute path (a
	// read of another path fails, as in an editor that reads only open
	// files here); fsAsked records every fs/* request: "read <session>
	// <path>", "write <session> <path>".
	offersFS bool
	buffers  map[string]string
	fsAsked  []string
}

// startACP starts `astrid acp` on home (in-process kernel) from dir, with
// the fake server as OpenAI.
func startACP(t *testing.T, home, dir string, fake *acpFakeOpenAI) *acpEditor {
	t.Helper()
	return startACPWith(t, home, dir, fake, "--no-daemon")
}

// startACPWith starts `astrid acp args...`: through the daemon of home
// when one runs and args do not say --no-daemon.
func startACPWith(t *testing.T, home, dir string, fake *acpFakeOpenAI, args ...string) *acpEditor {
	t.Helper()
	cmd := astridProcess(home, append([]string{"acp"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(cmd.Env, "OPENAI_BASE_URL="+fake.srv.URL+"/v1", "OPENAI_API_KEY=", "ANTHROPIC_API_KEY=")
	e := &acpEditor{t: t, cmd: cmd, stderr: &testutil.SyncBuffer{}, raw: &testutil.SyncBuffer{}}
	cmd.Stderr = e.stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	e.stdin, e.writer = in, &lineWriter{w: in}
	e.conn = acpsdk.NewClientSideConnection(e, e.writer, io.TeeReader(out, e.raw))
	return e
}

// lineWriter lets a test write raw lines between the SDK's messages.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (e *acpEditor) initialize(ctx context.Context) acpsdk.InitializeResponse {
	e.t.Helper()
	r, err := e.conn.Initialize(ctx, acpsdk.InitializeRequest{ProtocolVersion: acpsdk.ProtocolVersionNumber,
		ClientCapabilities: acpsdk.ClientCapabilities{Fs: acpsdk.FileSystemCapabilities{ReadTextFile: e.offersFS, WriteTextFile: e.offersFS}}})
	if err != nil {
		e.t.Fatalf("initialize: %v\n%s", err, e.stderr.String())
	}
	return r
}

func (e *acpEditor) newSession(ctx context.Context, cwd string) acpsdk.NewSessionResponse {
	e.t.Helper()
	r, err := e.conn.NewSession(ctx, acpsdk.NewSessionRequest{Cwd: cwd, McpServers: []acpsdk.McpServer{}})
	if err != nil {
		e.t.Fatalf("session/new: %v\n%s", err, e.stderr.String())
	}
	return r
}

// useOpenAI makes session id ask the fake server's model.
func (e *acpEditor) useOpenAI(ctx context.Context, s acpsdk.NewSessionResponse) {
	e.t.Helper()
	e.useModel(ctx, s, "openai:")
}

// useModel makes session id ask the first model offered whose id starts
// with prefix.
func (e *acpEditor) useModel(ctx context.Context, s acpsdk.NewSessionResponse, prefix string) {
	e.t.Helper()
	if s.Models == nil {
		e.t.Fatalf("session/new offered no models\n%s", e.stderr.String())
	}
	for _, m := range s.Models.AvailableModels {
		if strings.HasPrefix(string(m.ModelId), prefix) {
			if _, err := e.conn.UnstableSetSessionModel(ctx, acpsdk.UnstableSetSessionModelRequest{SessionId: s.SessionId, ModelId: acpsdk.UnstableModelId(m.ModelId)}); err != nil {
				e.t.Fatalf("session/set_model %s: %v", m.ModelId, err)
			}
			return
		}
	}
	e.t.Fatalf("no %s model among %+v", prefix, s.Models.AvailableModels)
}

func (e *acpEditor) prompt(ctx context.Context, id acpsdk.SessionId, text string) (acpsdk.PromptResponse, error) {
	return e.conn.Prompt(ctx, acpsdk.PromptRequest{SessionId: id, Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock(text)}})
}

// SessionUpdate implements acpsdk.Client.
func (e *acpEditor) SessionUpdate(_ context.Context, n acpsdk.SessionNotification) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.updates = append(e.updates, n)
	return nil
}

// RequestPermission implements acpsdk.Client.
func (e *acpEditor) RequestPermission(ctx context.Context, p acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error) {
	e.mu.Lock()
	e.asked = append(e.asked, p)
	answer := e.answer
	e.mu.Unlock()
	if answer == nil {
		return acpsdk.RequestPermissionResponse{Outcome: acpsdk.RequestPermissionOutcome{Cancelled: &acpsdk.RequestPermissionOutcomeCancelled{}}}, nil
	}
	return answer(ctx, p)
}

// ReadTextFile implements acpsdk.Client: an open buffer's text.
func (e *acpEditor) ReadTextFile(_ context.Context, p acpsdk.ReadTextFileRequest) (acpsdk.ReadTextFileResponse, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.fsAsked = append(e.fsAsked, "read "+string(p.SessionId)+" "+p.Path)
	text, ok := e.buffers[p.Path]
	if !e.offersFS || !ok {
		return acpsdk.ReadTextFileResponse{}, errors.New("not open")
	}
	return acpsdk.ReadTextFileResponse{Content: text}, nil
}

// WriteTextFile implements acpsdk.Client: the buffer takes the content
// and the editor saves it, as editors do, with its own final newline
// marker, so the test tells the editor's save from astrid's write.
func (e *acpEditor) WriteTextFile(_ context.Context, p acpsdk.WriteTextFileRequest) (acpsdk.WriteTextFileResponse, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.fsAsked = append(e.fsAsked, "write "+string(p.SessionId)+" "+p.Path)
	if !e.offersFS {
		return acpsdk.WriteTextFileResponse{}, errors.New("not offered")
	}
	if e.buffers == nil {
		e.buffers = map[string]string{}
	}
	e.buffers[p.Path] = p.Content
	return acpsdk.WriteTextFileResponse{}, os.WriteFile(p.Path, []byte(p.Content+editorSaved), 0o600)
}

// editorSaved is what the test editor adds to a file it saves.
const editorSaved = "(saved by the editor)\n"

// fsRequests is a copy of the fs/* requests so far.
func (e *acpEditor) fsRequests() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.fsAsked...)
}

func (e *acpEditor) CreateTerminal(context.Context, acpsdk.CreateTerminalRequest) (acpsdk.CreateTerminalResponse, error) {
	return acpsdk.CreateTerminalResponse{}, errors.New("not offered")
}

func (e *acpEditor) KillTerminal(context.Context, acpsdk.KillTerminalRequest) (acpsdk.KillTerminalResponse, error) {
	return acpsdk.KillTerminalResponse{}, errors.New("not offered")
}

func (e *acpEditor) TerminalOutput(context.Context, acpsdk.TerminalOutputRequest) (acpsdk.TerminalOutputResponse, error) {
	return acpsdk.TerminalOutputResponse{}, errors.New("not offered")
}

func (e *acpEditor) ReleaseTerminal(context.Context, acpsdk.ReleaseTerminalRequest) (acpsdk.ReleaseTerminalResponse, error) {
	return acpsdk.ReleaseTerminalResponse{}, errors.New("not offered")
}

func (e *acpEditor) WaitForTerminalExit(context.Context, acpsdk.WaitForTerminalExitRequest) (acpsdk.WaitForTerminalExitResponse, error) {
	return acpsdk.WaitForTerminalExitResponse{}, errors.New("not offered")
}

// of returns the updates of session id so far.
func (e *acpEditor) of(id acpsdk.SessionId) []acpsdk.SessionUpdate {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []acpsdk.SessionUpdate
	for _, n := range e.updates {
		if n.SessionId == id {
			out = append(out, n.Update)
		}
	}
	return out
}

// text is the agent_message_chunk text of updates.
func agentText(updates []acpsdk.SessionUpdate) string {
	var b strings.Builder
	for _, u := range updates {
		if u.AgentMessageChunk != nil && u.AgentMessageChunk.Content.Text != nil {
			b.WriteString(u.AgentMessageChunk.Content.Text.Text)
		}
	}
	return b.String()
}

// wait waits for the process to exit on its own and returns its status.
func (e *acpEditor) wait(guard time.Duration) int {
	e.t.Helper()
	done := make(chan error, 1)
	go func() { done <- e.cmd.Wait() }()
	select {
	case err := <-done:
		return exitStatus(e.t, err)
	case <-time.After(guard):
		e.t.Fatalf("astrid acp still runs %s after its stdin closed\n%s", guard, e.stderr.String())
	}
	return -1
}

// The Show: the acp-go-sdk client drives `astrid acp` as a real
// process: initialize, a session in a temp workspace, a prompt on the fake
// OpenAI server that reads and edits a file with the permission request
// answered and the diff in the tool_call_update, cancel mid-stream, and
// the session loaded again by a second process.
func TestACPSessionEditsCancelsAndLoads(t *testing.T) {
	fake := newACPFakeOpenAI(t)
	home, ws := t.TempDir(), t.TempDir()
	notes := filepath.Join(ws, "notes.txt")
	if err := os.WriteFile(notes, []byte("the old text\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	e := startACP(t, home, t.TempDir(), fake)
	e.answer = func(_ context.Context, p acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error) {
		return acpsdk.RequestPermissionResponse{Outcome: acpsdk.RequestPermissionOutcome{Selected: &acpsdk.RequestPermissionOutcomeSelected{OptionId: "allow_once"}}}, nil
	}
	init := e.initialize(ctx)
	if init.ProtocolVersion != acpsdk.ProtocolVersionNumber || !init.AgentCapabilities.LoadSession || !init.AgentCapabilities.PromptCapabilities.EmbeddedContext || !init.AgentCapabilities.PromptCapabilities.Image {
		t.Fatalf("initialize: %+v", init)
	}
	s := e.newSession(ctx, ws)
	// The replay provider lists no vision: an image prompt to it is
	// refused as invalid params naming the model, and nothing runs.
	e.useModel(ctx, s, "replay:")
	_, err := e.conn.Prompt(ctx, acpsdk.PromptRequest{SessionId: s.SessionId, Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock("and this?"), acpsdk.ImageBlock("iVBORw0KGgo=", "image/png")}})
	var re *acpsdk.RequestError
	if !errors.As(err, &re) || re.Code != -32602 || !strings.Contains(re.Message, "does not take images") {
		t.Fatalf("an image prompt to the replay model: %v", err)
	}
	e.useOpenAI(ctx, s)

	resp, err := e.prompt(ctx, s.SessionId, "please edit notes.txt")
	if err != nil || resp.StopReason != acpsdk.StopReasonEndTurn {
		t.Fatalf("prompt: %+v, %v\n%s", resp, err, e.stderr.String())
	}
	if data, _ := os.ReadFile(notes); string(data) != "the new text\n" {
		t.Fatalf("notes.txt is %q", data)
	}
	ups := e.of(s.SessionId)
	var read, edit *acpsdk.SessionUpdateToolCall
	var editDone *acpsdk.SessionToolCallUpdate
	for _, u := range ups {
		switch {
		case u.ToolCall != nil && u.ToolCall.Kind == acpsdk.ToolKindRead:
			read = u.ToolCall
		case u.ToolCall != nil && u.ToolCall.Kind == acpsdk.ToolKindEdit:
			edit = u.ToolCall
		case u.ToolCallUpdate != nil && edit != nil && u.ToolCallUpdate.ToolCallId == edit.ToolCallId && u.ToolCallUpdate.Status != nil && *u.ToolCallUpdate.Status == acpsdk.ToolCallStatusCompleted:
			editDone = u.ToolCallUpdate
		}
	}
	if read == nil || len(read.Locations) != 1 || read.Locations[0].Path != notes {
		t.Fatalf("no read tool_call at %s: %+v", notes, read)
	}
	if edit == nil || editDone == nil {
		t.Fatalf("no edit tool_call completed in %+v", ups)
	}
	var diff *acpsdk.ToolCallContentDiff
	for _, c := range editDone.Content {
		if c.Diff != nil {
			diff = c.Diff
		}
	}
	if diff == nil || diff.Path != notes || diff.NewText != "new" || diff.OldText == nil || *diff.OldText != "old" {
		t.Fatalf("the edit's tool_call_update has no diff of notes.txt: %+v", editDone.Content)
	}
	if got := agentText(ups); !strings.HasSuffix(got, "Done editing.") {
		t.Fatalf("agent text %q", got)
	}
	// This editor offers no file system: it is never asked for a buffer.
	if got := e.fsRequests(); len(got) != 0 {
		t.Fatalf("an editor that offers no fs was asked %q", got)
	}
	e.mu.Lock()
	asked := append([]acpsdk.RequestPermissionRequest(nil), e.asked...)
	e.mu.Unlock()
	if len(asked) != 1 || asked[0].ToolCall.ToolCallId != edit.ToolCallId || len(asked[0].Options) != 4 {
		t.Fatalf("permission requests: %+v", asked)
	}

	// The model's reasoning is an agent_thought_chunk, never part of
	// the message.
	before := len(e.of(s.SessionId))
	if r, err := e.prompt(ctx, s.SessionId, "think first"); err != nil || r.StopReason != acpsdk.StopReasonEndTurn {
		t.Fatalf("thinking prompt: %+v %v\n%s", r, err, e.stderr.String())
	}
	var thought string
	for _, u := range e.of(s.SessionId)[before:] {
		if u.AgentThoughtChunk != nil && u.AgentThoughtChunk.Content.Text != nil {
			thought += u.AgentThoughtChunk.Content.Text.Text
		}
	}
	if said := agentText(e.of(s.SessionId)[before:]); thought != "Weighing the options." || said != "Decided." {
		t.Fatalf("thought %q, said %q", thought, said)
	}

	// An image goes to a model that takes images (OpenAI's lists
	// vision) as an image_url part of the user message.
	before = len(e.of(s.SessionId))
	if r, err := e.conn.Prompt(ctx, acpsdk.PromptRequest{SessionId: s.SessionId, Prompt: []acpsdk.ContentBlock{
		acpsdk.TextBlock("what is in this picture?"), acpsdk.ImageBlock("iVBORw0KGgo=", "image/png"),
	}}); err != nil || r.StopReason != acpsdk.StopReasonEndTurn {
		t.Fatalf("image prompt: %+v %v\n%s", r, err, e.stderr.String())
	}
	if said := agentText(e.of(s.SessionId)[before:]); said != "I see 1 image(s)." {
		t.Fatalf("after an image prompt the model said %q", said)
	}

	// Cancel mid-stream: the first words are shown, session/cancel
	// ends the turn as cancelled and the model's stream with it.
	done := make(chan acpsdk.PromptResponse, 1)
	go func() {
		r, err := e.prompt(ctx, s.SessionId, "slow, please")
		if err != nil {
			t.Errorf("slow prompt: %v", err)
		}
		done <- r
	}()
	testutil.WaitFor(t, time.Minute, "the slow turn's first words", func() bool {
		return strings.Contains(agentText(e.of(s.SessionId)), "Thinking slowly")
	})
	if err := e.conn.Cancel(ctx, acpsdk.CancelNotification{SessionId: s.SessionId}); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-done:
		if r.StopReason != acpsdk.StopReasonCancelled {
			t.Fatalf("the cancelled prompt stopped with %q", r.StopReason)
		}
	case <-ctx.Done():
		t.Fatalf("the cancelled prompt never ended\n%s", e.stderr.String())
	}
	// The cancel reaches the model's request (the provider's cancel
	// key), with the process still running.
	testutil.WaitFor(t, time.Minute, "the model's stream ended", func() bool { return fake.ended() == 1 })
	e.stdin.Close()
	if code := e.wait(time.Minute); code != 0 {
		t.Fatalf("exit %d\n%s", code, e.stderr.String())
	}

	// A second process loads the session: its history comes back as
	// updates before the answer.
	e2 := startACP(t, home, t.TempDir(), fake)
	e2.initialize(ctx)
	if _, err := e2.conn.LoadSession(ctx, acpsdk.LoadSessionRequest{SessionId: s.SessionId, Cwd: ws, McpServers: []acpsdk.McpServer{}}); err != nil {
		t.Fatalf("session/load: %v\n%s", err, e2.stderr.String())
	}
	replayed := e2.of(s.SessionId)
	var user string
	calls, images := 0, 0
	for _, u := range replayed {
		if u.UserMessageChunk != nil && u.UserMessageChunk.Content.Text != nil {
			user += u.UserMessageChunk.Content.Text.Text + "|"
		}
		if u.UserMessageChunk != nil && u.UserMessageChunk.Content.Image != nil && u.UserMessageChunk.Content.Image.Data == "iVBORw0KGgo=" {
			images++
		}
		if u.ToolCall != nil {
			calls++
		}
	}
	if !strings.Contains(user, "please edit notes.txt") || !strings.Contains(user, "slow, please") || !strings.Contains(user, "what is in this picture?") || images != 1 || calls != 2 || !strings.Contains(agentText(replayed), "Done editing.") {
		t.Fatalf("replayed: user %q, %d images, %d tool calls, text %q", user, images, calls, agentText(replayed))
	}
	// The loaded session goes on.
	if r, err := e2.prompt(ctx, s.SessionId, "hi"); err != nil || r.StopReason != acpsdk.StopReasonEndTurn {
		t.Fatalf("prompt after load: %+v %v\n%s", r, err, e2.stderr.String())
	}
	e2.stdin.Close()
	if code := e2.wait(time.Minute); code != 0 {
		t.Fatalf("exit %d\n%s", code, e2.stderr.String())
	}
}

// Two sessions with different cwd in one process see only their own
// files: each turn's list_directory of "." lists its own workspace.
func TestACPSessionsSeeOnlyTheirOwnWorkspace(t *testing.T) {
	fake := newACPFakeOpenAI(t)
	home, wsA, wsB, outside := t.TempDir(), realDir(t), realDir(t), realDir(t)
	files := map[string]string{
		filepath.Join(wsA, "only-in-a.txt"): "only-in-a.txt", filepath.Join(wsB, "only-in-b.txt"): "only-in-b.txt",
		filepath.Join(wsA, "notes.txt"): "on disk in A\n", filepath.Join(wsB, "notes.txt"): "on disk in B\n",
		filepath.Join(wsA, "draft.txt"): "old draft\n", filepath.Join(outside, "secret.txt"): "outside the grants\n",
	}
	for name, text := range files {
		if err := os.WriteFile(name, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	e := startACP(t, home, t.TempDir(), fake)
	// The editor offers its buffers; A's notes.txt is open with unsaved
	// changes, B's is not open.
	e.offersFS = true
	e.buffers = map[string]string{filepath.Join(wsA, "notes.txt"): "unsaved in A\n"}
	e.answer = func(_ context.Context, p acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error) {
		return acpsdk.RequestPermissionResponse{Outcome: acpsdk.RequestPermissionOutcome{Selected: &acpsdk.RequestPermissionOutcomeSelected{OptionId: "allow_once"}}}, nil
	}
	e.initialize(ctx)
	a, b := e.newSession(ctx, wsA), e.newSession(ctx, wsB)
	e.useOpenAI(ctx, a)
	e.useOpenAI(ctx, b)
	listed := func(s acpsdk.NewSessionResponse) string {
		t.Helper()
		if r, err := e.prompt(ctx, s.SessionId, "list the files"); err != nil || r.StopReason != acpsdk.StopReasonEndTurn {
			t.Fatalf("prompt: %+v %v\n%s", r, err, e.stderr.String())
		}
		var out string
		for _, u := range e.of(s.SessionId) {
			if u.ToolCallUpdate != nil {
				for _, c := range u.ToolCallUpdate.Content {
					if c.Content != nil && c.Content.Content.Text != nil {
						out += c.Content.Content.Text.Text
					}
				}
			}
		}
		return out
	}
	// Both turns at once, so neither can borrow the other's scope.
	var la, lb string
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); la = listed(a) }()
	go func() { defer wg.Done(); lb = listed(b) }()
	wg.Wait()
	if !strings.Contains(la, "only-in-a.txt") || strings.Contains(la, "only-in-b.txt") {
		t.Fatalf("session A (%s) listed %q", wsA, la)
	}
	if !strings.Contains(lb, "only-in-b.txt") || strings.Contains(lb, "only-in-a.txt") {
		t.Fatalf("session B (%s) listed %q", wsB, lb)
	}

	// The editor's buffers, each session asked only about its own files:
	// A's read_file gets the unsaved text; B's asks the editor, which has
	// no buffer open, and reads the disk.
	said := func(s acpsdk.NewSessionResponse, prompt string) string {
		t.Helper()
		before := len(e.of(s.SessionId))
		if r, err := e.prompt(ctx, s.SessionId, prompt); err != nil || r.StopReason != acpsdk.StopReasonEndTurn {
			t.Fatalf("prompt %q: %+v %v\n%s", prompt, r, err, e.stderr.String())
		}
		return agentText(e.of(s.SessionId)[before:])
	}
	if got := said(a, "show notes"); !strings.Contains(got, "The file says: unsaved in A") {
		t.Fatalf("session A's read_file with the buffer open: %q\n%s", got, e.stderr.String())
	}
	if got := said(b, "show notes"); !strings.Contains(got, "The file says: on disk in B") {
		t.Fatalf("session B's read_file with no buffer open: %q\n%s", got, e.stderr.String())
	}
	// A write_file of an existing file goes through the editor, which
	// saves it its way; astrid does not write the disk after it.
	draft := filepath.Join(wsA, "draft.txt")
	said(a, "write a draft")
	if data, _ := os.ReadFile(draft); string(data) != "draft\n"+editorSaved {
		t.Fatalf("draft.txt after a write_file through the editor: %q\n%s", data, e.stderr.String())
	}
	// A read outside the grants is refused before the editor is asked.
	secret := filepath.Join(outside, "secret.txt")
	if got := said(a, "peek "+secret); strings.Contains(got, "outside the grants") || !strings.Contains(got, "Peeked: ") {
		t.Fatalf("a read_file outside the workspace said %q", got)
	}
	want := []string{
		"read " + string(a.SessionId) + " " + filepath.Join(wsA, "notes.txt"),
		"read " + string(b.SessionId) + " " + filepath.Join(wsB, "notes.txt"),
		"write " + string(a.SessionId) + " " + draft,
	}
	if got := e.fsRequests(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the editor was asked\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	e.stdin.Close()
	if code := e.wait(time.Minute); code != 0 {
		t.Fatalf("exit %d\n%s", code, e.stderr.String())
	}
}

// The bad input, against the real process: a frame that is not
// JSON and a 100 MiB line are answered with JSON-RPC errors and the
// process goes on; a prompt on an unknown session is "resource not
// found"; a cancel for an unknown session changes nothing; a second prompt
// while one runs in the session takes over (the first ends cancelled); a
// permission request the editor never answers is refused after the
// approval timeout; stdin closed mid-turn cancels the turn and exits 0.
func TestACPBadInput(t *testing.T) {
	fake := newACPFakeOpenAI(t)
	home, ws := t.TempDir(), t.TempDir()
	set := astridProcess(home, "capsule", "env", "set", "astrid-capsule-approval", "approval_timeout_secs")
	set.Stdin = strings.NewReader("1")
	if out, err := set.CombinedOutput(); err != nil {
		t.Fatalf("env set: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	e := startACP(t, home, t.TempDir(), fake)
	e.initialize(ctx)

	lw := e.writer // the SDK's writer: whole lines, never interleaved
	if _, err := lw.Write([]byte("this is not json\n")); err != nil {
		t.Fatal(err)
	}
	big := make([]byte, 100<<20)
	for i := range big {
		big[i] = 'x'
	}
	big[len(big)-1] = '\n'
	if _, err := lw.Write(big); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, time.Minute, "the parse error and the size refusal", func() bool {
		out := e.raw.String()
		return strings.Contains(out, `"code":-32700`) && strings.Contains(out, `longer than the largest one taken`)
	})
	s := e.newSession(ctx, ws) // still serving
	e.useOpenAI(ctx, s)

	_, err := e.prompt(ctx, "s-nosuchsession", "hello")
	var re *acpsdk.RequestError
	if !errors.As(err, &re) || re.Code != -32002 {
		t.Fatalf("prompt on an unknown session: %v", err)
	}
	if err := e.conn.Cancel(ctx, acpsdk.CancelNotification{SessionId: "s-nosuchsession"}); err != nil {
		t.Fatal(err)
	}

	// A second prompt while the first runs: the first ends cancelled,
	// the second answers.
	first := make(chan acpsdk.PromptResponse, 1)
	go func() {
		r, err := e.prompt(ctx, s.SessionId, "slow one")
		if err != nil {
			t.Errorf("first prompt: %v", err)
		}
		first <- r
	}()
	testutil.WaitFor(t, time.Minute, "the first turn's words", func() bool {
		return strings.Contains(agentText(e.of(s.SessionId)), "Thinking slowly")
	})
	r, err := e.prompt(ctx, s.SessionId, "hello again")
	if err != nil || r.StopReason != acpsdk.StopReasonEndTurn {
		t.Fatalf("second prompt: %+v %v\n%s", r, err, e.stderr.String())
	}
	if r := <-first; r.StopReason != acpsdk.StopReasonCancelled {
		t.Fatalf("the first prompt stopped with %q", r.StopReason)
	}

	// The editor never answers: the approval layer refuses after its
	// timeout, the request is withdrawn, and the turn goes on.
	e.mu.Lock()
	e.answer = func(ctx context.Context, _ acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error) {
		<-ctx.Done() // withdrawn ($/cancel_request) or the connection ended
		return acpsdk.RequestPermissionResponse{}, ctx.Err()
	}
	e.mu.Unlock()
	r, err = e.prompt(ctx, s.SessionId, "write a draft")
	if err != nil || r.StopReason != acpsdk.StopReasonEndTurn {
		t.Fatalf("unanswered prompt: %+v %v\n%s", r, err, e.stderr.String())
	}
	if _, err := os.Stat(filepath.Join(ws, "draft.txt")); !os.IsNotExist(err) {
		t.Fatalf("draft.txt was written without an answer: %v", err)
	}
	failed := false
	for _, u := range e.of(s.SessionId) {
		if u.ToolCallUpdate != nil && u.ToolCallUpdate.Status != nil && *u.ToolCallUpdate.Status == acpsdk.ToolCallStatusFailed {
			for _, c := range u.ToolCallUpdate.Content {
				failed = failed || c.Content != nil && c.Content.Content.Text != nil && strings.Contains(c.Content.Content.Text.Text, "no answer within 1 s")
			}
		}
	}
	if !failed {
		t.Fatalf("no failed tool_call_update saying the approval timed out\n%s", e.stderr.String())
	}

	// stdin closed mid-turn: the turn is cancelled (the model's stream
	// ends) and the process exits 0.
	go func() { _, _ = e.prompt(ctx, s.SessionId, "slow two") }()
	testutil.WaitFor(t, time.Minute, "the last turn's words", func() bool {
		return strings.Count(agentText(e.of(s.SessionId)), "Thinking slowly") == 2
	})
	before := fake.ended()
	e.stdin.Close()
	if code := e.wait(time.Minute); code != 0 {
		t.Fatalf("exit %d after stdin closed\n%s", code, e.stderr.String())
	}
	testutil.WaitFor(t, time.Minute, "the model's stream ended", func() bool { return fake.ended() > before })
	if !strings.Contains(e.stderr.String(), "refused") {
		t.Fatalf("stderr does not log the refused messages:\n%s", e.stderr.String())
	}
}

// Through a running daemon: the session works on the editor's cwd, not the
// daemon's workspace, and the provider settings of astrid acp's
// environment reach the daemon (the hello's env), as for astrid -p.
func TestACPThroughTheDaemon(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a daemon and astrid acp")
	}
	fake := newACPFakeOpenAI(t)
	home, daemonWS, ws := realDir(t), realDir(t), realDir(t)
	notes := filepath.Join(ws, "notes.txt")
	if err := os.WriteFile(notes, []byte("the old text\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	pid := startDaemonIn(t, home, daemonWS)
	ctx, cancel := context.WithTimeout(context.Background(), daemonPatience)
	defer cancel()
	e := startACPWith(t, home, t.TempDir(), fake)
	e.answer = func(_ context.Context, p acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error) {
		return acpsdk.RequestPermissionResponse{Outcome: acpsdk.RequestPermissionOutcome{Selected: &acpsdk.RequestPermissionOutcomeSelected{OptionId: "allow_once"}}}, nil
	}
	e.offersFS = true
	e.buffers = map[string]string{notes: "unsaved in the editor\n"}
	e.initialize(ctx)
	s := e.newSession(ctx, ws)
	e.useOpenAI(ctx, s)
	if r, err := e.prompt(ctx, s.SessionId, "please edit notes.txt"); err != nil || r.StopReason != acpsdk.StopReasonEndTurn {
		t.Fatalf("prompt: %+v %v\n%s", r, err, e.stderr.String())
	}
	if data, _ := os.ReadFile(notes); string(data) != "the new text\n" {
		t.Fatalf("notes.txt in the editor's cwd is %q\n%s", data, e.stderr.String())
	}
	if _, err := os.Stat(filepath.Join(daemonWS, "notes.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the daemon's workspace holds notes.txt (%v)", err)
	}
	e.mu.Lock()
	asked := len(e.asked)
	e.mu.Unlock()
	if asked != 1 {
		t.Fatalf("%d permission requests, want 1", asked)
	}
	// Through the daemon the editor's buffer serves read_file as well.
	before := len(e.of(s.SessionId))
	if r, err := e.prompt(ctx, s.SessionId, "show notes"); err != nil || r.StopReason != acpsdk.StopReasonEndTurn {
		t.Fatalf("prompt: %+v %v\n%s", r, err, e.stderr.String())
	}
	if got := agentText(e.of(s.SessionId)[before:]); !strings.Contains(got, "The file says: unsaved in the editor") {
		t.Fatalf("read_file through the daemon with the buffer open: %q\n%s", got, e.stderr.String())
	}

	// The daemon dies mid-turn (kill -9): the prompt fails saying so.
	// Started again, the session's next prompt connects again and goes
	// on with its history, kept in the daemon's store.
	cut := make(chan error, 1)
	go func() {
		_, err := e.prompt(ctx, s.SessionId, "slow, please")
		cut <- err
	}()
	testutil.WaitFor(t, daemonPatience, "the slow turn's first words", func() bool {
		return strings.Contains(agentText(e.of(s.SessionId)), "Thinking slowly")
	})
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-cut:
		if err == nil || !strings.Contains(err.Error(), "the daemon went away during the turn") {
			t.Fatalf("the turn cut by the daemon's stop ended with %v", err)
		}
	case <-ctx.Done():
		t.Fatalf("the turn cut by the daemon's stop never ended\n%s", e.stderr.String())
	}
	startDaemonIn(t, home, daemonWS)
	before = len(e.of(s.SessionId))
	if r, err := e.prompt(ctx, s.SessionId, "recall what I asked"); err != nil || r.StopReason != acpsdk.StopReasonEndTurn {
		t.Fatalf("prompt after the daemon restarted: %+v %v\n%s", r, err, e.stderr.String())
	}
	if said := agentText(e.of(s.SessionId)[before:]); !strings.Contains(said, "please edit notes.txt") {
		t.Fatalf("after the restart the model said %q: the session's history did not come along\n%s", said, e.stderr.String())
	}

	// A graceful astrid stop cancels the running turn: the editor gets an
	// error saying the daemon stopped, not a cancel it never asked for.
	before = len(e.of(s.SessionId))
	go func() {
		_, err := e.prompt(ctx, s.SessionId, "slow again")
		cut <- err
	}()
	testutil.WaitFor(t, daemonPatience, "the second slow turn's first words", func() bool {
		return strings.Contains(agentText(e.of(s.SessionId)[before:]), "Thinking slowly")
	})
	if r := runClient(t, home, daemonWS, nil, "stop"); r.code != 0 {
		t.Fatalf("astrid stop: %+v", r)
	}
	select {
	case err := <-cut:
		if err == nil || !strings.Contains(err.Error(), "the daemon stopped during the turn") {
			t.Fatalf("the turn of a stopped daemon ended with %v", err)
		}
	case <-ctx.Done():
		t.Fatalf("the turn of a stopped daemon never ended\n%s", e.stderr.String())
	}
	e.stdin.Close()
	if code := e.wait(time.Minute); code != 0 {
		t.Fatalf("exit %d\n%s", code, e.stderr.String())
	}
}
