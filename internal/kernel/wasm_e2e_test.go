package kernel

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/astrid-go/astrid/capsules/fs"
	"github.com/astrid-go/astrid/capsules/router"
	"github.com/astrid-go/astrid/internal/capsule"
	"github.com/astrid-go/astrid/internal/capsulebuild"
	"github.com/astrid-go/astrid/internal/engine/wasm"
	"github.com/astrid-go/astrid/internal/host"
	"github.com/astrid-go/astrid/manifest"
)

// wasmTestCache is shared with the wasm engine's tests: guests built once
// per source state, and one compilation cache.
var wasmTestCache = filepath.Join(os.TempDir(), "astrid-test-wasm")

// loadBuiltinsAsWasm builds the router and fs capsules to wasm and loads
// them into k through the wasm engine, in the native load order.
func loadBuiltinsAsWasm(t testing.TB, k *Kernel) {
	t.Helper()
	ctx := context.Background()
	rt, err := wasm.NewRuntime(ctx, wasm.Options{
		CacheDir: filepath.Join(wasmTestCache, "compiled"),
		Logger:   slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})),
	})
	if err != nil {
		t.Fatal(err)
	}
	// Cleanups run last-in first-out: the kernel (which unloads the
	// capsules) closes before the runtime. k.Close is idempotent.
	t.Cleanup(func() { _ = rt.Close(ctx) })
	t.Cleanup(k.Close)
	for _, c := range []struct {
		dir  string
		toml []byte
	}{
		{"../../capsules/router", router.Manifest},
		{"../../capsules/fs", fs.Manifest},
	} {
		built, err := capsulebuild.BuildCached(ctx, c.dir, wasmTestCache)
		if err != nil {
			t.Fatal(err)
		}
		m, diags := manifest.Parse(c.toml, "Capsule.toml", "")
		if err := diags.Err(false); err != nil {
			t.Fatal(err)
		}
		m.Components = append(m.Components, manifest.Component{
			File: filepath.Base(built.Wasm), Path: built.Wasm, Type: manifest.ComponentExecutable, Hash: built.SHA256,
		})
		err = k.Load(ctx, m, "", func(h *host.Capsule) ([]capsule.Engine, error) {
			e, err := rt.Engine(m, h)
			if err != nil {
				return nil, err
			}
			return []capsule.Engine{e}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// The coordinator's end-to-end suite, with the same router and fs code
// running as wasm instead of natively.
func TestToolSuiteWasm(t *testing.T) {
	k, ws := bootTest(t, []Builtin{})
	loadBuiltinsAsWasm(t, k)
	for _, id := range []string{"astrid-capsule-router", "astrid-capsule-fs"} {
		c, ok := k.Registry.Get(id)
		if !ok || len(c.Engines()) != 1 || c.Engines()[0] != "wasm" {
			t.Fatalf("%s is not loaded through the wasm engine (%v)", id, ok)
		}
	}
	runToolSuite(t, k, ws)
}
