package kernel

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/astrid-go/astrid/capsules/fs"
	"github.com/astrid-go/astrid/capsules/router"
	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/toolclient"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// The kernel imports neither the built-in capsules nor the tool client
// (cmd/astrid passes them in); its tests boot it as cmd/astrid does and
// drive it as the CLI does, through these test-only helpers.

// Builtins are the built-in capsules cmd/astrid passes, in its order.
func Builtins() []Builtin {
	return []Builtin{
		{Manifest: router.Manifest, New: router.New},
		{Manifest: fs.Manifest, New: fs.New},
	}
}

// testFrontends is the CLI's frontend identity, as cmd/astrid passes it.
func testFrontends() []dispatch.CapsuleACL { return []dispatch.CapsuleACL{toolclient.ACL()} }

// ClientID is the identity the CLI's tool client acts under.
const ClientID = toolclient.ClientID

// ToolInfo is one described tool.
type ToolInfo = toolclient.ToolInfo

// NewCallID returns a fresh call id.
func NewCallID() string { return toolclient.NewCallID() }

func (k *Kernel) CallTool(ctx context.Context, principal, name string, args json.RawMessage, timeout time.Duration) (ipc.ToolCallResult, error) {
	return toolclient.CallTool(ctx, k.Frontend(), principal, name, args, timeout)
}

func (k *Kernel) CallToolWithID(ctx context.Context, principal, callID, name string, args json.RawMessage, timeout time.Duration) (ipc.ToolCallResult, error) {
	return toolclient.CallToolWithID(ctx, k.Frontend(), principal, callID, name, args, timeout)
}

func (k *Kernel) NewToolClient(principal string) (*toolclient.ToolClient, error) {
	return toolclient.New(k.Frontend(), principal)
}

func (k *Kernel) ListTools(ctx context.Context, principal string, window time.Duration) ([]ToolInfo, []string, error) {
	return toolclient.ListTools(ctx, k.Frontend(), principal, window)
}

// A frontend's identity is the kernel's to hand out: a capsule cannot take
// it, and a kernel given no frontends registers none (it knows no tool
// client of its own).
func TestFrontendIdentitiesAreOnlyThoseGiven(t *testing.T) {
	impostor := []byte("[package]\nname = \"" + ClientID + "\"\nversion = \"0.1.0\"\n")
	home, ws := t.TempDir(), t.TempDir()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	k, err := Boot(context.Background(), Options{
		Home: home, Workspace: ws, Config: config.Default(), Logger: logger,
		Builtins:  []Builtin{{Manifest: impostor, New: func() *sdk.Capsule { return sdk.New("impostor") }}},
		Frontends: testFrontends(),
	})
	if err == nil {
		k.Close()
		t.Fatalf("a capsule named %s loaded beside the frontend of that name", ClientID)
	}
	t.Logf("refused: %v", err)
	if !strings.Contains(err.Error(), "reserved") {
		t.Fatalf("boot failed, but not over the reserved id: %v", err)
	}

	k, err = Boot(context.Background(), Options{Home: t.TempDir(), Workspace: ws, Config: config.Default(), Logger: logger, Builtins: Builtins()})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	if _, err := k.NewToolClient(ipc.DefaultPrincipal); err == nil {
		t.Fatal("a tool client acted on a kernel that was given no frontend")
	}
}
