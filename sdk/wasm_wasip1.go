//go:build wasip1

package sdk

import (
	"sort"
	"unsafe"

	"github.com/astrid-go/astrid/hostapi"
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
// allocates nothing of its own: the invocation record's copy (the strings
// and payload handed to the handler point into it), the Call and the host.
var (
	invocation []byte
	theCall    Call
	theHost    wasmHost
)

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
	handlerList = EncodeHandlers(handlerNames)
}

//go:wasmexport astrid_abi_version
func astridABIVersion() int32 { return ABIVersion }

//go:wasmexport astrid_handlers
func astridHandlers() uint64 {
	return PackResult(ptrOf(handlerList), uint32(len(handlerList)), false)
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

// astridInvoke is the hot path: with WithCloseOnContextDone every loop
// iteration and every call into a Go function that has calls of its own
// costs the guest a trip to the host's termination check, so it copies
// the record with one memory.copy, indexes the handler table and reuses
// every buffer instead of hashing, decoding or allocating.
//
//go:wasmexport astrid_invoke
func astridInvoke(n int32) uint64 {
	if served == nil {
		return errorResult(hostapi.Errorf(hostapi.CodeNotSupported, "invoke", "the module never called sdk.Serve"))
	}
	if n < 0 || int(n) > len(scratch) {
		return errorResult(hostapi.Errorf(hostapi.CodeInvalid, "invoke", "invocation length %d exceeds the scratch buffer", n))
	}
	// The scratch buffer receives import results during the call, so the
	// record is copied out first, into a buffer only invocations use.
	if int(n) > cap(invocation) {
		invocation = make([]byte, n)
	}
	invocation = invocation[:n]
	copy(invocation, scratch[:n])
	handler, inv, err := invocationView(invocation)
	if err != nil {
		return errorResult(hostapi.Errorf(hostapi.CodeInvalid, "invoke", "%v", err))
	}
	if handler >= uint32(len(handlerFuncs)) {
		return errorResult(hostapi.Errorf(hostapi.CodeNotSupported, "invoke", "no handler at index %d (the capsule has %d)", handler, len(handlerFuncs)))
	}
	inv.Handler = handlerNames[handler]
	theHost.principal = inv.Principal
	theCall = Call{Host: &theHost, inv: inv}
	if err := handlerFuncs[handler](&theCall); err != nil {
		theCall = Call{}
		return errorResult(err)
	}
	v := theCall.verdict
	theCall = Call{} // nothing of the call outlives it
	if v.Action == hostapi.Continue && len(v.Payload) == 0 {
		return 0
	}
	guestResult = AppendVerdict(guestResult[:0], v)
	return PackResult(ptrOf(guestResult), uint32(len(guestResult)), false)
}

func errorResult(err error) uint64 {
	guestResult = EncodeError(guestResult[:0], err)
	return PackResult(ptrOf(guestResult), uint32(len(guestResult)), true)
}

func ptrOf(b []byte) uint32 {
	if len(b) == 0 {
		return 0
	}
	return uint32(uintptr(unsafe.Pointer(&b[0])))
}

// bytesPtr is the (ptr, len) pair of an argument. The host copies what it
// needs before the import returns, so the Go slice only has to stay alive
// for the call, which passing it keeps it.
func bytesPtr(b []byte) (uint32, uint32) { return ptrOf(b), uint32(len(b)) }

func stringPtr(s string) (uint32, uint32) {
	if s == "" {
		return 0, 0
	}
	return uint32(uintptr(unsafe.Pointer(unsafe.StringData(s)))), uint32(len(s))
}

// result reads an import's packed result: its bytes (copied out of the
// scratch buffer, or taken over from astrid_alloc) or its error. The host
// only ever writes into those two buffers, so the bytes are found without
// turning an address back into a pointer.
func result(packed uint64) ([]byte, error) {
	ptr, n, isErr := UnpackResult(packed)
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
		return nil, DecodeError(b)
	}
	return b, nil
}
