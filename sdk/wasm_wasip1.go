//go:build wasip1

package sdk

import (
	"encoding/binary"
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

// Serve makes c the capsule this wasm module runs. The generated main shim
// of `astrid capsule build` calls it from init, before the kernel's first
// astrid_invoke.
func Serve(c *Capsule) { served = c }

//go:wasmexport astrid_abi_version
func astridABIVersion() int32 { return ABIVersion }

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

//go:wasmexport astrid_invoke
func astridInvoke(n int32) uint64 {
	if served == nil {
		return errorResult(hostapi.Errorf(hostapi.CodeNotSupported, "invoke", "the module never called sdk.Serve"))
	}
	if n < 0 || int(n) > len(scratch) {
		return errorResult(hostapi.Errorf(hostapi.CodeInvalid, "invoke", "invocation length %d exceeds the scratch buffer", n))
	}
	inv, err := decodeInvocationOnce(scratch[:n])
	if err != nil {
		return errorResult(hostapi.Errorf(hostapi.CodeInvalid, "invoke", "%v", err))
	}
	theHost.principal = inv.Principal
	v, err := served.Invoke(&theHost, inv)
	if err != nil {
		return errorResult(err)
	}
	if v.Action == hostapi.Continue && len(v.Payload) == 0 {
		return 0
	}
	guestResult = EncodeVerdict(v)
	return PackResult(ptrOf(guestResult), uint32(len(guestResult)), false)
}

// theHost is the one host value: an instance runs one call at a time, and
// reusing it spares the guest an allocation per call (allocation is the
// dominant cost of a Go guest's call).
var theHost wasmHost

// decodeInvocationOnce is DecodeInvocation with one allocation: the record
// is copied once and the strings point into the copy, which the call
// keeps alive (the scratch buffer itself is reused by import results).
func decodeInvocationOnce(rec []byte) (hostapi.Invocation, error) {
	if len(rec) < 28 {
		return hostapi.Invocation{}, errBadRecord
	}
	own := append([]byte(nil), rec...)
	var lens [6]int
	total := 28
	for i := range lens {
		lens[i] = int(binary.LittleEndian.Uint32(own[4+4*i:]))
		total += lens[i]
	}
	if binary.LittleEndian.Uint32(own) != ABIVersion || total != len(own) {
		return hostapi.Invocation{}, errBadRecord
	}
	off := 28
	next := func(i int) []byte {
		b := own[off : off+lens[i] : off+lens[i]]
		off += lens[i]
		return b
	}
	str := func(b []byte) string {
		if len(b) == 0 {
			return ""
		}
		return unsafe.String(&b[0], len(b))
	}
	return hostapi.Invocation{
		Handler:   str(next(0)),
		Pattern:   str(next(1)),
		Topic:     str(next(2)),
		SourceID:  str(next(3)),
		Principal: str(next(4)),
		Payload:   next(5),
	}, nil
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
