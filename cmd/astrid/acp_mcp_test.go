package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/astrid-go/astrid/internal/engine/mcp/mcptest"
	"github.com/astrid-go/astrid/internal/testutil"
)

// The editor's MCP servers are the session's own: a session given
// server-everything is offered its echo tool and calls it through the
// fake OpenAI server (the call asked about, as every call of an editor's
// server is); a second session of the same connection and directory is
// not offered it; closing the first session stops the server. A server
// the operator's rules refuse fails session/new with invalid params
// naming why. The same in-process and through the daemon (the uplink's
// attach_mcp, the servers bound to the connection's scope).
func TestACPEditorMCPServersAreTheSessionsOwn(t *testing.T) {
	t.Run("in-process", func(t *testing.T) { editorMCPServers(t, false) })
	t.Run("daemon", func(t *testing.T) {
		if testing.Short() {
			t.Skip("runs a daemon and astrid acp")
		}
		editorMCPServers(t, true)
	})
}

func editorMCPServers(t *testing.T, daemon bool) {
	npm := mcptest.NPM(t)
	modules := npm.Everything[:strings.LastIndex(npm.Everything, "/node_modules/")+len("/node_modules")]
	fake := newACPFakeOpenAI(t)
	home, ws := t.TempDir(), t.TempDir()
	ws, _ = filepath.EvalSymlinks(ws)
	cfg := "[mcp]\nsession_commands = [\"node\"]\nsession_read = [" + strconv.Quote(modules) + "]\n"
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var e *acpEditor
	daemonPID, daemonWS := 0, realDir(t)
	if daemon {
		daemonPID = startDaemonIn(t, home, daemonWS)
		e = startACPWith(t, home, t.TempDir(), fake)
	} else {
		e = startACP(t, home, t.TempDir(), fake)
	}
	e.answer = func(_ context.Context, p acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error) {
		return acpsdk.RequestPermissionResponse{Outcome: acpsdk.RequestPermissionOutcome{Selected: &acpsdk.RequestPermissionOutcomeSelected{OptionId: "allow_once"}}}, nil
	}
	if init := e.initialize(ctx); !init.AgentCapabilities.McpCapabilities.Http {
		t.Fatalf("initialize offers no HTTP MCP servers: %+v", init.AgentCapabilities.McpCapabilities)
	}

	for _, c := range []struct {
		srv  acpsdk.McpServer
		want string
	}{
		{acpsdk.McpServer{Stdio: &acpsdk.McpServerStdio{Name: "sh", Command: "sh", Args: []string{}, Env: []acpsdk.EnvVariable{}}}, "session_commands"},
		{acpsdk.McpServer{Stdio: &acpsdk.McpServerStdio{Name: "../x", Command: "node", Args: []string{}, Env: []acpsdk.EnvVariable{}}}, "has '.'"},
		{acpsdk.McpServer{Stdio: &acpsdk.McpServerStdio{Name: "x", Command: "node", Args: []string{}, Env: []acpsdk.EnvVariable{{Name: "LD_PRELOAD", Value: "/tmp/x.so"}}}}, "LD_PRELOAD"},
		{acpsdk.McpServer{Http: &acpsdk.McpServerHttpInline{Name: "meta", Type: "http", Url: "http://169.254.169.254/mcp", Headers: []acpsdk.HttpHeader{}}}, "link-local"},
	} {
		_, err := e.conn.NewSession(ctx, acpsdk.NewSessionRequest{Cwd: ws, McpServers: []acpsdk.McpServer{c.srv}})
		var re *acpsdk.RequestError
		if !errors.As(err, &re) || re.Code != -32602 || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("session/new with %+v: %v, want invalid params naming %q", c.srv, err, c.want)
		}
	}

	everything := acpsdk.McpServer{Stdio: &acpsdk.McpServerStdio{Name: "everything", Command: "node", Args: []string{npm.Everything, "stdio"}, Env: []acpsdk.EnvVariable{}}}
	a, err := e.conn.NewSession(ctx, acpsdk.NewSessionRequest{Cwd: ws, McpServers: []acpsdk.McpServer{everything}})
	if err != nil {
		t.Fatalf("session/new with server-everything: %v\n%s", err, e.stderr.String())
	}
	b := e.newSession(ctx, ws)
	e.useOpenAI(ctx, a)
	e.useOpenAI(ctx, b)
	pid := serverPID(t, npm.Everything, ws)
	if daemon {
		// The daemon runs it, not astrid acp.
		stat, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(fields) < 2 || fields[1] != strconv.Itoa(daemonPID) {
			t.Fatalf("the server's parent is %v, not the daemon %d", fields[:min(2, len(fields))], daemonPID)
		}
	}

	if r, err := e.prompt(ctx, a.SessionId, "echo something"); err != nil || r.StopReason != acpsdk.StopReasonEndTurn {
		t.Fatalf("prompt in A: %+v %v\n%s", r, err, e.stderr.String())
	}
	var result string
	for _, u := range e.of(a.SessionId) {
		if u.ToolCallUpdate != nil {
			for _, c := range u.ToolCallUpdate.Content {
				if c.Content != nil && c.Content.Content.Text != nil {
					result += c.Content.Content.Text.Text
				}
			}
		}
	}
	if !strings.Contains(result, "ping from the editor's server") || !strings.Contains(agentText(e.of(a.SessionId)), "Echoed.") {
		t.Fatalf("session A's echo: result %q, text %q\n%s", result, agentText(e.of(a.SessionId)), e.stderr.String())
	}
	e.mu.Lock()
	asked := len(e.asked)
	e.mu.Unlock()
	if asked != 1 {
		t.Fatalf("%d permission requests for the editor's server's tool, want 1", asked)
	}

	if r, err := e.prompt(ctx, b.SessionId, "echo something"); err != nil || r.StopReason != acpsdk.StopReasonEndTurn {
		t.Fatalf("prompt in B: %+v %v\n%s", r, err, e.stderr.String())
	}
	if got := agentText(e.of(b.SessionId)); !strings.Contains(got, "No echo tool is offered.") {
		t.Fatalf("session B was offered session A's server: %q", got)
	}

	if daemon {
		// The daemon stops (its servers with it) and starts again: the
		// session's next prompt connects again, attaches its servers
		// anew, and calls the new one.
		if r := runClient(t, home, daemonWS, nil, "stop"); r.code != 0 {
			t.Fatalf("astrid stop: %+v", r)
		}
		testutil.WaitFor(t, time.Minute, "the stopped daemon's MCP server to be gone", func() bool {
			return exited(pid)
		})
		startDaemonIn(t, home, daemonWS)
		before := len(e.of(a.SessionId))
		if r, err := e.prompt(ctx, a.SessionId, "echo once more"); err != nil || r.StopReason != acpsdk.StopReasonEndTurn {
			t.Fatalf("prompt in A after the daemon restarted: %+v %v\n%s", r, err, e.stderr.String())
		}
		if said := agentText(e.of(a.SessionId)[before:]); !strings.Contains(said, "Echoed.") {
			t.Fatalf("after the restart session A said %q\n%s", said, e.stderr.String())
		}
		pid = serverPID(t, npm.Everything, ws)
	}
	if _, err := e.conn.CloseSession(ctx, acpsdk.CloseSessionRequest{SessionId: a.SessionId}); err != nil {
		t.Fatalf("session/close: %v", err)
	}
	testutil.WaitFor(t, time.Minute, "the session's MCP server to stop once the session closed", func() bool {
		return exited(pid)
	})
	e.stdin.Close()
	if code := e.wait(time.Minute); code != 0 {
		t.Fatalf("exit %d\n%s", code, e.stderr.String())
	}
}

// serverPID is the process running script with its working directory in
// ws (processesIn; Linux /proc): the test is skipped elsewhere.
func serverPID(t *testing.T, script, ws string) int {
	t.Helper()
	if _, err := os.Stat("/proc/self/cmdline"); err != nil {
		t.Skip("no /proc to find the server in")
	}
	return testutil.WaitForValue(t, time.Minute, "the session's MCP server process", func() (int, bool) {
		for _, pid := range processesIn(ws) {
			if cmdline, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline")); strings.Contains(string(cmdline), script) {
				return pid, true
			}
		}
		return 0, false
	})
}
