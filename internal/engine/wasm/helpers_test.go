package wasm

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/internal/capsule"
	"github.com/astrid-go/astrid/internal/capsulebuild"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/host"
	"github.com/astrid-go/astrid/internal/host/ask"
	"github.com/astrid-go/astrid/internal/store"
	"github.com/astrid-go/astrid/manifest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// testCache is shared by every test binary of a run and across runs: built
// guests keyed by source hash, and one compilation cache.
var testCache = filepath.Join(os.TempDir(), "astrid-test-wasm")

var (
	buildMu sync.Mutex
	builds  = map[string]capsulebuild.Result{}
)

// guest builds the capsule package dir to wasm, once per test binary.
func guest(t testing.TB, dir string) capsulebuild.Result {
	t.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	if r, ok := builds[dir]; ok {
		return r
	}
	r, err := capsulebuild.BuildCached(context.Background(), dir, testCache)
	if err != nil {
		t.Fatalf("build %s: %v", dir, err)
	}
	builds[dir] = r
	return r
}

// syncBuffer is a log sink tests can read while capsules write to it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newRuntime(t testing.TB, opts Options) *Runtime {
	t.Helper()
	if opts.CacheDir == "" {
		opts.CacheDir = filepath.Join(testCache, "compiled")
	}
	rt, err := NewRuntime(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close(context.Background()) })
	return rt
}

// testFrontend is the frontend id whose approval answers count.
const testFrontend = "wasm-test-frontend"

// harness is the part of a kernel a capsule needs: bus, dispatcher,
// store and the cancel-key registry. (internal/kernel imports this package,
// so the tests cannot boot a kernel.)
type harness struct {
	bus     *bus.Bus
	d       *dispatch.Dispatcher
	cancels *host.Cancels
	deps    host.Deps
	log     *slog.Logger
	// host is the host side of the capsule loaded last; closing it is
	// what an unload does to the capsule's processes.
	host *host.Capsule
}

func newHarness(t testing.TB, logs *syncBuffer) (*harness, string) {
	t.Helper()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	st, err := store.Open(filepath.Join(home, "state.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b := bus.New(bus.Options{Logger: logger})
	d := dispatch.New(b, dispatch.Options{Logger: logger})
	h := &harness{bus: b, d: d, cancels: host.NewCancels(), log: logger}
	h.deps = host.Deps{Dispatcher: d, Store: st, Cancels: h.cancels, Logger: logger, Workspace: ws, HomesDir: filepath.Join(home, "home"),
		Bus: b, Approvals: ask.NewApprovals([]string{testFrontend}, 0), Elicits: ask.NewElicits([]string{testFrontend}, 0)}
	t.Cleanup(func() {
		d.Close()
		b.Close()
		_ = st.Close()
	})
	return h, ws
}

// load loads m with a wasm engine on rt and registers it with the
// dispatcher, as the kernel does.
func (h *harness) load(t testing.TB, rt *Runtime, m *manifest.Manifest, installDir string) (*Engine, error) {
	t.Helper()
	e, err := h.loadEngine(t, rt, m, installDir)
	if err != nil {
		return nil, err
	}
	return e.(*Engine), nil
}

// loadEngine is load for any wasm engine: one component's or several's.
func (h *harness) loadEngine(t testing.TB, rt *Runtime, m *manifest.Manifest, installDir string) (capsule.Engine, error) {
	t.Helper()
	hc, err := host.NewCapsule(h.deps, m, installDir, nil)
	if err != nil {
		return nil, err
	}
	h.host = hc
	t.Cleanup(hc.Close)
	e, err := rt.Engine(m, hc)
	if err != nil {
		return nil, err
	}
	comp := capsule.NewComposite(m, 0, h.log, e)
	if err := comp.Load(context.Background()); err != nil {
		return nil, err
	}
	acl := dispatch.CapsuleACL{ID: m.ID(), Publish: m.PublishPatterns(), Subscribe: m.SubscribePatterns()}
	for _, i := range m.Interceptors() {
		acl.Interceptors = append(acl.Interceptors, dispatch.Interceptor{Pattern: i.Pattern, Handler: i.Handler, Priority: i.Priority})
	}
	if err := h.d.Register(acl, comp); err != nil {
		_ = comp.Unload(context.Background())
		return nil, err
	}
	t.Cleanup(func() {
		h.d.Unregister(m.ID())
		_ = comp.Unload(context.Background())
		hc.Close() // as the runtime does after an unload
	})
	return e, nil
}

// fixture is the hostile capsule loaded through a wasm engine.
type fixture struct {
	*harness
	rt   *Runtime
	eng  *Engine
	logs *syncBuffer
	ws   string
}

func hostileManifest(t testing.TB) *manifest.Manifest {
	t.Helper()
	data, err := os.ReadFile("testdata/hostile/Capsule.toml")
	if err != nil {
		t.Fatal(err)
	}
	m, diags := manifest.Parse(data, "Capsule.toml", "")
	if err := diags.Err(false); err != nil {
		t.Fatal(err)
	}
	return m
}

// withComponent points m's executable component at a built module.
func withComponent(m *manifest.Manifest, r capsulebuild.Result) *manifest.Manifest {
	m.Components[0].Path = r.Wasm
	m.Components[0].Hash = r.SHA256
	return m
}

func loadHostile(t testing.TB, opts Options) *fixture {
	t.Helper()
	return loadHostileWith(t, opts, nil)
}

// loadHostileWith is loadHostile with the manifest changed by edit first
// (granting host_process, say, which the shared manifest does not: it
// makes the engine keep a single instance).
func loadHostileWith(t testing.TB, opts Options, edit func(*manifest.Manifest)) *fixture {
	t.Helper()
	f := &fixture{logs: &syncBuffer{}}
	f.harness, f.ws = newHarness(t, f.logs)
	if opts.Logger == nil {
		opts.Logger = f.harness.log
	}
	f.rt = newRuntime(t, opts)
	m := withComponent(hostileManifest(t), guest(t, "testdata/hostile"))
	if edit != nil {
		edit(m)
	}
	eng, err := f.load(t, f.rt, m, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f.eng = eng
	return f
}
