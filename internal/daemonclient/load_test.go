package daemonclient_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/astrid-go/astrid/capsules/uplink"
	"github.com/astrid-go/astrid/internal/daemonclient"
	"github.com/astrid-go/astrid/internal/uplinkwire"
)

// The load op reaches the daemon's loader only from the owner's uid, with
// the capsule named; its answer is the payload. Another uid, no loader, a
// missing or overlong name are refused, each with its code.
func TestLoadOp(t *testing.T) {
	me := os.Getuid()
	var mu sync.Mutex
	var asked []string
	load := func(id string, owner bool) (json.RawMessage, error) {
		mu.Lock()
		asked = append(asked, id)
		mu.Unlock()
		if id == "broken" {
			return nil, errors.New("it does not load")
		}
		return json.Marshal(map[string]any{"id": id, "owner": owner})
	}
	d := boot(t, uplink.Settings{OwnerUID: me, Load: load})
	c := d.dial(t)
	var got struct {
		ID    string
		Owner bool
	}
	if err := c.Load("greeter", time.Minute, &got); err != nil || got.ID != "greeter" || !got.Owner {
		t.Fatalf("load by the owner: %+v, %v", got, err)
	}
	code := func(err error) string {
		var de *daemonclient.Error
		if errors.As(err, &de) {
			return de.Code
		}
		return ""
	}
	if err := c.Load("broken", time.Minute, new(any)); code(err) != uplinkwire.CodeFailed || !strings.Contains(err.Error(), "it does not load") {
		t.Fatalf("a failing load: %v", err)
	}
	for _, id := range []string{"", strings.Repeat("x", 129)} {
		if err := c.Load(id, time.Minute, new(any)); code(err) != uplinkwire.CodeBadFrame {
			t.Fatalf("load %d bytes: %v", len(id), err)
		}
	}
	other := boot(t, uplink.Settings{OwnerUID: me + 1, Principals: map[int]string{me: "alice"}, Load: load})
	if err := other.dial(t).Load("greeter", time.Minute, new(any)); code(err) != uplinkwire.CodeNotAllowed {
		t.Fatalf("load by another uid: %v", err)
	}
	none := boot(t, owner())
	if err := none.dial(t).Load("greeter", time.Minute, new(any)); code(err) != uplinkwire.CodeFailed {
		t.Fatalf("load without a loader: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 2 {
		t.Fatalf("the loader was asked %v, want greeter and broken only", asked)
	}
}

// The attach_mcp op reaches the daemon's attacher only from the owner's
// uid on a connection whose hello named a workspace, with the
// connection's principal and scope and the servers as sent; the answer's
// ids are the tools. Another uid, no workspace, no attacher, a failing
// attach are refused, each with its code.
func TestAttachMCPOp(t *testing.T) {
	me := os.Getuid()
	type asked struct {
		principal string
		scope     uint64
		servers   string
	}
	var mu sync.Mutex
	var got []asked
	attach := func(principal string, scope uint64, servers json.RawMessage) ([]string, error) {
		mu.Lock()
		got = append(got, asked{principal, scope, string(servers)})
		mu.Unlock()
		if strings.Contains(string(servers), "broken") {
			return nil, errors.New("command \"broken\" is not allowed")
		}
		return []string{"everything-s1:echo"}, nil
	}
	code := func(err error) string {
		var de *daemonclient.Error
		if errors.As(err, &de) {
			return de.Code
		}
		return ""
	}
	servers := []map[string]string{{"name": "everything", "command": "npx"}}
	d := boot(t, uplink.Settings{OwnerUID: me, AttachMCP: attach})
	d.dial(t) // waits for the socket
	c, err := daemonclient.Dial(context.Background(), d.home, daemonclient.Options{Workspace: t.TempDir(), Timeout: testWait})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if tools, err := c.AttachMCP(servers, time.Minute); err != nil || len(tools) != 1 || tools[0] != "everything-s1:echo" {
		t.Fatalf("attach by the owner: %v, %v", tools, err)
	}
	if _, err := c.AttachMCP([]map[string]string{{"name": "broken"}}, time.Minute); code(err) != uplinkwire.CodeFailed || !strings.Contains(err.Error(), "not allowed") {
		t.Fatalf("a refused attach: %v", err)
	}
	if _, err := d.dial(t).AttachMCP(servers, time.Minute); code(err) != uplinkwire.CodeWorkspace {
		t.Fatalf("attach on a connection without a workspace: %v", err)
	}
	other := boot(t, uplink.Settings{OwnerUID: me + 1, Principals: map[int]string{me: "alice"}, AttachMCP: attach})
	if _, err := other.dial(t).AttachMCP(servers, time.Minute); code(err) != uplinkwire.CodeNotAllowed {
		t.Fatalf("attach by another uid: %v", err)
	}
	none := boot(t, owner())
	none.dial(t)
	cn, err := daemonclient.Dial(context.Background(), none.home, daemonclient.Options{Workspace: t.TempDir(), Timeout: testWait})
	if err != nil {
		t.Fatal(err)
	}
	defer cn.Close()
	if _, err := cn.AttachMCP(servers, time.Minute); code(err) != uplinkwire.CodeFailed {
		t.Fatalf("attach without an attacher: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 || got[0].principal != "default" || got[0].scope == 0 || !strings.Contains(got[0].servers, `"command":"npx"`) {
		t.Fatalf("the attacher was asked %+v", got)
	}
}
