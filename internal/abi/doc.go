// Package abi owns the byte layouts of docs/abi.md that both sides of the
// wasm boundary share: the packed i64 result, the invocation record (and the
// guest's branch-free check of it), the handler list, the verdict record and
// the error record; and, in a wasip1 build, the one conversion the ABI cannot
// do without, a Go buffer's address as the guest's u32 pointer.
//
// It is a leaf helper (DESIGN §3): it imports nothing of this module, so it
// speaks in integers, strings and bytes, not in hostapi's types; it builds
// for GOOS=wasip1 GOARCH=wasm; it holds no state and does no I/O. It must not
// learn what a handler, a host call or a capsule is: the sdk (guest side)
// and internal/engine/wasm (host side) translate to and from hostapi.
package abi
