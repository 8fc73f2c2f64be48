package daemonclient_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/astrid-go/astrid/capsules/approval"
	"github.com/astrid-go/astrid/capsules/fs"
	"github.com/astrid-go/astrid/capsules/promptbuilder"
	"github.com/astrid-go/astrid/capsules/react"
	"github.com/astrid-go/astrid/capsules/registry"
	"github.com/astrid-go/astrid/capsules/replay"
	"github.com/astrid-go/astrid/capsules/router"
	"github.com/astrid-go/astrid/capsules/session"
	"github.com/astrid-go/astrid/capsules/uplink"
	"github.com/astrid-go/astrid/internal/agentclient"
	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/daemonclient"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/kernel"
	"github.com/astrid-go/astrid/internal/registryclient"
	"github.com/astrid-go/astrid/internal/sessionclient"
	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/internal/toolclient"
	"github.com/astrid-go/astrid/ipc"
)

// The client packages take a daemon connection as their kernel.
var (
	_ toolclient.Kernel     = (*daemonclient.Client)(nil)
	_ agentclient.Kernel    = (*daemonclient.Client)(nil)
	_ registryclient.Kernel = (*daemonclient.Client)(nil)
)

// testWait bounds what a test waits for, so a broken uplink fails rather
// than hangs; it is never what a test measures.
const testWait = time.Minute

const writeScript = `{"match": {"tool_results": ["w1"]}}
{"TextDelta": "Done with the file."}
"Done"
{"match": {"user": "write"}}
{"ToolCallStart": {"id": "w1", "name": "write_file"}}
{"ToolCallDelta": {"id": "w1", "args_delta": "{\"file_path\":\"notes.txt\",\"content\":\"from the agent\"}"}}
{"ToolCallEnd": {"id": "w1"}}
"Done"
`

type daemon struct {
	k    *kernel.Kernel
	home string
	ws   string
	logs *testutil.SyncBuffer // warnings and errors
}

// boot starts a kernel with the uplink as a built-in, as the daemon does,
// and the agent's capsules behind it.
func boot(t testing.TB, s uplink.Settings) *daemon {
	t.Helper()
	return bootWith(t, s)
}

// bootWith is boot with extra built-ins after the agent's capsules.
func bootWith(t testing.TB, s uplink.Settings, extra ...kernel.Builtin) *daemon {
	t.Helper()
	return bootConfigured(t, s, config.Default(), writeScript, nil, extra...)
}

// bootConfigured is bootWith with cfg, the replay script and react's
// settings.
func bootConfigured(t testing.TB, s uplink.Settings, cfg config.Config, replayScript string, reactEnv map[string]string, extra ...kernel.Builtin) *daemon {
	t.Helper()
	// A short home: a unix socket path is at most 108 bytes.
	home, err := os.MkdirTemp("", "up")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "README.md"), []byte("# Demo\nIt holds a README.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(ws, "script.jsonl")
	if err := os.WriteFile(script, []byte(replayScript), 0o600); err != nil {
		t.Fatal(err)
	}
	logs := &testutil.SyncBuffer{}
	k, err := kernel.Boot(context.Background(), kernel.Options{
		Home: home, Workspace: ws, Config: cfg,
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Builtins: append([]kernel.Builtin{
			{Manifest: uplink.Manifest, New: uplink.NewWith(s)},
			{Manifest: router.Manifest, New: router.New},
			{Manifest: approval.Manifest, New: approval.New},
			{Manifest: fs.Manifest, New: fs.New},
			{Manifest: session.Manifest, New: session.New},
			{Manifest: replay.Manifest, New: replay.New},
			{Manifest: registry.Manifest, New: registry.New},
			{Manifest: promptbuilder.Manifest, New: promptbuilder.New},
			{Manifest: react.Manifest, New: react.New},
		}, extra...),
		Frontends:      []dispatch.CapsuleACL{toolclient.ACL()},
		ConfigFallback: map[string]map[string]string{"astrid-capsule-replay": {"script": script}, "astrid-capsule-react": reactEnv},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	return &daemon{k: k, home: home, ws: ws, logs: logs}
}

func owner() uplink.Settings { return uplink.Settings{OwnerUID: os.Getuid()} }

func (d *daemon) dial(t testing.TB) *daemonclient.Client {
	t.Helper()
	// The uplink's service binds once the kernel has registered it, on
	// its own goroutine: a first dial may come before.
	var c *daemonclient.Client
	err := testutil.WaitForValue(t, testWait, "the uplink to listen", func() (error, bool) {
		var err error
		c, err = daemonclient.Dial(context.Background(), d.home, daemonclient.Options{Timeout: testWait})
		return err, !errors.Is(err, daemonclient.ErrNoDaemon)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestDialWithoutDaemonIsErrNoDaemon(t *testing.T) {
	_, err := daemonclient.Dial(context.Background(), t.TempDir(), daemonclient.Options{})
	if !errors.Is(err, daemonclient.ErrNoDaemon) {
		t.Fatalf("err = %v, want ErrNoDaemon", err)
	}
	// A stale socket file (a killed daemon) is no daemon either.
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Dir(daemonclient.SocketPath(home)), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(daemonclient.SocketPath(home), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := daemonclient.Dial(context.Background(), home, daemonclient.Options{}); !errors.Is(err, daemonclient.ErrNoDaemon) {
		t.Fatalf("stale socket file: err = %v, want ErrNoDaemon", err)
	}
}

func TestHandshakeAndToolCall(t *testing.T) {
	d := boot(t, owner())
	c := d.dial(t)
	if c.Principal() != ipc.DefaultPrincipal {
		t.Fatalf("principal = %q, want the owner's %q", c.Principal(), ipc.DefaultPrincipal)
	}
	info, err := os.Stat(daemonclient.SocketPath(d.home))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("socket mode = %v, %v; want 0600", info.Mode(), err)
	}
	res, err := toolclient.CallTool(context.Background(), c, c.Principal(), "read_file", json.RawMessage(`{"file_path":"README.md"}`), testWait)
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || !strings.Contains(string(res.Content), "It holds a README.") {
		t.Fatalf("read_file over the socket = %+v", res)
	}
	tools, _, err := toolclient.ListTools(context.Background(), c, c.Principal(), 2*time.Second)
	if err != nil || len(tools) == 0 {
		t.Fatalf("ListTools over the socket = %v, %v", tools, err)
	}
}

// A replayed agent turn over the socket: the agent's write_file is held by
// the approval layer, the question reaches the client, the client's answer
// (relayed by the uplink) is accepted, and the file is written.
func TestAgentTurnWithApprovalOverSocket(t *testing.T) {
	d := boot(t, owner())
	c := d.dial(t)
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	defer cancel()
	asked := 0
	resp, err := agentclient.Run(ctx, c, agentclient.Prompt{Text: "write the notes", SessionID: agentclient.NewSessionID()}, func(turn *agentclient.Turn, ev agentclient.Event) {
		if ev.Kind == agentclient.EventApproval {
			asked++
			if err := turn.Answer(ev.Approval.RequestID, ipc.DecisionApprove); err != nil {
				t.Errorf("answer: %v", err)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if asked != 1 {
		t.Fatalf("%d approval questions reached the client, want 1", asked)
	}
	if !strings.Contains(resp.Text, "Done with the file.") {
		t.Fatalf("response = %+v", resp)
	}
	if b, err := os.ReadFile(filepath.Join(d.ws, "notes.txt")); err != nil || string(b) != "from the agent" {
		t.Fatalf("notes.txt = %q, %v: the approved call did not run", b, err)
	}
}

// Session and registry commands work over the socket as in-process: after
// a turn, its session is listed for the connection's principal, and the
// registry lists the replay provider's model.
func TestSessionAndRegistryOverSocket(t *testing.T) {
	d := boot(t, owner())
	c := d.dial(t)
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	defer cancel()
	session := agentclient.NewSessionID()
	if _, err := agentclient.Run(ctx, c, agentclient.Prompt{Text: "write the notes", SessionID: session}, func(turn *agentclient.Turn, ev agentclient.Event) {
		if ev.Kind == agentclient.EventApproval {
			_ = turn.Answer(ev.Approval.RequestID, ipc.DecisionDeny)
		}
	}); err != nil {
		t.Fatal(err)
	}
	list, err := sessionclient.List(ctx, c, c.Principal(), true)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, s := range list {
		found = found || s.SessionID == session
	}
	if !found {
		t.Fatalf("session %s not listed over the socket: %+v", session, list)
	}
	reply, err := registryclient.List(ctx, c, c.Principal())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(mustJSON(t, reply)), "replay") {
		t.Fatalf("the registry over the socket lists no replay model: %+v", reply)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A daemon that goes away mid-wait ends the client's waits with
// ErrDisconnected, and its requests fail rather than hang.
func TestDaemonGoingAwayEndsEveryWait(t *testing.T) {
	d := boot(t, owner())
	c := d.dial(t)
	got := recvInBackground(t, c)
	d.k.Close()
	if err := <-got; !errors.Is(err, daemonclient.ErrDisconnected) {
		t.Fatalf("Recv after the daemon stopped: %v, want ErrDisconnected", err)
	}
	<-c.Done()
	if _, err := c.Publish(dispatch.Caller{}, ipc.UserPromptTopic, json.RawMessage(`{}`)); !errors.Is(err, daemonclient.ErrDisconnected) {
		t.Fatalf("Publish after the daemon stopped: %v, want ErrDisconnected", err)
	}
	if _, err := os.Stat(daemonclient.SocketPath(d.home)); !os.IsNotExist(err) {
		t.Fatalf("the socket file outlived the uplink: %v", err)
	}
}

// recvInBackground subscribes c to agent.v1.* and waits for one event on a
// goroutine of its own; the channel gets the Recv's error.
func recvInBackground(t *testing.T, c *daemonclient.Client) <-chan error {
	t.Helper()
	sub, err := c.Subscribe(dispatch.Caller{}, "agent.v1.*", true)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		_, err := sub.Recv(context.Background())
		got <- err
	}()
	return got
}
