//go:build wasip1

package sdk

import (
	"fmt"
	"sort"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/abi"
)

// The guest side of docs/abi.md: the exports the kernel calls. One wasm
// instance runs one call at a time, so the buffers below are per instance
// and need no locking; they are the binding's state, not the capsule's.
var (
	served  *Capsule
	scratch []byte
	// hostResult keeps the last astrid_alloc buffer alive until the import
	// that asked for it has returned and its bytes are read.
	hostResult []byte
	// guestResult keeps astrid_invoke's answer alive until the host has
	// copied it.
	guestResult []byte
)

// The handler table: the capsule's handlers sorted by name, so that an
// invocation names its handler by index (docs/abi.md §3, astrid_handlers).
var (
	handlerNames []string
	handlerFuncs []Handler
	handlerList  []byte
)

// Per-call state reused by every call on this instance, so a call
// allocates and stores nothing of its own: the record buffer the host
// writes invocations into (the strings and payload a handler sees point
// into it), the Call and the host.
var (
	record  = abi.Record{Buf: make([]byte, abi.InvocationHeader)}
	theHost wasmHost
	theCall = Call{Host: &theHost, rec: &record}
	// recordLen is the length astrid_invoke was called with, for
	// rejectInvocation's message.
	recordLen int32
)

// handlerTable is handlerFuncs behind rejectInvocation: astrid_invoke
// calls handlerTable[record.Check(...)], so a malformed record selects
// entry 0 without a branch. It is an array indexed under a mask of its
// length, so the index needs no bounds check (a branch; see astridInvoke).
var handlerTable = [maxHandlers]Handler{rejectInvocation}

// maxHandlers bounds a guest's handlers (a power of two, for the mask).
const maxHandlers = 1 << 10

// finishers are astrid_invoke's two endings, selected without a branch:
// the plain Continue (no error, no verdict set) and everything else.
var finishers = [2]func(error) uint64{func(error) uint64 { return 0 }, finish}

// Serve makes c the capsule this wasm module runs. The generated main shim
// of `astrid capsule build` calls it from init, before the kernel's first
// astrid_invoke.
func Serve(c *Capsule) {
	served = c
	handlerNames = handlerNames[:0]
	for name := range c.handlers {
		handlerNames = append(handlerNames, name)
	}
	sort.Strings(handlerNames)
	handlerFuncs = make([]Handler, len(handlerNames))
	for i, name := range handlerNames {
		handlerFuncs[i] = c.handlers[name].handler
	}
	if len(handlerNames) >= maxHandlers {
		panic(fmt.Sprintf("sdk: %d handlers; a wasm capsule may have at most %d", len(handlerNames), maxHandlers-1))
	}
	handlerList = abi.EncodeHandlers(handlerNames)
	handlerTable = [maxHandlers]Handler{rejectInvocation}
	copy(handlerTable[1:], handlerFuncs)
}

//go:wasmexport astrid_abi_version
func astridABIVersion() int32 { return abi.Version }

//go:wasmexport astrid_handlers
func astridHandlers() uint64 {
	ptr, n := abi.BytesPtr(handlerList)
	return abi.PackResult(ptr, n, false)
}

//go:wasmexport astrid_alloc
func astridAlloc(n int32) uint32 {
	if n <= 0 {
		hostResult = nil
		return 0
	}
	hostResult = make([]byte, n)
	return ptrOf(hostResult)
}

//go:wasmexport astrid_scratch
func astridScratch(n int32) uint32 {
	if n <= 0 {
		n = 1
	}
	if int(n) > cap(scratch) {
		scratch = make([]byte, n)
	}
	scratch = scratch[:cap(scratch)]
	return ptrOf(scratch)
}

//go:wasmexport astrid_invocation
func astridInvocation(n int32) uint32 {
	if int(n) > len(record.Buf) {
		record.Buf = make([]byte, n)
	}
	return ptrOf(record.Buf)
}

// astridInvoke is the hot path. With WithCloseOnContextDone every taken
// branch of a Go guest costs a trip to the host's termination check
// (docs/abi.md §4), so the path from entry to a plain Continue has none:
// the record is read where the host wrote it, checked with arithmetic,
// and a malformed record, a handler's error or a verdict are reached by
// indexing tables of functions rather than by branching. It stores no
// pointer (a pointer store into a global is a write-barrier branch).
//
//go:wasmexport astrid_invoke
func astridInvoke(n int32) uint64 {
	recordLen = n
	err := handlerTable[record.Check(n, len(handlerFuncs))&(maxHandlers-1)](&theCall)
	v := &theCall.verdict
	slow := abi.B2U(err != nil) | abi.B2U(v.Action != hostapi.Continue) | abi.B2U(len(v.Payload) != 0)
	return finishers[slow&1](err)
}

// rejectInvocation is handlerTable[0], the handler of a malformed record:
// it says what is wrong with it.
func rejectInvocation(*Call) error {
	if served == nil {
		return hostapi.Errorf(hostapi.CodeNotSupported, "invoke", "the module never called sdk.Serve")
	}
	n := recordLen
	if n < 0 || int(n) > len(record.Buf) {
		return hostapi.Errorf(hostapi.CodeInvalid, "invoke", "invocation length %d exceeds the invocation buffer (%d bytes)", n, len(record.Buf))
	}
	handler, _, err := abi.DecodeInvocation(record.Buf[:n])
	if err != nil {
		return hostapi.Errorf(hostapi.CodeInvalid, "invoke", "%v", err)
	}
	return hostapi.Errorf(hostapi.CodeNotSupported, "invoke", "no handler at index %d (the capsule has %d)", handler, len(handlerFuncs))
}

// finish ends a call that failed or set a verdict; nothing of the call
// outlives it.
func finish(err error) uint64 {
	v := theCall.verdict
	theCall.verdict = hostapi.Verdict{}
	if err != nil {
		return errorResult(err)
	}
	if v.Action == hostapi.Continue && len(v.Payload) == 0 {
		return 0
	}
	guestResult = abi.AppendVerdict(guestResult[:0], abi.Verdict{Action: uint32(v.Action), Payload: v.Payload, Reason: v.Reason})
	ptr, n := abi.BytesPtr(guestResult)
	return abi.PackResult(ptr, n, false)
}

func errorResult(err error) uint64 {
	guestResult = appendError(guestResult[:0], err)
	ptr, n := abi.BytesPtr(guestResult)
	return abi.PackResult(ptr, n, true)
}

// ptrOf is b's address in linear memory, 0 when b is empty.
func ptrOf(b []byte) uint32 {
	ptr, _ := abi.BytesPtr(b)
	return ptr
}

// result reads an import's packed result: its bytes (copied out of the
// scratch buffer, or taken over from astrid_alloc) or its error. The host
// only ever writes into those two buffers, so the bytes are found without
// turning an address back into a pointer.
func result(packed uint64) ([]byte, error) {
	ptr, n, isErr := abi.UnpackResult(packed)
	var b []byte
	if n > 0 {
		switch {
		case len(hostResult) >= int(n) && ptr == ptrOf(hostResult):
			b = hostResult[:n]
		case len(scratch) > 0 && ptr >= ptrOf(scratch) && uint64(ptr-ptrOf(scratch))+uint64(n) <= uint64(len(scratch)):
			off := ptr - ptrOf(scratch)
			b = append([]byte(nil), scratch[off:off+n]...)
		default:
			return nil, hostapi.Errorf(hostapi.CodeInternal, "abi", "host result at %#x (%d bytes) is in neither the scratch buffer nor the last astrid_alloc", ptr, n)
		}
	}
	hostResult = nil
	if isErr {
		return nil, decodeError(b)
	}
	return b, nil
}
