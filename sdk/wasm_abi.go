package sdk

import (
	"encoding/binary"
	"errors"

	"github.com/astrid-go/astrid/hostapi"
)

// The byte layouts of docs/abi.md that both sides of the wasm boundary share.
// They build on every platform so the host-independent parts are tested
// natively; the guest glue that uses them is in wasm_wasip1.go.

// ABIVersion is the version of docs/abi.md this sdk implements.
const ABIVersion = 1

// errorFlag marks a packed result carrying an error record.
const errorFlag = uint64(1) << 63

// PackResult packs a pointer and a length (and the error flag) into the i64
// every ABI call returns.
func PackResult(ptr, n uint32, isErr bool) uint64 {
	v := uint64(n&0x7fffffff)<<32 | uint64(ptr)
	if isErr {
		v |= errorFlag
	}
	return v
}

// UnpackResult splits a packed result.
func UnpackResult(v uint64) (ptr, n uint32, isErr bool) {
	return uint32(v), uint32(v>>32) & 0x7fffffff, v&errorFlag != 0
}

// EncodeInvocation lays inv out as the invocation record of docs/abi.md §4.
func EncodeInvocation(dst []byte, inv hostapi.Invocation) []byte {
	fields := [...]string{inv.Handler, inv.Pattern, inv.Topic, inv.SourceID, inv.Principal}
	dst = binary.LittleEndian.AppendUint32(dst, ABIVersion)
	for _, f := range fields {
		dst = binary.LittleEndian.AppendUint32(dst, uint32(len(f)))
	}
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(inv.Payload)))
	for _, f := range fields {
		dst = append(dst, f...)
	}
	return append(dst, inv.Payload...)
}

// InvocationSize is the length of inv's record.
func InvocationSize(inv hostapi.Invocation) int {
	return 7*4 + len(inv.Handler) + len(inv.Pattern) + len(inv.Topic) + len(inv.SourceID) + len(inv.Principal) + len(inv.Payload)
}

var errBadRecord = errors.New("malformed invocation record")

// DecodeInvocation parses an invocation record, copying everything out of
// rec (the host reuses the buffer).
func DecodeInvocation(rec []byte) (hostapi.Invocation, error) {
	if len(rec) < 28 || binary.LittleEndian.Uint32(rec) != ABIVersion {
		return hostapi.Invocation{}, errBadRecord
	}
	var lens [6]int
	total := 28
	for i := range lens {
		lens[i] = int(binary.LittleEndian.Uint32(rec[4+4*i:]))
		total += lens[i]
	}
	if total != len(rec) {
		return hostapi.Invocation{}, errBadRecord
	}
	off := 28
	next := func(i int) []byte {
		b := rec[off : off+lens[i]]
		off += lens[i]
		return b
	}
	inv := hostapi.Invocation{
		Handler:   string(next(0)),
		Pattern:   string(next(1)),
		Topic:     string(next(2)),
		SourceID:  string(next(3)),
		Principal: string(next(4)),
	}
	inv.Payload = append([]byte(nil), next(5)...)
	return inv, nil
}

// EncodeVerdict lays v out as the verdict record of docs/abi.md §4.
func EncodeVerdict(v hostapi.Verdict) []byte {
	out := make([]byte, 0, 8+len(v.Payload)+len(v.Reason))
	out = binary.LittleEndian.AppendUint32(out, uint32(v.Action))
	out = binary.LittleEndian.AppendUint32(out, uint32(len(v.Payload)))
	out = append(out, v.Payload...)
	return append(out, v.Reason...)
}

// DecodeVerdict parses a verdict record.
func DecodeVerdict(rec []byte) (hostapi.Verdict, error) {
	if len(rec) < 8 {
		return hostapi.Verdict{}, errors.New("verdict record shorter than 8 bytes")
	}
	n := binary.LittleEndian.Uint32(rec[4:])
	if uint64(n) > uint64(len(rec)-8) {
		return hostapi.Verdict{}, errors.New("verdict payload length past the record")
	}
	v := hostapi.Verdict{Action: hostapi.Action(binary.LittleEndian.Uint32(rec))}
	if v.Action > hostapi.Deny {
		return hostapi.Verdict{}, errors.New("verdict action is not 0, 1 or 2")
	}
	if n > 0 {
		v.Payload = append([]byte(nil), rec[8:8+n]...)
	}
	v.Reason = string(rec[8+n:])
	return v, nil
}

// EncodeError lays an error out as an error record: u32 code, then the
// message.
func EncodeError(dst []byte, err error) []byte {
	code := hostapi.CodeOf(err)
	if code == hostapi.CodeOK {
		code = hostapi.CodeInternal
	}
	dst = binary.LittleEndian.AppendUint32(dst, uint32(code))
	return append(dst, err.Error()...)
}

// DecodeError parses an error record. The message already names the
// operation (it is the host error's full text), so a wasm capsule sees the
// same error text as a native one.
func DecodeError(rec []byte) *hostapi.Error {
	if len(rec) < 4 {
		return &hostapi.Error{Code: hostapi.CodeInternal, Message: "malformed error record"}
	}
	return &hostapi.Error{Code: hostapi.Code(binary.LittleEndian.Uint32(rec)), Message: string(rec[4:])}
}
