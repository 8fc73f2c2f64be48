package wasm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/abi"
	"github.com/astrid-go/astrid/internal/capsule"
	"github.com/astrid-go/astrid/internal/clock"
	"github.com/astrid-go/astrid/internal/host"
	"github.com/astrid-go/astrid/manifest"
	"github.com/tetratelabs/wazero"
)

// The guest exports of docs/abi.md §3.
const (
	exportABIVersion = "astrid_abi_version"
	exportHandlers   = "astrid_handlers"
	exportAlloc      = "astrid_alloc"
	exportScratch    = "astrid_scratch"
	exportInvoke     = "astrid_invoke"
	exportRun        = "astrid_run"
)

var requiredExports = []string{"_initialize", exportABIVersion, exportHandlers, exportAlloc, exportScratch, exportInvocation, exportInvoke}

// Engine runs one capsule's executable component.
type Engine struct {
	rt       *Runtime
	m        *manifest.Manifest
	comp     *manifest.Component
	host     *host.Capsule
	log      *slog.Logger
	handlers map[string]bool // bound in the manifest
	// index is each handler both the manifest binds and the guest's code
	// has, with its index in the guest's astrid_handlers list. Written by
	// Load, read-only afterwards.
	index map[string]uint32

	compiled wazero.CompiledModule
	sum      string
	pool     *pool
	run      *runLoop

	// links is the capsule's set of components when it has more than
	// one (components.go), nil otherwise. A library component is called
	// only through it (component_call), never from the bus.
	links *linkSet

	capsule.HealthCell
}

var _ capsule.Engine = (*Engine)(nil)

func newEngine(r *Runtime, m *manifest.Manifest, comp *manifest.Component, h *host.Capsule) *Engine {
	e := &Engine{rt: r, m: m, comp: comp, host: h, log: r.log.With("capsule", m.ID(), "engine", "wasm"), handlers: map[string]bool{}}
	for _, i := range m.Interceptors() {
		e.handlers[i.Handler] = true
	}
	return e
}

// Name implements capsule.Engine.
func (e *Engine) Name() string { return "wasm" }

// library reports whether the engine runs a type = "library" component.
func (e *Engine) library() bool { return e.comp.Type == manifest.ComponentLibrary }

// label names the component in errors when the capsule has several:
// "component <id> (<file>): ", else "".
func (e *Engine) label() string {
	if e.links == nil {
		return ""
	}
	return "component " + componentName(e.comp) + ": "
}

// Load verifies, compiles and instantiates the component: the first
// instance is made now so that a broken module fails the load, not the
// first call.
func (e *Engine) Load(ctx context.Context) error {
	e.SetHealth(capsule.Loading, nil)
	if err := e.load(ctx); err != nil {
		err = fmt.Errorf("wasm: capsule %s: %s%w", e.m.ID(), e.label(), err)
		e.SetHealth(capsule.Failed, err)
		return err
	}
	e.SetHealth(capsule.Ready, nil)
	return nil
}

func (e *Engine) load(ctx context.Context) error {
	cm, sum, err := e.compile(ctx)
	if err != nil {
		return err
	}
	e.compiled, e.sum = cm, sum
	if err := checkModule(cm); err != nil {
		e.release(ctx)
		return fmt.Errorf("%s: %w", e.comp.File, err)
	}
	max := e.rt.opts.PoolSize
	if len(e.m.Capabilities.HostProcess) > 0 {
		max = 1 // live process handles must stay with one instance
	}
	limit := uint32(e.rt.opts.MemoryLimitMiB) << 20
	e.pool = newPool(e, max, limit/4*3)
	first, err := e.newInstance(ctx)
	if err != nil {
		e.release(ctx)
		return err
	}
	names, err := first.handlers(ctx)
	if err != nil {
		first.close()
		e.release(ctx)
		return err
	}
	e.index = map[string]uint32{}
	for i, name := range names {
		// A library's handlers are what the capsule's other components
		// call by name; an executable's are those the manifest binds.
		if e.handlers[name] || e.library() {
			e.index[name] = uint32(i)
		}
	}
	e.pool.seed(first)
	if _, ok := cm.ExportedFunctions()[exportRun]; ok && !e.library() {
		e.run = startRunLoop(e)
	}
	return nil
}

// compile reads the component once, verifies it and compiles it, the hash
// running beside the merge and compile: compiling untrusted bytes is what
// wazero is built for (it decodes and validates them, and runs none of
// them), and nothing is instantiated until the hash has been checked. A
// file that fails the check is refused with the integrity error, even
// when it also fails to compile.
func (e *Engine) compile(ctx context.Context) (wazero.CompiledModule, string, error) {
	wasm, err := readComponent(e.m, e.comp, int64(e.rt.opts.MaxComponentBytes))
	if err != nil {
		return nil, "", err
	}
	type verdict struct {
		sum string
		err error
	}
	verified := make(chan verdict, 1)
	go func() {
		sum, err := verify(e.m, e.comp, wasm)
		verified <- verdict{sum, err}
	}()
	cm, cerr := e.rt.rt.CompileModule(ctx, mergeDataSegments(wasm))
	v := <-verified
	if v.err != nil {
		if cerr == nil {
			_ = cm.Close(ctx)
		}
		return nil, "", v.err
	}
	if cerr != nil {
		return nil, "", fmt.Errorf("compile %s: %w", e.comp.File, cerr)
	}
	return e.rt.share(ctx, v.sum, cm), v.sum, nil
}

func (e *Engine) release(ctx context.Context) {
	if e.compiled != nil {
		e.rt.release(ctx, e.sum)
		e.compiled = nil
	}
}

// checkModule refuses a module that lacks an export of the ABI or imports
// something this kernel does not provide, naming it.
func checkModule(cm wazero.CompiledModule) error {
	exports := cm.ExportedFunctions()
	for _, name := range requiredExports {
		if _, ok := exports[name]; !ok {
			return fmt.Errorf("missing export %s (docs/abi.md §3; a Go capsule is built with astrid capsule build)", name)
		}
	}
	if _, ok := cm.ExportedMemories()["memory"]; !ok {
		return errors.New("missing exported memory")
	}
	for _, imp := range cm.ImportedFunctions() {
		module, name, _ := imp.Import()
		switch module {
		case "wasi_snapshot_preview1":
		case hostModule:
			if !hostImportNames[name] {
				return fmt.Errorf("imports %s.%s, which this kernel does not provide (ABI version %d)", module, name, abi.Version)
			}
		default:
			return fmt.Errorf("imports %s.%s from unknown module %q", module, name, module)
		}
	}
	return nil
}

// WaitReady implements capsule.Engine: Load already made an instance.
func (e *Engine) WaitReady(ctx context.Context) error { return ctx.Err() }

// Unload implements capsule.Engine.
func (e *Engine) Unload(ctx context.Context) error {
	e.SetHealth(capsule.Unloading, nil)
	if e.run != nil {
		e.run.stop()
		e.run = nil
	}
	if e.pool != nil {
		e.pool.close()
	}
	e.release(ctx)
	e.SetHealth(capsule.Unloaded, nil)
	return nil
}

// Stats describe the capsule's instance pool.
func (e *Engine) Stats() PoolStats {
	if e.pool == nil {
		return PoolStats{}
	}
	return e.pool.stats()
}

// Invoke implements capsule.Engine: one handler call on a pooled instance,
// under the call's deadline and cancel key. A trap discards the instance
// and publishes the call's failure reply.
//
// The call's guest time is charged to the principal's CPU budget; the
// budget is never checked here: a call is the continuation of work the
// dispatcher admitted when it started (dispatch.Options.Admit), and
// refusing it could lose an answer, a failure reply or a result.
func (e *Engine) Invoke(ctx context.Context, inv hostapi.Invocation) (hostapi.Verdict, error) {
	if e.library() {
		return hostapi.Verdict{}, capsule.ErrNotSupported
	}
	return e.invoke(ctx, inv)
}

// invoke runs inv's handler, which the engine's index must have.
func (e *Engine) invoke(ctx context.Context, inv hostapi.Invocation) (hostapi.Verdict, error) {
	handler, ok := e.index[inv.Handler]
	if !ok {
		return hostapi.Verdict{}, capsule.ErrNotSupported
	}
	// Two clock reads per call (the process's clock: the monotonic one
	// alone): start and end serve the deadline check, the ledger's window
	// and the guest time.
	ledger := e.rt.opts.Ledger
	start := clock.Process.UnixNano()
	if d, ok := ctx.Deadline(); !ok || d.UnixNano()-start > int64(e.rt.opts.CallDeadline) {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, e.rt.opts.CallDeadline)
		defer cancel()
	}
	inst, fresh, err := e.pool.get(ctx, inv.Principal)
	if err != nil {
		err = fmt.Errorf("wasm: capsule %s: handler %s: %w", e.m.ID(), inv.Handler, err)
		e.log.Warn("call failed", "principal", inv.Principal, "err", err)
		return hostapi.Verdict{}, err
	}
	if fresh {
		// Waiting for an instance or making one is not guest time.
		start = clock.Process.UnixNano()
	}
	st := &inst.state
	st.begin(ctx, inv.Principal)
	v, err := inst.call(ctx, handler, inv)
	end := clock.Process.UnixNano()
	call, cctx, interrupted := st.end()
	ledger.ChargeAt(inv.Principal, time.Duration(end-start)-st.host, end)
	if call != nil {
		defer call.End()
	}

	if err == nil {
		e.giveBack(inst, inv.Principal, interrupted)
		return v, nil
	}
	if !errors.Is(err, errTrapped) {
		// The handler failed and said so: the instance is fine.
		e.giveBack(inst, inv.Principal, interrupted)
		if hostapi.CodeOf(err) == hostapi.CodeNotSupported {
			return hostapi.Verdict{}, capsule.ErrNotSupported
		}
		e.fail(call, inv.Principal, err)
		return hostapi.Verdict{Action: hostapi.Deny, Reason: err.Error()}, err
	}
	e.pool.discard(inst)
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		err = fmt.Errorf("wasm: capsule %s: handler %s: deadline exceeded; instance discarded", e.m.ID(), inv.Handler)
	case cctx != nil && cctx.Err() != nil:
		err = fmt.Errorf("wasm: capsule %s: handler %s: cancelled (%v); instance discarded", e.m.ID(), inv.Handler, context.Cause(cctx))
	case ctx.Err() != nil:
		err = fmt.Errorf("wasm: capsule %s: handler %s: cancelled (%v); instance discarded", e.m.ID(), inv.Handler, context.Cause(ctx))
	default:
		err = fmt.Errorf("wasm: capsule %s: handler %s: %w; instance discarded", e.m.ID(), inv.Handler, err)
	}
	e.fail(call, inv.Principal, err)
	return hostapi.Verdict{}, err
}

// giveBack returns an instance to the pool after a call that did not trap,
// unless a cancel fired as the call ended and the instance is being closed.
func (e *Engine) giveBack(inst *instance, principal string, interrupted bool) {
	if interrupted {
		e.pool.discard(inst)
		return
	}
	e.pool.put(inst, principal)
}

// fail publishes the call's failure reply. A guest that never reached the
// host registered none, so there is only the reason to log.
func (e *Engine) fail(call *host.Call, principal string, reason error) {
	if call != nil {
		call.Fail(reason)
		return
	}
	e.log.Warn("call failed", "principal", principal, "err", reason, "failure_reply", false)
}
