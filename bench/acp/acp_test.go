package acp_test

// Issue 33's benchmark: the time from session/prompt to the first
// agent_message_chunk of `astrid acp` against the time from exec to the
// first output line of `astrid -p --json`, both through one running
// daemon, on the same fake OpenAI server, the two sides taking turns call
// by call. Run:
//
//	cd bench && GOMAXPROCS=2 go test -run '^$' -bench ACPFirstChunk -count 5 -p 1 ./acp/
//
// The goal is acp ≤ 1.1× -p: an editor must not wait longer for the first
// words than a person at the command line. acp pays no process start or
// dial per prompt, -p does; what the comparison guards is that ACP's own
// work (its SDK, the guard, the session's scope) stays small next to that.

import (
	"bufio"
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
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/astrid-go/astrid/internal/testutil"
)

// fakeOpenAI answers every chat completion with one streamed sentence and
// lists one model.
func fakeOpenAI(b *testing.B) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if strings.HasSuffix(r.URL.Path, "/models") {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"object":"list","data":[{"id":"fake-model","object":"model","created":0,"owned_by":"bench"}]}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		chunk := func(delta, finish string) string {
			return `data: {"id":"c","object":"chat.completion.chunk","created":0,"model":"fake-model","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + finish + `}]}` + "\n\n"
		}
		_, _ = io.WriteString(w, chunk(`{"role":"assistant","content":"Hello there."}`, "null"))
		_, _ = io.WriteString(w, chunk(`{}`, `"stop"`))
		_, _ = io.WriteString(w, "data: [DONE]\n\n")
	}))
	b.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

func buildAstrid(b *testing.B) string {
	b.Helper()
	bin := filepath.Join(b.TempDir(), "astrid")
	// Built in the product's module, with its go.sum, not this one's.
	build := exec.Command("go", "build", "-o", bin, "./cmd/astrid")
	build.Dir = filepath.Join("..", "..")
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-buildvcs=false")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// editor is the client side of one `astrid acp`: it signals the first
// agent_message_chunk of each prompt on first.
type editor struct {
	mu    sync.Mutex
	first chan struct{} // nil when no prompt waits for its first chunk
}

func (e *editor) SessionUpdate(_ context.Context, n acpsdk.SessionNotification) error {
	if n.Update.AgentMessageChunk == nil {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.first != nil {
		close(e.first)
		e.first = nil
	}
	return nil
}

func (e *editor) RequestPermission(context.Context, acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error) {
	return acpsdk.RequestPermissionResponse{Outcome: acpsdk.RequestPermissionOutcome{Cancelled: &acpsdk.RequestPermissionOutcomeCancelled{}}}, nil
}

var errNotOffered = errors.New("not offered")

func (e *editor) ReadTextFile(context.Context, acpsdk.ReadTextFileRequest) (acpsdk.ReadTextFileResponse, error) {
	return acpsdk.ReadTextFileResponse{}, errNotOffered
}

func (e *editor) WriteTextFile(context.Context, acpsdk.WriteTextFileRequest) (acpsdk.WriteTextFileResponse, error) {
	return acpsdk.WriteTextFileResponse{}, errNotOffered
}

func (e *editor) CreateTerminal(context.Context, acpsdk.CreateTerminalRequest) (acpsdk.CreateTerminalResponse, error) {
	return acpsdk.CreateTerminalResponse{}, errNotOffered
}

func (e *editor) KillTerminal(context.Context, acpsdk.KillTerminalRequest) (acpsdk.KillTerminalResponse, error) {
	return acpsdk.KillTerminalResponse{}, errNotOffered
}

func (e *editor) TerminalOutput(context.Context, acpsdk.TerminalOutputRequest) (acpsdk.TerminalOutputResponse, error) {
	return acpsdk.TerminalOutputResponse{}, errNotOffered
}

func (e *editor) ReleaseTerminal(context.Context, acpsdk.ReleaseTerminalRequest) (acpsdk.ReleaseTerminalResponse, error) {
	return acpsdk.ReleaseTerminalResponse{}, errNotOffered
}

func (e *editor) WaitForTerminalExit(context.Context, acpsdk.WaitForTerminalExitRequest) (acpsdk.WaitForTerminalExitResponse, error) {
	return acpsdk.WaitForTerminalExitResponse{}, errNotOffered
}

// BenchmarkACPFirstChunkInterleaved reports acp-ns and p-ns (means),
// their p50s and the ratios acp ÷ -p.
func BenchmarkACPFirstChunkInterleaved(b *testing.B) {
	bin := buildAstrid(b)
	home, ws := b.TempDir(), b.TempDir()
	env := append(os.Environ(), "ASTRID_HOME="+home, "OPENAI_BASE_URL="+fakeOpenAI(b), "OPENAI_API_KEY=", "ANTHROPIC_API_KEY=")
	run := func(args ...string) string {
		cmd := exec.Command(bin, args...)
		cmd.Dir, cmd.Env = ws, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.Fatalf("astrid %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run("start", "--workspace", ws)
	b.Cleanup(func() { run("stop") })

	// The acp side: one process, one session on the fake model.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "acp")
	cmd.Dir, cmd.Env = ws, env
	stderr := &testutil.SyncBuffer{}
	cmd.Stderr = stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = in.Close(); _ = cmd.Wait() }()
	ed := &editor{}
	conn := acpsdk.NewClientSideConnection(ed, in, out)
	if _, err := conn.Initialize(ctx, acpsdk.InitializeRequest{ProtocolVersion: acpsdk.ProtocolVersionNumber}); err != nil {
		b.Fatalf("initialize: %v\n%s", err, stderr.String())
	}
	s, err := conn.NewSession(ctx, acpsdk.NewSessionRequest{Cwd: ws, McpServers: []acpsdk.McpServer{}})
	if err != nil || s.Models == nil {
		b.Fatalf("session/new: %+v %v\n%s", s, err, stderr.String())
	}
	model := ""
	for _, m := range s.Models.AvailableModels {
		if strings.HasPrefix(string(m.ModelId), "openai:") {
			model = string(m.ModelId)
		}
	}
	if _, err := conn.UnstableSetSessionModel(ctx, acpsdk.UnstableSetSessionModelRequest{SessionId: s.SessionId, ModelId: acpsdk.UnstableModelId(model)}); err != nil {
		b.Fatalf("set_model %q: %v", model, err)
	}
	prompt := []acpsdk.ContentBlock{acpsdk.TextBlock("hello")}
	acp := func() (time.Duration, error) {
		first := make(chan struct{})
		ed.mu.Lock()
		ed.first = first
		ed.mu.Unlock()
		t0 := time.Now()
		done := make(chan error, 1)
		go func() {
			r, err := conn.Prompt(ctx, acpsdk.PromptRequest{SessionId: s.SessionId, Prompt: prompt})
			if err == nil && r.StopReason != acpsdk.StopReasonEndTurn {
				err = fmt.Errorf("stop reason %q", r.StopReason)
			}
			done <- err
		}()
		var d time.Duration
		select {
		case <-first:
			d = time.Since(t0)
		case err := <-done:
			return 0, fmt.Errorf("the prompt ended before any chunk: %w\n%s", err, stderr.String())
		}
		return d, <-done
	}

	// The -p side: a process per prompt, its first --json line timed.
	cli := func() (time.Duration, error) {
		c := exec.Command(bin, "-p", "hello", "--json", "--provider", "openai")
		c.Dir, c.Env = ws, env
		stdout, err := c.StdoutPipe()
		if err != nil {
			return 0, err
		}
		t0 := time.Now()
		if err := c.Start(); err != nil {
			return 0, err
		}
		line, err := bufio.NewReader(stdout).ReadBytes('\n')
		d := time.Since(t0)
		_, _ = io.Copy(io.Discard, stdout)
		if werr := c.Wait(); werr != nil {
			return 0, fmt.Errorf("astrid -p: %w", werr)
		}
		var ev struct {
			Event string `json:"event"`
		}
		if err != nil || json.Unmarshal(line, &ev) != nil || ev.Event != "delta" {
			return 0, fmt.Errorf("astrid -p: first line %q (%v)", line, err)
		}
		return d, nil
	}

	sides := [2]func() (time.Duration, error){acp, cli}
	for range 20 { // warm both: the daemon's pools, the page cache
		for _, side := range sides {
			if _, err := side(); err != nil {
				b.Fatal(err)
			}
		}
	}
	var lat [2][]time.Duration
	var total [2]time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		for k := range 2 {
			side := (i + k) % 2
			d, err := sides[side]()
			if err != nil {
				b.Fatal(err)
			}
			total[side] += d
			lat[side] = append(lat[side], d)
		}
	}
	b.StopTimer()
	testutil.ReportTurns(b, "acp", "p", total, b.N, lat)
}
