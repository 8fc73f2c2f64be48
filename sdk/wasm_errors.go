package sdk

import (
	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/abi"
)

// The error records a wasm guest writes and reads (docs/abi.md §4),
// translated to and from hostapi's errors. They build on every platform so
// that they are tested natively.

// appendError appends err as an error record; an error without a code
// crosses as internal.
func appendError(dst []byte, err error) []byte {
	code := hostapi.CodeOf(err)
	if code == hostapi.CodeOK {
		code = hostapi.CodeInternal
	}
	return abi.AppendError(dst, uint32(code), err.Error())
}

// decodeError parses an error record. The message already names the
// operation (it is the host error's full text), so a wasm capsule sees the
// same error text as a native one.
func decodeError(rec []byte) *hostapi.Error {
	code, msg, ok := abi.DecodeError(rec)
	if !ok {
		return &hostapi.Error{Code: hostapi.CodeInternal, Message: "malformed error record"}
	}
	return &hostapi.Error{Code: hostapi.Code(code), Message: msg}
}
