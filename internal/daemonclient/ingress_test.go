package daemonclient_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/astrid-go/astrid/capsules/uplink"
	"github.com/astrid-go/astrid/internal/daemonclient"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/toolclient"
	"github.com/astrid-go/astrid/internal/uplinkwire"
	"github.com/astrid-go/astrid/ipc"
)

// Each client publishes under its own principal's ingress list: a client
// of a principal narrowed to tool descriptions may list the tools and is
// refused a tool call and a model change; a narrowing of another principal
// leaves the client's own list whole.
func TestIngressPerClientPrincipal(t *testing.T) {
	me := os.Getuid()
	t.Run("narrowed", func(t *testing.T) {
		d := boot(t, uplink.Settings{OwnerUID: me, Ingress: map[string][]string{"default": {ipc.ToolRequestDescribeTopic}}})
		c := d.dial(t)
		if tools, _, err := toolclient.ListTools(context.Background(), c, c.Principal(), 5*time.Second); err != nil || len(tools) == 0 {
			t.Fatalf("tool list under the narrowed list: %v, %v", tools, err)
		}
		for _, topic := range []string{ipc.ToolRequestExecuteTopic, ipc.RegistrySetActiveModelTopic, ipc.UserPromptTopic, ipc.ApprovalResponseTopic("appr-1")} {
			var de *daemonclient.Error
			if _, err := c.Publish(dispatch.Caller{}, topic, json.RawMessage(`{}`)); !errors.As(err, &de) || de.Code != uplinkwire.CodeNotAllowed {
				t.Errorf("publish on %s: %v, want %s", topic, err, uplinkwire.CodeNotAllowed)
			}
		}
		res, err := toolclient.CallTool(context.Background(), c, c.Principal(), "read_file", json.RawMessage(`{"file_path":"README.md"}`), testWait)
		if err == nil && !res.IsError {
			t.Fatalf("a tool call under a list without tool.v1.request.execute: %+v", res)
		}
	})
	t.Run("another principal narrowed", func(t *testing.T) {
		d := boot(t, uplink.Settings{OwnerUID: me, Ingress: map[string][]string{"guest": {ipc.ToolRequestDescribeTopic}}})
		d.works(t) // default's tool call
	})
}
