//go:build unix

package kernel

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/testutil"
)

// hungServerManifest is a capsule whose MCP server starts, reads its stdin
// and keeps its stdout open, but never answers initialize.
const hungServerManifest = `[package]
name = "hung"
version = "0.1.0"

[capabilities]
host_process = ["sh"]

[[mcp_server]]
id = "hung"
type = "stdio"
command = "sh"
args = ["-c", "while read -r line; do :; done"]
`

// A hung MCP server does not delay a call of a tool it does not provide:
// with a handshake timeout far longer than the test may take, read_file is
// answered while the hung capsule is still loading, and closing the kernel
// cancels its handshake instead of waiting it out. Before, every command
// waited the whole handshake timeout (30 s per hung server, in turn).
func TestAHungMCPServerDoesNotDelayOtherTools(t *testing.T) {
	home := t.TempDir()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(home, "capsules", "hung")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "Capsule.toml"), []byte(hungServerManifest), 0o644); err != nil {
		t.Fatal(err)
	}
	approveInstalled(t, home, "hung")
	if err := os.WriteFile(filepath.Join(ws, "hello.txt"), []byte("hi there\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.MCPHandshakeTimeout = config.Duration{Duration: time.Hour}
	logs := &testutil.SyncBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	k, err := Boot(context.Background(), Options{Home: home, Workspace: ws, Config: cfg, Logger: logger, LoadInBackground: true, Builtins: Builtins(), Frontends: testFrontends()})
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			k.Close()
		}
	}()
	ctx := context.Background()
	if err := k.Runtime.WaitForTool(ctx, "read_file"); err != nil {
		t.Fatal(err)
	}
	res, err := k.CallTool(ctx, "default", "read_file", json.RawMessage(`{"file_path":"hello.txt"}`), time.Minute)
	if err != nil || res.IsError || !strings.Contains(res.Content, "hi there") {
		t.Fatalf("read_file = %+v, %v", res, err)
	}
	state := ""
	for _, s := range k.Runtime.List() {
		if s.ID == "hung" {
			state = s.State
		}
	}
	if state != "loading" {
		t.Fatalf("hung capsule is %q after read_file returned, want still loading (the call must not have waited for it)\n%s", state, logs)
	}
	k.Close() // cancels the handshake; waiting it out would take an hour
	closed = true
	for _, s := range k.Runtime.List() {
		if s.ID == "hung" && s.State == "ready" {
			t.Fatalf("hung capsule became ready: %+v", s)
		}
	}
}
