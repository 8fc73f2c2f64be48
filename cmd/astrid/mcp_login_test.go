package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/engine/mcp/oauthtest"
)

// A turn of `astrid -p` calls a tool of a remote MCP server behind OAuth
// (issue 32.2): before `astrid mcp login` the server refuses the capsule;
// the login prints the authorization URL (the test plays the browser),
// completes on the loopback redirect and seals the token; the model's tool
// call then reaches the server and its answer reaches the model.
// `astrid mcp logout` forgets the login.
func TestPromptCallsARemoteMCPServerBehindOAuth(t *testing.T) {
	fake := oauthtest.New(t, func() *mcp.Server {
		s := mcp.NewServer(&mcp.Implementation{Name: "issues", Version: "1"}, nil)
		s.AddTool(&mcp.Tool{Name: "lookup", Description: "Looks up the issue", InputSchema: map[string]any{"type": "object"}, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "issue 32 is remote MCP"}}}, nil
			})
		return s
	})
	u, _ := url.Parse(fake.URL)

	var mu sync.Mutex
	var bodies []string
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		first := len(bodies) == 1
		mu.Unlock()
		if first {
			writeOpenAIToolCall(w, "call_rem", "issues__lookup", `{}`)
		} else {
			writeOpenAIAnswer(w, "done")
		}
	}))
	defer model.Close()

	home, ws, src := t.TempDir(), t.TempDir(), t.TempDir()
	manifest := fmt.Sprintf(`[package]
name = "tracker"
version = "0.1.0"
description = "a remote MCP server behind OAuth"

[capabilities]
net = ["127.0.0.1"]

[[mcp_server]]
id = "issues"
type = "http"
url = %q
`, fake.URL+"/mcp")
	if err := os.WriteFile(filepath.Join(src, "Capsule.toml"), []byte(manifest), 0o600); err != nil {
		t.Fatal(err)
	}
	// The operator lets capsules reach this loopback server.
	cfgPath := config.Layout(home).Config
	if err := os.MkdirAll(filepath.Dir(cfgPath), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfgPath, []byte(fmt.Sprintf("[egress]\nallow = [%q]\n", u.Host)), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, code := runProcess(t, home, "capsule", "install", src, "--yes"); code != 0 {
		t.Fatalf("install: exit %d\n%s", code, out)
	}
	prompt := func() (string, string, error) {
		cmd := astridProcess(home, "-p", "What is issue 32?", "--provider", "openai", "--model", "test-model", "--workspace", ws, "--no-daemon")
		cmd.Env = append(cmd.Env, "OPENAI_BASE_URL="+model.URL+"/v1", "OPENAI_API_KEY=")
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return stdout.String(), stderr.String(), err
	}

	// Before the login the server refuses, and the person is told why.
	if _, stderr, _ := prompt(); !strings.Contains(stderr, "astrid mcp login tracker") {
		t.Fatalf("before the login, stderr does not say to log in:\n%s", stderr)
	}

	login := astridProcess(home, "mcp", "login", "tracker", "--no-browser")
	pipe, err := login.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := login.Start(); err != nil {
		t.Fatal(err)
	}
	var said strings.Builder
	sc := bufio.NewScanner(pipe)
	for sc.Scan() {
		line := sc.Text()
		said.WriteString(line + "\n")
		if strings.HasPrefix(line, "http") {
			// The browser: the authorization server approves at once and
			// redirects to the login's loopback listener.
			resp, err := http.Get(line)
			if err != nil {
				t.Fatalf("the browser: %v", err)
			}
			resp.Body.Close()
		}
	}
	if err := login.Wait(); err != nil || !strings.Contains(said.String(), "logged in to MCP server issues of capsule tracker") {
		t.Fatalf("login: %v\n%s", err, said.String())
	}

	mu.Lock()
	bodies = nil
	mu.Unlock()
	stdout, stderr, err := prompt()
	if err != nil || stdout != "done\n" {
		t.Fatalf("-p after the login: %v: stdout %q, stderr:\n%s", err, stdout, stderr)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) != 2 || !strings.Contains(bodies[1], "issue 32 is remote MCP") {
		t.Fatalf("the model did not get the remote tool's answer: %q\nstderr:\n%s", bodies, stderr)
	}

	if out, code := runProcess(t, home, "mcp", "logout", "tracker"); code != 0 || !strings.Contains(out, "logged out of MCP server issues") {
		t.Fatalf("logout: exit %d\n%s", code, out)
	}
	if out, code := runProcess(t, home, "mcp", "logout", "tracker"); code != 0 || !strings.Contains(out, "had no login") {
		t.Fatalf("logout again: exit %d\n%s", code, out)
	}
}
