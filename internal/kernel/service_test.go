package kernel

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/capsule"
	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/sdk"
)

const serviceManifest = `
[package]
name = "svc"
version = "0.1.0"
[publish]
"svc.v1.started" = "opaque"
`

// A native service starts once its capsule is registered (its first
// publish is allowed), runs as the system principal with no deadline, and
// is stopped, and waited for, by unload.
func TestNativeServiceRunsUntilUnload(t *testing.T) {
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	k, err := Boot(context.Background(), Options{
		Home: t.TempDir(), Workspace: ws, Config: config.Default(),
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	if err := k.Dispatcher.Register(dispatch.CapsuleACL{ID: "watcher", Subscribe: []string{"svc.v1.started"}}, frontendTarget{}); err != nil {
		t.Fatal(err)
	}
	started, err := k.Dispatcher.Subscribe(dispatch.Caller{Capsule: "watcher"}, "svc.v1.started", false)
	if err != nil {
		t.Fatal(err)
	}
	defer started.Close()
	var stopped atomic.Bool
	var principal atomic.Value
	newCode := func() *sdk.Capsule {
		c := sdk.New("a service")
		c.Serve(func(ctx context.Context, h hostapi.Host) error {
			principal.Store(h.Principal())
			if err := h.Publish("svc.v1.started", []byte(`{}`)); err != nil {
				return err
			}
			<-ctx.Done()
			stopped.Store(true)
			return ctx.Err()
		})
		return c
	}
	if err := k.LoadNative(context.Background(), Builtin{Manifest: []byte(serviceManifest), New: newCode}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	d, err := started.Recv(ctx)
	if err != nil {
		t.Fatalf("the service did not publish: %v", err)
	}
	if d.Envelope.SourceID != "svc" || d.Envelope.Principal != "" || principal.Load() != "" {
		t.Fatalf("the service acted as %q/%q, want the system principal", d.Envelope.SourceID, d.Envelope.Principal)
	}
	if stopped.Load() {
		t.Fatal("the service stopped before unload")
	}
	if err := k.Unload(context.Background(), "svc"); err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	if !stopped.Load() {
		t.Fatal("unload returned while the service still ran")
	}
}

// A service that ends with an error marks its capsule failed, with why.
func TestAFailedServiceShowsInTheCapsulesHealth(t *testing.T) {
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	k, err := Boot(context.Background(), Options{
		Home: t.TempDir(), Workspace: ws, Config: config.Default(),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	done := make(chan struct{})
	newCode := func() *sdk.Capsule {
		c := sdk.New("a failing service")
		c.Serve(func(context.Context, hostapi.Host) error {
			defer close(done)
			return errors.New("cannot bind: the socket is in use")
		})
		return c
	}
	if err := k.LoadNative(context.Background(), Builtin{Manifest: []byte(serviceManifest), New: newCode}); err != nil {
		t.Fatal(err)
	}
	<-done
	for {
		c, ok := k.Registry.Get("svc")
		if !ok {
			t.Fatal("svc is not loaded")
		}
		if h := c.Health(); h.State == capsule.Failed {
			if h.Err == nil || !strings.Contains(h.Err.Error(), "socket is in use") {
				t.Fatalf("health error = %v", h.Err)
			}
			return
		}
		runtime.Gosched() // the health is set just after the service returns
	}
}
