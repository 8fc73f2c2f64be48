package abi

import (
	"encoding/binary"
	"unsafe"
)

// Record is a guest's record buffer (astrid_invocation, docs/abi.md §4):
// the host writes each call's record at its start, and the guest reads it
// in place. Checking a record stores only integers, so it needs no write
// barrier, and has no data-dependent branch: with WithCloseOnContextDone
// every taken branch of a Go guest costs a trip to the host (docs/abi.md
// §4).
type Record struct {
	// Buf is the buffer astrid_invocation handed the host, at least
	// InvocationHeader bytes.
	Buf []byte
	// n is the length of the record of the call in progress.
	n uint32
	// off bounds its fields: field i (pattern, topic, source, principal,
	// payload) is Buf[off[i]:off[i+1]]. All zero after a malformed record.
	off [6]uint32
}

// Field numbers of Record.Field.
const (
	FieldPattern = iota
	FieldTopic
	FieldSource
	FieldPrincipal
	FieldPayload
)

// Check reads the record of length n the host wrote, for a guest with
// handlers handlers, and answers 1 + its handler index, or 0 when the
// record is malformed (wrong version, n past the buffer, lengths that do
// not add up to n, or no such handler). Buf must hold at least
// InvocationHeader bytes: the header is read through an array of the
// header's length without a bounds check, the one use of unsafe outside
// the pointer conversions (a checked conversion is a branch, and in a Go
// guest every function with a branch costs an exit to the host per call:
// ≈ 150 ns more per no-op call in BenchmarkABINoop).
func (r *Record) Check(n int32, handlers int) uint32 {
	h := (*[InvocationHeader]byte)(unsafe.Pointer(unsafe.SliceData(r.Buf)))
	le := binary.LittleEndian
	o1 := uint64(InvocationHeader) + uint64(le.Uint32(h[8:]))
	o2 := o1 + uint64(le.Uint32(h[12:]))
	o3 := o2 + uint64(le.Uint32(h[16:]))
	o4 := o3 + uint64(le.Uint32(h[20:]))
	o5 := o4 + uint64(le.Uint32(h[24:]))
	handler := le.Uint32(h[4:])
	ok := B2U(le.Uint32(h[0:]) == Version) &
		B2U(n >= 0) & B2U(uint64(n) <= uint64(len(r.Buf))) & B2U(o5 == uint64(n)) &
		B2U(uint64(handler) < uint64(handlers))
	r.n = uint32(n) * ok
	r.off = [6]uint32{InvocationHeader * ok, uint32(o1) * ok, uint32(o2) * ok, uint32(o3) * ok, uint32(o4) * ok, uint32(o5) * ok}
	return (handler + 1) * ok
}

// Field is field i of the checked record, in place: it aliases Buf, which
// the host overwrites on the next call.
func (r *Record) Field(i int) []byte {
	return r.Buf[r.off[i]:r.off[i+1]:r.off[i+1]]
}

// B2U is 1 for true and 0 for false; the compiler makes it a select, not a
// branch.
func B2U(b bool) uint32 {
	var u uint32
	if b {
		u = 1
	}
	return u
}
