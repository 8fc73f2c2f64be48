package kernel

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/astrid-go/astrid/capsules/fs"
	"github.com/astrid-go/astrid/capsules/router"
	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/capsule"
	"github.com/astrid-go/astrid/internal/capsulebuild"
	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/engine/wasm"
	"github.com/astrid-go/astrid/internal/host"
	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/manifest"
)

// wasmTestCache is shared with the wasm engine's tests: guests built once
// per source state, and one compilation cache.
var wasmTestCache = filepath.Join(os.TempDir(), "astrid-test-wasm")

// loadBuiltinsAsWasm builds the router and fs capsules to wasm and loads
// them into k through the wasm engine, in the native load order.
func loadBuiltinsAsWasm(t testing.TB, k *Kernel) {
	t.Helper()
	rt := newWasmRuntime(t, k)
	loadAsWasm(t, k, rt, "../../capsules/router", router.Manifest)
	loadAsWasm(t, k, rt, "../../capsules/fs", fs.Manifest)
}

// newWasmRuntime returns a wasm runtime on the shared compilation cache,
// closed after k.
func newWasmRuntime(t testing.TB, k *Kernel) *wasm.Runtime {
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
	return rt
}

// bootOneWasm boots a kernel without built-ins, with the test frontends
// plus client, and loads the built-in capsule in dir as wasm under toml,
// failing the test unless it runs through the wasm engine alone.
func bootOneWasm(t *testing.T, client dispatch.CapsuleACL, dir string, toml []byte) *Kernel {
	t.Helper()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	k, err := Boot(context.Background(), Options{
		Home: t.TempDir(), Workspace: ws, Config: config.Default(), Logger: logger, Builtins: []Builtin{},
		Frontends: append(testFrontends(), client),
	})
	if err != nil {
		t.Fatal(err)
	}
	loadAsWasm(t, k, newWasmRuntime(t, k), dir, toml)
	m, _ := manifest.Parse(toml, "Capsule.toml", "")
	if c, ok := k.Registry.Get(m.ID()); !ok || len(c.Engines()) != 1 || c.Engines()[0] != "wasm" {
		t.Fatalf("%s is not loaded through the wasm engine (%v)", m.ID(), ok)
	}
	return k
}

// loadAsWasm builds the built-in capsule in dir to wasm and loads it into
// k under toml through rt.
func loadAsWasm(t testing.TB, k *Kernel, rt *wasm.Runtime, dir string, toml []byte) {
	t.Helper()
	ctx := context.Background()
	built, err := capsulebuild.BuildCached(ctx, dir, wasmTestCache)
	if err != nil {
		t.Fatal(err)
	}
	m, diags := manifest.Parse(toml, "Capsule.toml", "")
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

// loadHostileWasm loads the wasm engine's hostile test capsule into k, on a
// wasm runtime charging k's CPU ledger.
func loadHostileWasm(t *testing.T, k *Kernel) {
	t.Helper()
	loadHostileWasmWith(t, k, nil)
}

// loadHostileWasmWith is loadHostileWasm with the manifest changed by edit
// first.
func loadHostileWasmWith(t *testing.T, k *Kernel, edit func(*manifest.Manifest)) {
	t.Helper()
	ctx := context.Background()
	rt, built := hostileWasm(t, k)
	m, diags := manifest.Load(hostileDir)
	if err := diags.Err(false); err != nil {
		t.Fatal(err)
	}
	// The module was built into the test cache, not beside the manifest:
	// a manifest without its directory names its component by path.
	m.Dir = ""
	m.Components[0].Path, m.Components[0].Hash = built.Wasm, built.SHA256
	if edit != nil {
		edit(m)
	}
	err := k.Load(ctx, m, "", func(h *host.Capsule) ([]capsule.Engine, error) {
		e, err := rt.Engine(m, h)
		return []capsule.Engine{e}, err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestASleepingWasmToolsAnswerArrives: a wasm tool that sleeps longer
// than its principal's whole CPU budget for a second (1.5 s against 1 s/s)
// answers, through the router running for the same principal. Before, the
// sleep was charged as guest time and the router's call relaying the answer
// was refused: the caller waited its whole timeout.
func TestASleepingWasmToolsAnswerArrives(t *testing.T) {
	cfg := config.Default()
	cfg.Limits.CPUBudgetMsPerSec = 1000
	k, _ := bootTestConfig(t, nil, cfg)
	loadHostileWasm(t, k)
	res, err := k.CallTool(context.Background(), ipc.DefaultPrincipal, "nap", json.RawMessage(`{"ms":1500}`), testTimeout)
	if err != nil || res.IsError || res.Content != "slept 1500 ms" {
		t.Fatalf("nap: %v %+v", err, res)
	}
	if u := k.Ledger.Usage(ipc.DefaultPrincipal); u.CPU >= 750*time.Millisecond || u.Refused != 0 {
		t.Errorf("usage after a 1.5 s sleep: %+v; want far less CPU than the sleep and nothing refused", u)
	}
}

// A wasm guest asks who intercepts a topic, and who exactly: the tool it
// provides by its exact topic, nothing for a topic no one takes, only
// "all" for a topic it takes by a wildcard, through
// the ABI's ipc_interceptors and ipc_exact_interceptors.
func TestWasmGuestAsksWhoInterceptsExactly(t *testing.T) {
	k, _ := bootTest(t, []Builtin{})
	loadHostileWasm(t, k)
	c, _ := k.Registry.Get("hostile")
	for _, tc := range []struct{ topic, want string }{
		{"tool.v1.execute.nap", `{"all":["hostile"],"exact":["hostile"]}`},
		{"tool.v1.execute.none", `{"all":[],"exact":[]}`},
		{"hostile.v1.wild.card", `{"all":["hostile"],"exact":[]}`},
	} {
		v, err := c.Invoke(context.Background(), hostapi.Invocation{Handler: "providers", Topic: "hostile.v1.providers", Principal: ipc.DefaultPrincipal, Payload: []byte(strconv.Quote(tc.topic))})
		if err != nil || string(v.Payload) != tc.want {
			t.Errorf("providers of %s = %s, %v; want %s", tc.topic, v.Payload, err, tc.want)
		}
	}
}

// A wasm guest spinning in a handler is interrupted by a cancel request
// naming its cancel key, through the kernel's one listener (no router
// here: the kernel's own cancel, not the tool convention's); the capsule
// keeps serving afterwards.
func TestCancelRequestInterruptsWasmGuest(t *testing.T) {
	k, _ := bootTest(t, []Builtin{})
	ctx := context.Background()
	loadHostileWasm(t, k)
	c, _ := k.Registry.Get("hostile")
	inv := func(handler, payload string) (hostapi.Verdict, error) {
		return c.Invoke(ctx, hostapi.Invocation{Handler: handler, Topic: "hostile.v1." + handler, Principal: ipc.DefaultPrincipal, Payload: []byte(payload)})
	}
	done := make(chan error, 1)
	go func() {
		_, err := inv("cancellable", `"call-wasm-cancel"`)
		done <- err
	}()
	var err error
	testutil.WaitFor(t, time.Minute, "the cancelled guest call to return", func() bool {
		select {
		case err = <-done:
			return true
		default:
			// Repeated until the guest has registered its key.
			publishCancel(t, k, ipc.DefaultPrincipal, "call-wasm-cancel")
			return false
		}
	})
	if err == nil || !strings.Contains(err.Error(), "cancelled") {
		t.Fatalf("cancelled call answered %v", err)
	}
	if v, err := inv("echo", `{"after":"cancel"}`); err != nil || string(v.Payload) != `{"after":"cancel"}` {
		t.Fatalf("capsule after cancel: %+v %v", v, err)
	}
}

// BenchmarkToolCallRoundTrip is one read_file call through the bus, router
// and fs, closed loop, with the built-ins native and as wasm.
func init() {
	roundTripImpls = append(roundTripImpls, roundTripImpl{"astrid-tool-call-wasm", func(b *testing.B) (func() error, func()) {
		k, ws := bootBench(b, []Builtin{})
		loadBuiltinsAsWasm(b, k)
		return toolRoundTrip(b, k, ws)
	}})
}
