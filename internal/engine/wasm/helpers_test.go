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

	"github.com/astrid-go/astrid/internal/capsule"
	"github.com/astrid-go/astrid/internal/capsulebuild"
	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/host"
	"github.com/astrid-go/astrid/internal/kernel"
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

// fixture is a kernel with the hostile capsule loaded through a wasm
// engine.
type fixture struct {
	k    *kernel.Kernel
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

func bootKernel(t testing.TB, logs *syncBuffer) (*kernel.Kernel, string) {
	t.Helper()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	k, err := kernel.Boot(context.Background(), kernel.Options{
		Home: t.TempDir(), Workspace: ws, Config: config.Default(), Logger: logger, Builtins: []kernel.Builtin{},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	return k, ws
}

func loadHostile(t testing.TB, opts Options) *fixture {
	t.Helper()
	f := &fixture{logs: &syncBuffer{}}
	f.k, f.ws = bootKernel(t, f.logs)
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	f.rt = newRuntime(t, opts)
	m := withComponent(hostileManifest(t), guest(t, "testdata/hostile"))
	err := f.k.Load(context.Background(), m, t.TempDir(), func(h *host.Capsule) ([]capsule.Engine, error) {
		e, err := f.rt.Engine(m, h)
		if err != nil {
			return nil, err
		}
		f.eng = e.(*Engine)
		return []capsule.Engine{e}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return f
}
