package wasm

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/abi"
	"github.com/astrid-go/astrid/internal/clock"
)

// maxSleepSlice caps one guest sleep: a sleeping guest wakes at least this
// often, so a cancelled or expired call is noticed within it.
const maxSleepSlice = 50 * time.Millisecond

// exportInvocation is the guest's record buffer (docs/abi.md §3).
const exportInvocation = "astrid_invocation"

// initialRecordBuffer is the record buffer asked for after _initialize;
// a larger record grows it.
const initialRecordBuffer = 4096

// initTimeout bounds a new instance's _initialize (the Go runtime and the
// capsule's package init).
const initTimeout = 30 * time.Second

// instance is one wasm instance of a capsule. It runs one call at a time.
type instance struct {
	rt             *Runtime
	mod            api.Module
	invoke, alloc  api.Function
	scratch        guestBuffer // import results (docs/abi.md §1)
	records        guestBuffer // invocation records (§3)
	lastPrincipal  string
	stdout, stderr *lineLog
	state          callState // reused by each call on this instance
	stack          [1]uint64
	record         []byte
	interrupt      func() // closes the module under a running guest
}

// newInstance instantiates the engine's compiled module and initialises it.
func (e *Engine) newInstance(ctx context.Context) (*instance, error) {
	inst := &instance{
		rt:     e.rt,
		stdout: newLineLog(e.log, "stdout"),
		stderr: newLineLog(e.log, "stderr"),
	}
	inst.interrupt = func() {
		// WithCloseOnContextDone makes a close from another goroutine stop
		// the running guest at its next check.
		_ = inst.mod.CloseWithExitCode(context.Background(), sys.ExitCodeContextCanceled)
	}
	cfg := wazero.NewModuleConfig().
		WithName(""). // many instances of one module
		WithStartFunctions().
		WithSysWalltime().
		WithSysNanotime().
		WithNanosleep(inst.sleep).
		WithRandSource(rand.Reader).
		WithStdout(inst.stdout).
		WithStderr(inst.stderr)
	ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), initTimeout)
	defer cancel()
	inst.state = callState{eng: e, inst: inst}
	mod, err := e.rt.rt.InstantiateModule(ictx, e.compiled, cfg)
	if err != nil {
		return nil, fmt.Errorf("instantiate: %w", err)
	}
	inst.mod = mod
	e.rt.states.Store(mod, &inst.state)
	if _, err := mod.ExportedFunction("_initialize").Call(ictx); err != nil {
		inst.close()
		return nil, fmt.Errorf("_initialize: %w", err)
	}
	res, err := mod.ExportedFunction(exportABIVersion).Call(ictx)
	if err != nil {
		inst.close()
		return nil, fmt.Errorf("%s: %w", exportABIVersion, err)
	}
	if v := int32(res[0]); v != abi.Version {
		inst.close()
		return nil, fmt.Errorf("the module speaks ABI version %d; this kernel implements version %d (docs/abi.md)", v, abi.Version)
	}
	inst.invoke = mod.ExportedFunction(exportInvoke)
	inst.alloc = mod.ExportedFunction(exportAlloc)
	inst.scratch = guestBuffer{export: exportScratch, fn: mod.ExportedFunction(exportScratch)}
	inst.records = guestBuffer{export: exportInvocation, fn: mod.ExportedFunction(exportInvocation)}
	if err := inst.scratch.grow(ictx, mod, 4096); err != nil {
		inst.close()
		return nil, err
	}
	if err := inst.records.grow(ictx, mod, initialRecordBuffer); err != nil {
		inst.close()
		return nil, err
	}
	return inst, nil
}

// handlers reads the guest's handler list (astrid_handlers, docs/abi.md §3).
func (inst *instance) handlers(ctx context.Context) ([]string, error) {
	res, err := inst.mod.ExportedFunction(exportHandlers).Call(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", exportHandlers, err)
	}
	ptr, n, isErr := abi.UnpackResult(res[0])
	b, ok := inst.mod.Memory().Read(ptr, n)
	if isErr || !ok {
		return nil, fmt.Errorf("%s answered %d bytes at %#x (error flag %v), not a handler list in memory", exportHandlers, n, ptr, isErr)
	}
	names, err := abi.DecodeHandlers(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", exportHandlers, err)
	}
	return names, nil
}

// sleep is the instance's WASI nanosleep (the guest's time.Sleep and every
// poll_oneoff that waits on a clock): capped, so a cancelled or expired call
// is noticed within a slice, and counted with the time spent in host
// imports, since a guest that sleeps spends no CPU (DESIGN §4, CPU
// accounting). It runs on the goroutine running the guest, which owns
// inst.state.
func (inst *instance) sleep(ns int64) {
	start := clock.Process.UnixNano()
	cappedSleep(ns)
	inst.state.host += time.Duration(clock.Process.UnixNano() - start)
}

func cappedSleep(ns int64) {
	d := time.Duration(ns)
	if d > maxSleepSlice {
		d = maxSleepSlice
	}
	time.Sleep(d)
}

// guestBuffer is a buffer the guest hands the host through an export
// (astrid_scratch, astrid_invocation): asked for again, twice as large at
// least, when the host needs more.
type guestBuffer struct {
	export   string
	fn       api.Function
	ptr, cap uint32
}

// grow makes the buffer at least n bytes, checking that the guest's answer
// lies inside its memory.
func (g *guestBuffer) grow(ctx context.Context, mod api.Module, n uint32) error {
	if n <= g.cap {
		return nil
	}
	if c := g.cap * 2; c > n {
		n = c
	}
	res, err := g.fn.Call(ctx, uint64(n))
	if err != nil {
		return fmt.Errorf("%s: %w", g.export, err)
	}
	ptr := uint32(res[0])
	if uint64(ptr)+uint64(n) > uint64(mod.Memory().Size()) {
		return fmt.Errorf("%s returned a buffer outside memory (%#x + %d)", g.export, ptr, n)
	}
	g.ptr, g.cap = ptr, n
	return nil
}

// errTrapped marks a failure after which the instance must not be reused.
var errTrapped = errors.New("trapped")

// call runs one invocation of the handler at index handler, under ctx
// (wazero closes the module when ctx ends). The caller has readied
// inst.state. An error wrapping errTrapped means the instance is broken;
// any other error is the handler's own failure.
func (inst *instance) call(ctx context.Context, handler uint32, inv hostapi.Invocation) (hostapi.Verdict, error) {
	n := abi.InvocationSize(abiInvocation(inv))
	if err := inst.records.grow(ctx, inst.mod, uint32(n)); err != nil {
		return hostapi.Verdict{}, fmt.Errorf("%w: %v", errTrapped, err)
	}
	inst.record = abi.EncodeInvocation(inst.record[:0], handler, abiInvocation(inv))
	if !inst.mod.Memory().Write(inst.records.ptr, inst.record) {
		return hostapi.Verdict{}, fmt.Errorf("%w: record buffer outside memory", errTrapped)
	}
	inst.stack[0] = uint64(n)
	if err := inst.invoke.CallWithStack(ctx, inst.stack[:]); err != nil {
		return hostapi.Verdict{}, fmt.Errorf("%w: %v", errTrapped, err)
	}
	if inst.stack[0] == 0 {
		return hostapi.Verdict{}, nil
	}
	ptr, size, isErr := abi.UnpackResult(inst.stack[0])
	rec, ok := inst.mod.Memory().Read(ptr, size)
	if !ok {
		return hostapi.Verdict{}, fmt.Errorf("%w: %s answered %d bytes at %#x, outside memory", errTrapped, exportInvoke, size, ptr)
	}
	if isErr {
		return hostapi.Verdict{}, decodeGuestError(rec)
	}
	v, err := abi.DecodeVerdict(rec)
	if err != nil {
		return hostapi.Verdict{}, fmt.Errorf("%w: %s: %v", errTrapped, exportInvoke, err)
	}
	return hostapi.Verdict{Action: hostapi.Action(v.Action), Payload: v.Payload, Reason: v.Reason}, nil
}

func (inst *instance) broken() bool { return inst.mod.IsClosed() }

func (inst *instance) memoryBytes() uint32 { return inst.mod.Memory().Size() }

func (inst *instance) close() {
	inst.rt.states.Delete(inst.mod)
	_ = inst.mod.Close(context.Background())
	inst.stdout.flush()
	inst.stderr.flush()
}
