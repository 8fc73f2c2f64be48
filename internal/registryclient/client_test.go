package registryclient_test

import (
	"context"
	"errors"
	"testing"

	"github.com/astrid-go/astrid/internal/registryclient"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk/sdktest"
)

// Without a registry every request says so at once, and an unknown
// operation is refused before anything is published.
func TestNoRegistry(t *testing.T) {
	k := sdktest.New(t)
	ctx := context.Background()
	for name, f := range map[string]func() (ipc.RegistryReply, error){
		"list":    func() (ipc.RegistryReply, error) { return registryclient.List(ctx, k.Agent(), "alice") },
		"current": func() (ipc.RegistryReply, error) { return registryclient.Current(ctx, k.Agent(), "alice") },
		"set":     func() (ipc.RegistryReply, error) { return registryclient.Set(ctx, k.Agent(), "alice", "a:b") },
		"unset":   func() (ipc.RegistryReply, error) { return registryclient.Unset(ctx, k.Agent(), "alice") },
	} {
		if _, err := f(); !errors.Is(err, registryclient.ErrNoRegistry) {
			t.Errorf("%s: %v, want ErrNoRegistry", name, err)
		}
	}
	if _, err := registryclient.Ask(ctx, k.Agent(), "alice", "drop_tables", ipc.RegistryRequest{}); err == nil {
		t.Error("an unknown operation was sent")
	}
}

// The client's identity may ask the registry and hear its answers, and
// nothing else.
func TestACLIsLeastPrivilege(t *testing.T) {
	acl := registryclient.ACL()
	if len(acl.Publish) != 4 {
		t.Fatalf("publish %v", acl.Publish)
	}
	for _, p := range append(acl.Publish, acl.Subscribe...) {
		if len(p) < len("registry.v1.") || p[:len("registry.v1.")] != "registry.v1." {
			t.Errorf("grant %q is outside registry.v1.*", p)
		}
	}
}
