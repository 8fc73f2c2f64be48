//go:build wasip1

package abi

import "unsafe"

// The one conversion the ABI cannot do without: a Go buffer's address as
// the guest's u32 pointer, to hand the host. (The other direction, an
// address back to a Go pointer, is never needed: the host only ever writes
// into buffers the guest handed it, which the guest finds by comparing
// addresses.)

// BytesPtr is b's address and length; (0, 0) for an empty b. b must stay
// alive until the host is done with it (runtime.KeepAlive after the call).
func BytesPtr(b []byte) (ptr, n uint32) {
	if len(b) == 0 {
		return 0, 0
	}
	return uint32(uintptr(unsafe.Pointer(unsafe.SliceData(b)))), uint32(len(b))
}

// StringPtr is s's address and length; (0, 0) for "".
func StringPtr(s string) (ptr, n uint32) {
	if s == "" {
		return 0, 0
	}
	return uint32(uintptr(unsafe.Pointer(unsafe.StringData(s)))), uint32(len(s))
}
