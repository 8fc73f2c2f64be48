package wasm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/astrid-go/astrid/internal/capsule"
	"github.com/astrid-go/astrid/internal/host"
	"github.com/astrid-go/astrid/internal/ledger"
	"github.com/astrid-go/astrid/manifest"
)

// Defaults (DESIGN §4, seed 003).
const (
	DefaultMemoryLimitMiB = 64
	DefaultPoolSize       = 16
	DefaultCallDeadline   = 5 * time.Minute
)

// Options configure a Runtime.
type Options struct {
	// CacheDir holds compiled machine code ($ASTRID_HOME/cache/wasm). It is
	// created 0700 and refused when group- or world-writable, since write
	// access to it is code execution in the kernel. Empty: an in-memory
	// cache only.
	CacheDir string
	// MemoryLimitMiB caps each instance's linear memory.
	MemoryLimitMiB int
	// PoolSize is the most instances one capsule may have.
	PoolSize int
	// CallDeadline bounds one handler call.
	CallDeadline time.Duration
	// MaxComponentBytes is the largest component file that is read; a
	// larger one is refused before it is read. Zero:
	// DefaultMaxComponentBytes.
	MaxComponentBytes int
	// Ledger receives every call's guest time; nil counts nothing.
	Ledger *ledger.Ledger
	Logger *slog.Logger
}

// Runtime is shared by all wasm capsules of a kernel.
type Runtime struct {
	opts  Options
	log   *slog.Logger
	rt    wazero.Runtime
	cache wazero.CompilationCache

	mu       sync.Mutex
	compiled map[string]*compiled // by sha256

	// states maps each live instance's api.Module to its callState, for
	// the imports to find the call they act for.
	states sync.Map
}

type compiled struct {
	mod  wazero.CompiledModule
	refs int
}

// NewRuntime builds the runtime: wazero with the compilation cache, the
// memory limit and close-on-context-done, WASI and the astrid host module.
func NewRuntime(ctx context.Context, opts Options) (*Runtime, error) {
	if opts.MemoryLimitMiB <= 0 {
		opts.MemoryLimitMiB = DefaultMemoryLimitMiB
	}
	if opts.MemoryLimitMiB > 4096 {
		return nil, fmt.Errorf("wasm: memory limit %d MiB exceeds wasm32's 4096", opts.MemoryLimitMiB)
	}
	if opts.PoolSize <= 0 {
		opts.PoolSize = DefaultPoolSize
	}
	if opts.CallDeadline <= 0 {
		opts.CallDeadline = DefaultCallDeadline
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	var cache wazero.CompilationCache
	if opts.CacheDir != "" {
		if err := ensurePrivateDir(opts.CacheDir); err != nil {
			return nil, fmt.Errorf("wasm: compilation cache: %w", err)
		}
		c, err := wazero.NewCompilationCacheWithDir(opts.CacheDir)
		if err != nil {
			return nil, fmt.Errorf("wasm: compilation cache %s: %w", opts.CacheDir, err)
		}
		cache = c
	} else {
		cache = wazero.NewCompilationCache()
	}
	cfg := wazero.NewRuntimeConfig().
		WithCompilationCache(cache).
		WithMemoryLimitPages(uint32(opts.MemoryLimitMiB) * 16).
		// The only way to stop a runaway guest (spec/go-ecosystem.md §1.6).
		WithCloseOnContextDone(true)
	rt := wazero.NewRuntimeWithConfig(ctx, cfg)
	log.Debug("wasm runtime", "cache", opts.CacheDir)
	r := &Runtime{opts: opts, log: log, rt: rt, cache: cache, compiled: map[string]*compiled{}}
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		_ = r.Close(ctx)
		return nil, fmt.Errorf("wasm: WASI: %w", err)
	}
	if err := r.instantiateHostModule(ctx); err != nil {
		_ = r.Close(ctx)
		return nil, fmt.Errorf("wasm: host module: %w", err)
	}
	return r, nil
}

// Close closes every module and the runtime.
func (r *Runtime) Close(ctx context.Context) error {
	err := r.rt.Close(ctx)
	return errors.Join(err, r.cache.Close(ctx))
}

// Engine returns the engine for m's executable component, bound to host h,
// or, when m has several components, one that runs them all in order
// (Components). Nothing is read or compiled until Load.
func (r *Runtime) Engine(m *manifest.Manifest, h *host.Capsule) (capsule.Engine, error) {
	if len(m.Components) > 1 {
		return newComponents(r, m, h)
	}
	comp := m.ExecutableComponent()
	if comp == nil {
		return nil, fmt.Errorf("wasm: capsule %s has no executable [[component]]", m.ID())
	}
	if comp.Path == "" {
		return nil, fmt.Errorf("wasm: capsule %s: component %q has no location (a manifest read from disk sets one)", m.ID(), comp.File)
	}
	return newEngine(r, m, comp, h), nil
}

// share returns the runtime's compiled module for the verified module
// whose sha256 is sum: cm, the first time, or the one already held, with
// cm closed (the same bytes give the same module; wazero keeps one copy of
// its machine code either way). The module compiled is the file's with
// its data segments merged (datasegments.go).
func (r *Runtime) share(ctx context.Context, sum string, cm wazero.CompiledModule) wazero.CompiledModule {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c := r.compiled[sum]; c != nil {
		c.refs++
		_ = cm.Close(ctx)
		return c.mod
	}
	r.compiled[sum] = &compiled{mod: cm, refs: 1}
	return cm
}

func (r *Runtime) release(ctx context.Context, sum string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.compiled[sum]
	if c == nil {
		return
	}
	if c.refs--; c.refs <= 0 {
		delete(r.compiled, sum)
		_ = c.mod.Close(ctx)
	}
}
