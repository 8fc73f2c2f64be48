package abi

import (
	"encoding/binary"
	"errors"
)

// InvocationHeader is the fixed part of an invocation record: the version
// and six u32 fields.
const InvocationHeader = 7 * 4

// Invocation is what an invocation record carries besides the handler's
// index (docs/abi.md §4).
type Invocation struct {
	Pattern, Topic, SourceID, Principal string
	Payload                             []byte
}

// EncodeInvocation appends inv to dst as the invocation record of
// docs/abi.md §4. handler is the index of the handler in the guest's
// astrid_handlers list; the name itself does not cross (a guest finds its
// handler by index, so no string is compared or hashed on the hot path).
func EncodeInvocation(dst []byte, handler uint32, inv Invocation) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, Version)
	dst = binary.LittleEndian.AppendUint32(dst, handler)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(inv.Pattern)))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(inv.Topic)))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(inv.SourceID)))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(inv.Principal)))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(inv.Payload)))
	dst = append(dst, inv.Pattern...)
	dst = append(dst, inv.Topic...)
	dst = append(dst, inv.SourceID...)
	dst = append(dst, inv.Principal...)
	return append(dst, inv.Payload...)
}

// InvocationSize is the length of inv's record.
func InvocationSize(inv Invocation) int {
	return InvocationHeader + len(inv.Pattern) + len(inv.Topic) + len(inv.SourceID) + len(inv.Principal) + len(inv.Payload)
}

// ErrBadRecord is DecodeInvocation's answer to a malformed record.
var ErrBadRecord = errors.New("malformed invocation record")

// DecodeInvocation parses an invocation record into its handler index and
// fields, copying everything out of rec. It explains a record that
// Record.Check rejected, and decodes records natively.
func DecodeInvocation(rec []byte) (handler uint32, inv Invocation, err error) {
	if len(rec) < InvocationHeader || binary.LittleEndian.Uint32(rec) != Version {
		return 0, Invocation{}, ErrBadRecord
	}
	handler = binary.LittleEndian.Uint32(rec[4:])
	var off [6]uint64
	off[0] = InvocationHeader
	for i := range 5 {
		off[i+1] = off[i] + uint64(binary.LittleEndian.Uint32(rec[8+4*i:]))
	}
	if off[5] != uint64(len(rec)) {
		return 0, Invocation{}, ErrBadRecord
	}
	inv.Pattern = string(rec[off[0]:off[1]])
	inv.Topic = string(rec[off[1]:off[2]])
	inv.SourceID = string(rec[off[2]:off[3]])
	inv.Principal = string(rec[off[3]:off[4]])
	if off[5] > off[4] {
		inv.Payload = append([]byte(nil), rec[off[4]:]...)
	}
	return handler, inv, nil
}
