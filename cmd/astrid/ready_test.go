package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/astrid-go/astrid/internal/engine/mcp/mcptest"
)

// fakeOpenAI is an OpenAI-compatible server that answers every request
// with one line of text and keeps the request bodies.
type fakeOpenAI struct {
	srv    *httptest.Server
	mu     sync.Mutex
	bodies []string
}

func newFakeOpenAI(t *testing.T) *fakeOpenAI {
	f := &fakeOpenAI{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.bodies = append(f.bodies, string(b))
		f.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, openAIChunk(`{"role":"assistant","content":"ok"}`, "null"))
		io.WriteString(w, openAIChunk(`{}`, `"stop"`))
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(f.srv.Close)
	return f
}

// offered returns the names of the tools the n-th request offered the
// model, sorted.
func (f *fakeOpenAI) offered(t *testing.T, n int) []string {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if n >= len(f.bodies) {
		t.Fatalf("the fake OpenAI server received %d requests, not %d", len(f.bodies), n+1)
	}
	var req struct {
		Tools []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(f.bodies[n]), &req); err != nil {
		t.Fatalf("request %d: %v", n, err)
	}
	var names []string
	for _, tl := range req.Tools {
		names = append(names, tl.Function.Name)
	}
	slices.Sort(names)
	return names
}

func (f *fakeOpenAI) requests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.bodies)
}

// mcpCapsule writes a capsule whose one MCP server, id, is the pinned
// server-everything (its tools are <id>:echo and so on, offered to a model
// as <id>__echo).
func mcpCapsule(t *testing.T, name, id string) string {
	t.Helper()
	srv := mcptest.NPM(t)
	// The server runs confined (DESIGN §11): it may read its own modules.
	modules := srv.Everything[:strings.LastIndex(srv.Everything, "/node_modules/")+len("/node_modules")]
	dir := t.TempDir()
	manifest := fmt.Sprintf(`[package]
name = %q
version = "0.1.0"
description = "the MCP test server everything"

[capabilities]
host_process = ["node"]
fs_read = [%q]

[[mcp_server]]
id = %q
type = "stdio"
command = "node"
args = [%q, "stdio"]
`, name, modules, id, srv.Everything)
	if err := os.WriteFile(filepath.Join(dir, "Capsule.toml"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Ready means ready (issue 29.3): an installed wasm tool and an MCP tool are
// offered to the model in every in-process `astrid -p` run, the first
// included (checked on the request body the fake OpenAI server received),
// and the tools offered through a daemon are the same. A capsule installed
// while the daemon runs serves when `capsule install` returns.
func TestInstalledToolsAreOfferedToTheModel(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a wasm module and runs an MCP server")
	}
	everything := mcpCapsule(t, "everything", "everything")
	greeter, _ := buildGreeter(t)
	fake := newFakeOpenAI(t)
	home, ws := t.TempDir(), t.TempDir()
	t.Setenv("ASTRID_HOME", home)
	t.Setenv("OPENAI_BASE_URL", fake.srv.URL+"/v1")
	t.Setenv("OPENAI_API_KEY", "")
	for _, src := range []string{greeter, everything} {
		if out, code := runProcess(t, home, "capsule", "install", src, "--yes", "--accept-risk"); code != 0 {
			t.Fatalf("install %s: exit %d\n%s", src, code, out)
		}
	}
	prompt := func(args ...string) {
		t.Helper()
		cmd := astridProcess(home, append([]string{"-p", "hello", "--provider", "openai", "--model", "test-model", "--workspace", ws}, args...)...)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil || stdout.String() != "ok\n" {
			t.Fatalf("-p %v: %v: stdout %q, stderr:\n%s", args, err, stdout.String(), stderr.String())
		}
	}

	const runs = 10
	var inProcess []string
	for i := range runs {
		prompt("--no-daemon")
		tools := fake.offered(t, fake.requests()-1)
		if !slices.Contains(tools, "greet") || !slices.Contains(tools, "everything__echo") {
			t.Fatalf("run %d of %d offered %v: not greet and everything__echo", i+1, runs, tools)
		}
		if i == 0 {
			inProcess = tools
		} else if !slices.Equal(tools, inProcess) {
			t.Fatalf("run %d offered %v, run 1 %v", i+1, tools, inProcess)
		}
	}
	t.Logf("%d of %d in-process runs offered greet and everything__echo (%d tools)", runs, runs, len(inProcess))

	startedPid(t, home, ws)
	t.Cleanup(func() { runProcess(t, home, "stop") })
	prompt()
	if daemon := fake.offered(t, fake.requests()-1); !slices.Equal(daemon, inProcess) {
		t.Fatalf("through the daemon the model was offered\n%v\nin-process\n%v", daemon, inProcess)
	}

	// A capsule installed while the daemon runs serves when the install
	// returns: its tool is offered by the very next turn.
	more := mcpCapsule(t, "more", "more")
	out, code := runProcess(t, home, "capsule", "install", more, "--yes", "--accept-risk")
	if code != 0 || !strings.Contains(out, "the running daemon loaded capsule more (tools: more:") {
		t.Fatalf("install while the daemon runs: exit %d\n%s", code, out)
	}
	prompt()
	if tools := fake.offered(t, fake.requests()-1); !slices.Contains(tools, "more__echo") {
		t.Fatalf("right after the install the model was offered %v", tools)
	}
}
