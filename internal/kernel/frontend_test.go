package kernel

import (
	"context"
	"encoding/json"
	"time"

	"github.com/astrid-go/astrid/capsules/fs"
	"github.com/astrid-go/astrid/capsules/router"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/toolclient"
	"github.com/astrid-go/astrid/ipc"
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
