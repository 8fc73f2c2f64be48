package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/astrid-go/astrid/internal/testutil"
)

// mcpServe starts `astrid mcp serve` (this binary, over stdio) for home on
// ws and connects a go-sdk client to it; elicit, when not nil, makes the
// client one that supports elicitation. version, when set, is the
// protocol version the client asks for.
func mcpServe(t *testing.T, home, ws, version string, elicit func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error), extra ...string) (*mcp.ClientSession, *exec.Cmd, *testutil.SyncBuffer) {
	t.Helper()
	cmd := astridProcess(home, append([]string{"mcp", "serve", "--workspace", ws, "--no-daemon"}, extra...)...)
	cmd.Env = append(cmd.Env, noProviderEnv...)
	stderr := &testutil.SyncBuffer{}
	cmd.Stderr = stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "astrid-test", Version: "0"}, &mcp.ClientOptions{ElicitationHandler: elicit})
	ctx, cancel := context.WithTimeout(context.Background(), daemonPatience)
	defer cancel()
	var opts *mcp.ClientSessionOptions
	if version != "" {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, opts)
	if err != nil {
		t.Fatalf("connect to astrid mcp serve: %v\nstderr: %s", err, stderr.String())
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs, cmd, stderr
}

// approveWith answers every elicitation with decision, counting them.
func approveWith(decision string, asked *[]string) func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	return func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		*asked = append(*asked, r.Params.Message)
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": decision}}, nil
	}
}

func callText(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// An external MCP client lists Astrid's tools through astrid mcp serve
// and calls them: a read, and a write_file whose approval is answered by
// elicitation, on the current protocol (multi round-trip) and on
// 2025-11-25 (a server-initiated elicitation request).
func TestMCPServeListsAndCallsTools(t *testing.T) {
	if testing.Short() {
		t.Skip("runs astrid mcp serve")
	}
	home, ws := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "hello.txt"), []byte("hello from the workspace"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, version := range []string{"", "2025-11-25"} {
		t.Run("protocol "+version, func(t *testing.T) {
			var asked []string
			cs, _, stderr := mcpServe(t, home, ws, version, approveWith("yes", &asked))
			ctx, cancel := context.WithTimeout(context.Background(), daemonPatience)
			defer cancel()
			want := version
			if want == "" {
				want = "2026-07-28" // answers by multi round-trip
			}
			if got := cs.InitializeResult().ProtocolVersion; got != want {
				t.Errorf("protocol %s, want %s", got, want)
			}
			tools, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			byName := map[string]*mcp.Tool{}
			for _, tool := range tools.Tools {
				byName[tool.Name] = tool
			}
			read, write := byName["read_file"], byName["write_file"]
			if read == nil || write == nil {
				t.Fatalf("tools listed: %v", byName)
			}
			if a := read.Annotations; a == nil || !a.ReadOnlyHint || a.DestructiveHint == nil || *a.DestructiveHint {
				t.Errorf("read_file annotations %+v: want read-only, not destructive", a)
			}
			if a := write.Annotations; a == nil || a.ReadOnlyHint || a.DestructiveHint == nil || !*a.DestructiveHint {
				t.Errorf("write_file annotations %+v: want destructive", a)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"file_path": "hello.txt"}})
			if err != nil || res.IsError || !strings.Contains(callText(res), "hello from the workspace") {
				t.Fatalf("read_file: %v %+v %q", err, res, callText(res))
			}
			if len(asked) != 0 {
				t.Errorf("a read was asked about: %q", asked)
			}
			name := "written" + strings.ReplaceAll(version, "-", "") + ".txt"
			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "write_file", Arguments: map[string]any{"file_path": name, "content": "approved by elicitation"}})
			if err != nil || res.IsError {
				t.Fatalf("write_file: %v %+v %q\nstderr: %s", err, res, callText(res), stderr.String())
			}
			if len(asked) != 1 || !strings.Contains(asked[0], name) {
				t.Errorf("elicitations: %q; want one naming %s", asked, name)
			}
			if got, err := os.ReadFile(filepath.Join(ws, name)); err != nil || string(got) != "approved by elicitation" {
				t.Fatalf("%s: %q %v", name, got, err)
			}
		})
	}
}

// A client that cannot elicit is refused a call that needs approval, and
// so is one whose person says no: the file is not written.
func TestMCPServeRefusesUnapprovedWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("runs astrid mcp serve")
	}
	home, ws := t.TempDir(), t.TempDir()
	var asked []string
	for _, c := range []struct {
		name   string
		elicit func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)
	}{
		{"no elicitation", nil},
		{"answered no", approveWith("no", &asked)},
		{"declined", func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "decline"}, nil
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cs, _, _ := mcpServe(t, home, ws, "", c.elicit)
			ctx, cancel := context.WithTimeout(context.Background(), daemonPatience)
			defer cancel()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "write_file", Arguments: map[string]any{"file_path": "refused.txt", "content": "x"}})
			if err != nil || !res.IsError {
				t.Fatalf("write_file: %v %+v; want an error result", err, res)
			}
			if _, err := os.Stat(filepath.Join(ws, "refused.txt")); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("refused.txt written (%v): %q", err, callText(res))
			}
		})
	}
}

// Bad input gets a clear MCP error, and the server goes on serving; a
// cancelled call is cancelled on the bus (the fs capsule lets go of the
// FIFO it was reading).
func TestMCPServeBadInputAndCancel(t *testing.T) {
	if testing.Short() {
		t.Skip("runs astrid mcp serve")
	}
	home, ws := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "ok.txt"), []byte("still serving"), 0o600); err != nil {
		t.Fatal(err)
	}
	cs, cmd, stderr := mcpServe(t, home, ws, "", nil)
	ctx, cancel := context.WithTimeout(context.Background(), daemonPatience)
	defer cancel()
	stillServes := func(after string) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"file_path": "ok.txt"}})
		if err != nil || res.IsError || callText(res) == "" {
			t.Fatalf("read_file after %s: %v %+v", after, err, res)
		}
	}
	for _, c := range []struct {
		name string
		args any
		want string
	}{
		{"unknown tool", map[string]any{}, `unknown tool "no_such_tool"`},
		{"arguments not an object", json.RawMessage(`[1,2]`), "arguments must be a JSON object"},
		{"huge arguments", map[string]any{"file_path": "x", "content": strings.Repeat("a", 2<<20)}, "the largest a call may carry"},
	} {
		name := "write_file"
		if c.name == "unknown tool" {
			name = "no_such_tool"
		}
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: c.args})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want an error saying %q", c.name, err, c.want)
		}
		stillServes(c.name)
	}

	pipe, _ := pendingFIFO(t, ws)
	callCtx, cancelCall := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(callCtx, &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"file_path": filepath.Base(pipe)}})
		done <- err
	}()
	waitForOpenFile(t, cmd.Process.Pid, pipe, stderr)
	cancelCall()
	if err := testutil.WaitForRecv(t, daemonPatience, "the cancelled call to return", done); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled call: %v", err)
	}
	fdDir := filepath.Join("/proc", strconv.Itoa(cmd.Process.Pid), "fd")
	testutil.WaitFor(t, daemonPatience, "the cancelled read to close the FIFO", func() bool {
		fds, _ := os.ReadDir(fdDir)
		for _, fd := range fds {
			if target, err := os.Readlink(filepath.Join(fdDir, fd.Name())); err == nil && target == pipe {
				return false
			}
		}
		return true
	})
	stillServes("a cancelled call")
}

// bearer adds a bearer token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// mcpServeHTTP starts `astrid mcp serve --http 127.0.0.1:0` for home on ws
// (extra flags added) and returns its URL and the token it printed.
func mcpServeHTTP(t *testing.T, home, ws string, extra ...string) (url, token string) {
	t.Helper()
	return mcpServeHTTPEnv(t, home, ws, nil, extra...)
}

// mcpServeHTTPEnv is mcpServeHTTP with env added to the server's
// environment.
func mcpServeHTTPEnv(t *testing.T, home, ws string, env []string, extra ...string) (url, token string) {
	t.Helper()
	cmd := astridProcess(home, append([]string{"mcp", "serve", "--http", "127.0.0.1:0", "--workspace", ws}, extra...)...)
	cmd.Env = append(append(cmd.Env, noProviderEnv...), env...)
	stderr := &testutil.SyncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	})
	re := regexp.MustCompile(`serving MCP at (http://\S+)\nastrid: bearer token \(shown once\): (\S+)\n`)
	m := testutil.WaitForValue(t, daemonPatience, "astrid mcp serve --http to print its address and token", func() ([]string, bool) {
		m := re.FindStringSubmatch(stderr.String())
		return m, m != nil
	})
	return m[1], m[2]
}

// Over --http the same works for a client with the token; without it, or
// with a wrong one, the server answers 401 and serves nothing.
func TestMCPServeOverHTTP(t *testing.T) {
	if testing.Short() {
		t.Skip("runs astrid mcp serve")
	}
	home, ws := t.TempDir(), t.TempDir()
	url, token := mcpServeHTTP(t, home, ws, "--no-daemon")
	ctx, cancel := context.WithTimeout(context.Background(), daemonPatience)
	defer cancel()
	for _, bad := range []string{"", "wrong-" + token} {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if bad != "" {
			req.Header.Set("Authorization", "Bearer "+bad)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("token %q: %s, want 401 with a Bearer challenge", bad, resp.Status)
		}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "astrid-test", Version: "0"}, nil)
	if _, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil); err == nil {
		t.Error("a client without the token connected")
	}
	var asked []string
	client = mcp.NewClient(&mcp.Implementation{Name: "astrid-test", Version: "0"}, &mcp.ClientOptions{ElicitationHandler: approveWith("yes", &asked)})
	httpClient := &http.Client{Transport: bearer{token: token, next: http.DefaultTransport}}
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: httpClient}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cs.Close() }()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) == 0 {
		t.Fatalf("tools/list over HTTP: %v %v", err, tools)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "write_file", Arguments: map[string]any{"file_path": "over-http.txt", "content": "via http"}})
	if err != nil || res.IsError || len(asked) != 1 {
		t.Fatalf("write_file over HTTP: %v %+v %q; asked %q", err, res, callText(res), asked)
	}
	if got, err := os.ReadFile(filepath.Join(ws, "over-http.txt")); err != nil || string(got) != "via http" {
		t.Fatalf("over-http.txt: %q %v", got, err)
	}
}

// A non-loopback --http address is a usage error: the server is never
// offered to the network.
func TestMCPServeHTTPOnlyOnLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", "192.0.2.1:80", ":8080", "example.com:80"} {
		if _, errOut, code := runAstrid(t, "", "mcp", "serve", "--http", addr); code != 2 || !strings.Contains(errOut, "--http") {
			t.Errorf("--http %s: exit %d, %s; want a usage error", addr, code, errOut)
		}
	}
}

// Through a running daemon, in the caller's workspace: listed, and a
// write approved by elicitation lands in the caller's directory; the
// operator's skill is a resource, read from its capsule's static engine,
// and the conformance fixture's resource, prompt and completion are asked
// of it through the daemon's uplink (request and reply).
func TestMCPServeThroughTheDaemon(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a daemon and astrid mcp serve")
	}
	t.Setenv(mcpFixtureEnv, "1") // the daemon's and mcp serve's environment
	home, daemonWS, ws := realDir(t), realDir(t), realDir(t)
	skill := "---\nname: tidy\ndescription: Tidy the imports\n---\nRun goimports.\n"
	if err := os.MkdirAll(filepath.Join(home, "skills", "tidy"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "skills", "tidy", "SKILL.md"), []byte(skill), 0o600); err != nil {
		t.Fatal(err)
	}
	startDaemonIn(t, home, daemonWS)
	var asked []string
	cmd := astridProcess(home, "mcp", "serve", "--workspace", ws)
	cmd.Env = append(cmd.Env, noProviderEnv...)
	stderr := &testutil.SyncBuffer{}
	cmd.Stderr = stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "astrid-test", Version: "0"}, &mcp.ClientOptions{ElicitationHandler: approveWith("yes", &asked)})
	ctx, cancel := context.WithTimeout(context.Background(), daemonPatience)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	defer func() { _ = cs.Close() }()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "write_file", Arguments: map[string]any{"file_path": "via-daemon.txt", "content": "d"}})
	if err != nil || res.IsError || len(asked) != 1 {
		t.Fatalf("write_file through the daemon: %v %+v %q; asked %q\n%s", err, res, callText(res), asked, stderr.String())
	}
	if got, err := os.ReadFile(filepath.Join(ws, "via-daemon.txt")); err != nil || string(got) != "d" {
		t.Fatalf("via-daemon.txt in the caller's workspace: %q %v", got, err)
	}
	if _, err := os.Stat(filepath.Join(daemonWS, "via-daemon.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the write landed in the daemon's workspace (%v)", err)
	}
	const uri = "astrid://astrid-skills/skills/tidy"
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text != skill {
		t.Fatalf("read %s through the daemon: %+v, %v\n%s", uri, rr, err, stderr.String())
	}
	rr, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://template/42/data"})
	if err != nil || len(rr.Contents) != 1 || !strings.Contains(rr.Contents[0].Text, "Data for ID: 42") {
		t.Fatalf("the fixture's template through the daemon: %+v, %v\n%s", rr, err, stderr.String())
	}
	gp, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "test_prompt_with_arguments", Arguments: map[string]string{"arg1": "a", "arg2": "b"}})
	if err != nil || len(gp.Messages) != 1 {
		t.Fatalf("the fixture's prompt through the daemon: %+v, %v\n%s", gp, err, stderr.String())
	}
	cr, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "test_prompt_with_arguments"}, Argument: mcp.CompleteParamsArgument{Name: "arg1", Value: "test"}})
	if err != nil || !slices.Equal(cr.Completion.Values, []string{"testValue1", "test-alpha"}) {
		t.Fatalf("completion through the daemon: %+v, %v", cr, err)
	}
}
